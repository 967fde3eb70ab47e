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
