"""stemma-core's own RunStore: SQLite from the standard library, in ``{root}/core.sqlite``.

With it, stemma-core alone runs the Pipeline engine; stemma-storage adds Delta Lake and imports
what this store recorded. Open it by name with ``stemma.core.store.open_store(kind="sqlite")``
(the default when stemma-storage is not installed) or directly as :class:`SqliteStore`.

The names below load on first use (PEP 562): the dashboard imports
``stemma.core.store.sqlite.schema`` for the database's file name, and the store with its
readers and row codecs cost its first frame ~70 ms it has no use for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stemma.core.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from stemma.core.store.sqlite.store import SqliteStore
    from stemma.core.store.staging.problems import (
        ProblemKind,
        StagedBundleError,
        StagingProblem,
        WaveReport,
    )

__all__ = [
    "ProblemKind",
    "SqliteStore",
    "StagedBundleError",
    "StagingProblem",
    "WaveReport",
]

_MODULES = {
    "SqliteStore": "stemma.core.store.sqlite.store",
    "ProblemKind": "stemma.core.store.staging.problems",
    "StagedBundleError": "stemma.core.store.staging.problems",
    "StagingProblem": "stemma.core.store.staging.problems",
    "WaveReport": "stemma.core.store.staging.problems",
}


__getattr__ = lazy_getattr(__name__, _MODULES, globals())
