"""stemma.core: lazy step graphs over content-addressed artifacts, keyed, run and recorded.

Build a graph of cheap handles with :func:`apply`, inspect it with :func:`lower`, and build it
with :func:`run` or :func:`resolve`; results land in a store (Delta tables when stemma-storage
is installed, JSON records otherwise) under ``.stemma`` or ``$STEMMA_ROOT``.
"""

from stemma.core.api import plan, resolve, run
from stemma.core.artifact import Artifact
from stemma.core.canonical import canonical_json, to_canonical
from stemma.core.context import OUT, StepContext
from stemma.core.errors import (
    FingerprintMismatchError,
    InputsChangedError,
    LoweringError,
    StemmaError,
    StepCycleError,
    StepFailedError,
    StoreUnavailableError,
    UnfingerprintableError,
)
from stemma.core.explain import config_diff
from stemma.core.file_lock import FileLock
from stemma.core.file_store import FileStore
from stemma.core.identity import content_id, hash_canonical
from stemma.core.layout import RootLayout, resolve_root
from stemma.core.operation_steps import output_of
from stemma.core.records import (
    OutputRecord,
    Provenance,
    StepIdentity,
    StepOutcome,
    StepRecord,
    StepSkipped,
    StepStarted,
    StepStatus,
)
from stemma.core.runner import StepRunner
from stemma.core.step import ArtifactStep, apply
from stemma.core.step_planner import PlannedStep, StepPlanner
from stemma.core.step_spec import StepSpec, lower
from stemma.core.store import Store, available_stores, open_store

__all__ = [
    # building graphs lazily
    "OUT",
    "ArtifactStep",
    "StepContext",
    "apply",
    "output_of",
    # lowering and running
    "Artifact",
    "PlannedStep",
    "StepPlanner",
    "StepRunner",
    "StepSpec",
    "lower",
    "plan",
    "resolve",
    "run",
    # identity
    "canonical_json",
    "config_diff",
    "content_id",
    "hash_canonical",
    "to_canonical",
    # stores and records
    "FileLock",
    "FileStore",
    "OutputRecord",
    "Provenance",
    "RootLayout",
    "StepIdentity",
    "StepOutcome",
    "StepRecord",
    "StepSkipped",
    "StepStarted",
    "StepStatus",
    "Store",
    "available_stores",
    "open_store",
    "resolve_root",
    # errors
    "FingerprintMismatchError",
    "InputsChangedError",
    "LoweringError",
    "StemmaError",
    "StepCycleError",
    "StepFailedError",
    "StoreUnavailableError",
    "UnfingerprintableError",
]
