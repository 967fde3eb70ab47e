"""What each ``srun`` step of ``slurm-intra`` runs: ``python -m stemma.slurm.intra_step``.

It loads ``(fn, payload)`` from the input file, runs it (catching the unit's exception, like an
array element does), and writes the :class:`ElementResult` to the output file, atomically, so
the orchestrator never reads half of one.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    """``intra_step INPUT OUTPUT``: run the pickled unit and pickle its result."""
    from submitit.core.utils import cloudpickle_dump, pickle_load

    from stemma.slurm.element import run_element

    source, target = Path(argv[0]), Path(argv[1])
    fn, payload = pickle_load(source)
    result = run_element(fn, payload)
    partial = target.with_name(f"{target.name}.{os.getpid()}.part")
    cloudpickle_dump(result, partial)
    partial.replace(target)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
