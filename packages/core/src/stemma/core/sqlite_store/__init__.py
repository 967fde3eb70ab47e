"""stemma-core's own PipelineStore: SQLite from the standard library, in ``{root}/core.sqlite``.

With it, stemma-core alone runs the Pipeline engine; stemma-storage adds Delta Lake and imports
what this store recorded. Open it by name with ``stemma.core.store.open_store(kind="sqlite")``
(the default when stemma-storage is not installed) or directly as :class:`SqliteStore`.
"""

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
