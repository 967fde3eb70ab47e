"""stemma-core's own PipelineStore: SQLite from the standard library, in ``{root}/core.sqlite``.

With it, stemma-core alone runs the Pipeline engine; stemma-storage adds Delta Lake and imports
what this store recorded. Open it by name with ``stemma.core.store.open_store(kind="sqlite")``
(the default when stemma-storage is not installed) or directly as :class:`SqliteStore`.

The names below load on first use (PEP 562): the dashboard imports
``stemma.core.sqlite_store.schema`` for the database's file name, and the store with its
readers and row codecs cost its first frame ~70 ms it has no use for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stemma.core.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from stemma.core.sqlite_store.store import SqliteStore
    from stemma.core.staging_problems import (
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
    "SqliteStore": "stemma.core.sqlite_store.store",
    "ProblemKind": "stemma.core.staging_problems",
    "StagedBundleError": "stemma.core.staging_problems",
    "StagingProblem": "stemma.core.staging_problems",
    "WaveReport": "stemma.core.staging_problems",
}


__getattr__ = lazy_getattr(__name__, _MODULES, globals())
