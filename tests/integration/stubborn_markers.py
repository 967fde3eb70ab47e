"""Where stubborn units (``fault_operations.StubbornSlowCopy``) say they ignore SIGTERM.

Apart from ``fault_operations`` so a test can import it under any name: importing that module
twice, by two names, would register its operations twice.
"""

from pathlib import Path

STUBBORN_MARKERS_ENV = "STEMMA_TEST_STUBBORN_MARKERS"
"""A folder where each stubborn unit leaves ``{pid}`` once it ignores SIGTERM."""


def stubborn_units(folder: Path) -> list[str]:
    """The pids of the workers whose stubborn unit already ignores SIGTERM."""
    return sorted(path.name for path in folder.glob("*")) if folder.is_dir() else []


def every_worker_stubborn(folder: Path, workers: int = 2) -> bool:
    """Whether each of the pool's ``workers`` runs a stubborn unit that already ignores SIGTERM.

    A force press before then kills the worker whose unit is still starting: the pool breaks,
    every unit in flight settles as terminated, and the run ends at level 2 with its stubborn
    worker still alive, so a third press comes after the run stopped listening.
    """
    return len(stubborn_units(folder)) >= workers
