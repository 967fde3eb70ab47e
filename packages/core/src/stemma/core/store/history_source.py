"""Which store a root's history is in, told from the root's contents, for every reader.

A root stemma-core alone built keeps its history in ``{root}/core.sqlite``; the Delta store of
stemma-storage keeps it in ``{root}/delta``, and on its first ``recover()`` on a root holding
``core.sqlite`` imports it, once, recording that in ``delta/core-sqlite-import.json``
(:mod:`stemma.storage.sqlite_import`). So until that marker is written, ``core.sqlite`` is the
whole history (any Delta tables beside it are an import under way, or a store opened and never
written), and after it the Delta tables are: exactly what a run on that root would see once it
has imported.

The read-only commands (``explain``, ``plan``, ``status``, ``runs``, ``artifacts``, ``lineage``)
and the dashboard all choose with :func:`history_kind`, whatever ``$STEMMA_STORE`` says (it
chooses where new runs write), so one root answers the same everywhere. None of them imports:
a read never writes to the root.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from stemma.core.errors import StoreUnavailableError
from stemma.core.store.local_half import object_root_of
from stemma.core.store.locations import resolve_root
from stemma.core.store.opening import STORE_ENV, open_run_store
from stemma.core.store.protocols import RunStore
from stemma.core.store.sqlite.schema import DATABASE_FILE as SQLITE_FILE

SQLITE_IMPORT_MARKER = "core-sqlite-import.json"
"""The file under ``{root}/delta`` recording that ``core.sqlite`` was imported into Delta."""

HistoryKind = Literal["sqlite", "delta"]
_BUILT_IN = ("sqlite", "delta")


def history_kind(root: str | os.PathLike[str]) -> HistoryKind | None:
    """Where ``root``'s history is: ``"sqlite"``, ``"delta"``, or None when it has none yet.

    ``core.sqlite`` present and not imported (no ``delta/core-sqlite-import.json``) is
    ``"sqlite"``; otherwise a ``delta/`` directory is ``"delta"``. Two ``stat`` calls. The
    local half of a root in an object store is ``"delta"``: whether its bucket holds anything
    yet would cost a request to know, and another machine may have filled it.
    """
    path = Path(root)
    if object_root_of(path) is not None:
        return "delta"
    delta = path / "delta"
    if (path / SQLITE_FILE).is_file() and not (delta / SQLITE_IMPORT_MARKER).is_file():
        return "sqlite"
    return "delta" if delta.is_dir() else None


def nothing_built(root: str | os.PathLike[str] | None) -> bool:
    """True when a new run on ``root`` can find nothing built: every step it asks for executes.

    That is a root with no history yet, opened with a built-in store (one that ``$STEMMA_STORE``
    names otherwise may keep its history elsewhere). A few ``stat`` calls; nothing is created.
    """
    named = os.environ.get(STORE_ENV)
    if named and named not in _BUILT_IN:
        return False
    return history_kind(resolve_root(root)) is None


def open_history_store(root: str | os.PathLike[str]) -> RunStore | None:
    """The store holding ``root``'s history, opened to read; None when there is none to read.

    A root with no history yet is not opened (opening a store may create its directories).
    A store that ``$STEMMA_STORE`` names other than the two built-in ones keeps its history
    where it likes, so on a root with neither it is opened. None too when the store the
    history is in is not installed (a Delta root read with stemma-core alone) or cannot serve
    the engine.
    """
    kind: str | None = history_kind(root)
    named = os.environ.get(STORE_ENV)
    if kind is None and named and named not in _BUILT_IN:
        kind = named
    if kind is None:
        return None
    try:
        return open_run_store(root, kind=kind)
    except StoreUnavailableError:
        return None
