"""Whether a file looks like Parquet at all: there, readable, and ``PAR1`` at both ends.

The cheap first look at a damaged table's data file, shared by ``stemma check`` (which then
reads the footer) and the dashboard (which must not load pyarrow for it): standard library only.
"""

from __future__ import annotations

from pathlib import Path

MAGIC = b"PAR1"
"""What a Parquet file starts and ends with."""


def parquet_marks_problem(path: Path) -> str | None:
    """What is wrong with ``path`` as a Parquet file at a glance; None if it has both marks."""
    try:
        with path.open("rb") as handle:
            head = handle.read(len(MAGIC))
            size = handle.seek(0, 2)
            handle.seek(max(0, size - len(MAGIC)))
            tail = handle.read(len(MAGIC))
    except FileNotFoundError:
        return "is missing (the table's log still lists it)"
    except OSError as err:
        return f"cannot be read ({err.strerror or err})"
    if head != MAGIC or tail != MAGIC:
        return f"is not Parquet ({size} bytes, no PAR1 marks)"
    return None
