"""The data files a Delta table's log lists, looked at before polars or delta-rs reads them.

polars' Delta scan trusts the size each file has in the table's log: a file overwritten or cut
short makes it read past the file's end and *panic*, and the panic's text (with
``RUST_BACKTRACE=1``, a backtrace) reaches the user's stderr from native code before any Python
handler runs. So every read of a table first looks at each file it lists
(:func:`~stemma.core.store.parquet_marks.first_unsound`: one ``stat`` per file, and 12 bytes
read of a file not seen before or changed since), and a file found wrong stops the read with a
:class:`~stemma.storage.errors.DamagedTableError` naming it, before anything native touches it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import cast
from urllib.parse import unquote

from deltalake import DeltaTable

from stemma.core.store.locations import RootLayout
from stemma.core.store.parquet_marks import first_unsound
from stemma.storage.errors import DamagedTableError


def logged_files(table: DeltaTable, directory: Path) -> list[tuple[str, int | None]]:
    """Each data file ``table``'s log lists: its local path and the size the log records.

    Args:
        table: the table, opened.
        directory: the table's directory (its log's paths are relative to it).
    """
    base = str(directory)
    return [(_local(base, path), size) for path, size in logged_paths(table)]


def logged_paths(table: DeltaTable) -> list[tuple[str, int | None]]:
    """Each data file ``table``'s log lists, as the log says it, and the size it records.

    A path is relative to the table and URL-escaped (rarely a whole URI); no request is made:
    the log is what opening the table read.
    """
    actions = table.get_add_actions(flatten=False)
    # (arro3's stubs say an ndarray; to_pylist gives a list)
    paths = cast("list[str]", actions.column("path").to_pylist())  # pyright: ignore[reportUnknownMemberType]
    sizes = cast("list[int | None]", actions.column("size_bytes").to_pylist())  # pyright: ignore[reportUnknownMemberType]
    return list(zip(paths, sizes, strict=True))


def check_data_files(layout: RootLayout, name: str, table: DeltaTable) -> None:
    """Look at every data file of table ``name`` before it is read; stop at a damaged one.

    Raises:
        DamagedTableError: a file the log lists is missing, not Parquet, or not the size the
            log records; the message names the file.
    """
    directory = layout.delta / name
    found = first_unsound(logged_files(table, directory))
    if found is not None:
        path, problem = found
        shown = _shown(path, directory)
        raise DamagedTableError(name, layout.root, f"its data file {shown} {problem}")


def _local(directory: str, logged: str) -> str:
    """A path of the log (URL-escaped, relative to the table, or rarely a whole URI) as a file.

    String work, not :class:`~pathlib.Path`: a busy table lists thousands of files.
    """
    path = logged.removeprefix("file://")
    if "%" in path:
        path = unquote(path)
    return os.path.join(directory, path)  # an absolute path stays itself


def _shown(path: str, directory: Path) -> str:
    try:
        return Path(path).relative_to(directory).as_posix()
    except ValueError:
        return path
