"""stemma's Delta Lake store: table schemas, staging, idempotent commits, recovery and queries.

Open it by name with ``stemma.core.store.open_store(kind="delta")`` or directly as
:class:`DeltaStore`; read what it holds with :func:`steps`, :func:`executions`,
:func:`artifacts` and :func:`lineage`.
"""

from stemma.storage.commit import commit_staged
from stemma.storage.delta_store import DeltaStore
from stemma.storage.errors import CommitConflictError, StagedBundleError, StorageError
from stemma.storage.queries import StoreRoot, artifacts, executions, lineage, steps
from stemma.storage.recovery import recover_staged
from stemma.storage.schemas import (
    ARTIFACT_EDGES,
    ARTIFACT_INDEX,
    COMMIT_ORDER,
    EXECUTION_EDGES,
    EXECUTIONS,
    FILE_REFS,
    METRICS,
    STEPS,
    TableSpec,
)
from stemma.storage.staging import stage_outcome

__all__ = [
    # The store
    "DeltaStore",
    # Staging and committing, for runners that split the two
    "stage_outcome",
    "commit_staged",
    "recover_staged",
    # Queries
    "StoreRoot",
    "steps",
    "executions",
    "artifacts",
    "lineage",
    # Tables
    "TableSpec",
    "ARTIFACT_INDEX",
    "METRICS",
    "FILE_REFS",
    "ARTIFACT_EDGES",
    "EXECUTION_EDGES",
    "EXECUTIONS",
    "STEPS",
    "COMMIT_ORDER",
    # Errors
    "StorageError",
    "StagedBundleError",
    "CommitConflictError",
]
