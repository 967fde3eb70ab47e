"""Demo operations for ``stemma demo``, the tutorials and the tests: not part of stemma's API.

They are importable by name (a spawned worker or a SLURM job imports an operation's module),
which is why they ship in the package; nothing else in stemma imports them. Their names are
``example.*`` in the operation registry.
"""

from stemma.core.examples.composites import TransformThenScore
from stemma.core.examples.operations import (
    Combine,
    CombineAll,
    CopyUnlessRefused,
    DataGenerator,
    Fail,
    FailWhileMarked,
    MetricCalculator,
    SlowCopy,
    SlowScale,
    Transform,
    Wait,
)

__all__ = [
    "Combine",
    "CombineAll",
    "CopyUnlessRefused",
    "DataGenerator",
    "Fail",
    "FailWhileMarked",
    "MetricCalculator",
    "SlowCopy",
    "SlowScale",
    "Transform",
    "TransformThenScore",
    "Wait",
]
