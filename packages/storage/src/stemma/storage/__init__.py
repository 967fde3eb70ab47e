"""stemma's Delta Lake store: table schemas, staging, idempotent commits, recovery and queries.

Open it by name with ``stemma.core.store.open_store(kind="delta")`` or directly as
:class:`DeltaStore`; read what it holds with :func:`steps`, :func:`executions`,
:func:`artifacts` and :func:`lineage`.

Names are imported on first use (PEP 562): a worker process that only stages a bundle
(:mod:`stemma.storage.worker_store`) imports neither deltalake nor pyarrow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stemma.core.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from stemma.storage.auto_compaction import AutoCompaction
    from stemma.storage.check_findings import CheckReport, Finding, Problem, Severity
    from stemma.storage.commit import commit_staged
    from stemma.storage.compaction_policy import CompactionPolicy
    from stemma.storage.delta_store import DeltaStore
    from stemma.storage.errors import (
        CommitConflictError,
        DamagedTableError,
        StagedBundleError,
        StorageError,
    )
    from stemma.storage.input_file_lineage import PathsNotRecordedWarning
    from stemma.storage.maintenance import (
        Compaction,
        LiveRunError,
        MaintenanceError,
        VacuumReport,
        compact_root,
        vacuum_root,
    )
    from stemma.storage.queries import StoreRoot, artifacts, executions, lineage, steps
    from stemma.storage.recovery import recover_staged
    from stemma.storage.root_check import check_root
    from stemma.storage.schemas import (
        ARTIFACT_EDGES,
        ARTIFACT_INDEX,
        COMMIT_ORDER,
        CONFIGS,
        DATA,
        EXECUTION_EDGES,
        EXECUTIONS,
        FILE_REFS,
        METRICS,
        STEP_OUTPUTS,
        STEPS,
        TableSpec,
    )
    from stemma.storage.staging import stage_execution
    from stemma.storage.staging_checks import (
        DEFAULT_STAGING_TIMEOUT,
        STAGING_TIMEOUT_ENV,
        ProblemKind,
        StagingProblem,
        WaveReport,
    )
    from stemma.storage.waves import commit_wave, commit_wave_report

__all__ = [
    # The store, and the compaction it runs after its commits (DeltaStore(compact=...))
    "DeltaStore",
    "CompactionPolicy",
    "AutoCompaction",
    # Staging and committing, for runners that split the two (commit_staged: one bundle alone)
    "stage_execution",
    "commit_staged",
    "commit_wave",
    "commit_wave_report",
    "recover_staged",
    # What a commit left out (corrupt or late staged files)
    "WaveReport",
    "StagingProblem",
    "ProblemKind",
    "STAGING_TIMEOUT_ENV",
    "DEFAULT_STAGING_TIMEOUT",
    # Upkeep of a root (stemma compact / stemma vacuum)
    "compact_root",
    "vacuum_root",
    "Compaction",
    "VacuumReport",
    # Checking a root (stemma check): each problem with its file and fix, safe repairs
    "check_root",
    "CheckReport",
    "Finding",
    "Problem",
    "Severity",
    # Queries
    "StoreRoot",
    "steps",
    "executions",
    "artifacts",
    "lineage",
    "PathsNotRecordedWarning",
    # Tables
    "TableSpec",
    "ARTIFACT_INDEX",
    "DATA",
    "METRICS",
    "CONFIGS",
    "FILE_REFS",
    "ARTIFACT_EDGES",
    "EXECUTION_EDGES",
    "EXECUTIONS",
    "STEP_OUTPUTS",
    "STEPS",
    "COMMIT_ORDER",
    # Errors
    "StorageError",
    "StagedBundleError",
    "CommitConflictError",
    "DamagedTableError",
    "MaintenanceError",
    "LiveRunError",
]

_HOMES: dict[str, str] = {
    "CheckReport": "stemma.storage.check_findings",
    "Finding": "stemma.storage.check_findings",
    "Problem": "stemma.storage.check_findings",
    "Severity": "stemma.storage.check_findings",
    "AutoCompaction": "stemma.storage.auto_compaction",
    "commit_staged": "stemma.storage.commit",
    "CompactionPolicy": "stemma.storage.compaction_policy",
    "DeltaStore": "stemma.storage.delta_store",
    "CommitConflictError": "stemma.storage.errors",
    "DamagedTableError": "stemma.storage.errors",
    "StagedBundleError": "stemma.storage.errors",
    "StorageError": "stemma.storage.errors",
    "Compaction": "stemma.storage.maintenance",
    "LiveRunError": "stemma.storage.maintenance",
    "MaintenanceError": "stemma.storage.maintenance",
    "VacuumReport": "stemma.storage.maintenance",
    "compact_root": "stemma.storage.maintenance",
    "vacuum_root": "stemma.storage.maintenance",
    "PathsNotRecordedWarning": "stemma.storage.input_file_lineage",
    "StoreRoot": "stemma.storage.queries",
    "artifacts": "stemma.storage.queries",
    "executions": "stemma.storage.queries",
    "lineage": "stemma.storage.queries",
    "steps": "stemma.storage.queries",
    "recover_staged": "stemma.storage.recovery",
    "check_root": "stemma.storage.root_check",
    "ARTIFACT_EDGES": "stemma.storage.schemas",
    "ARTIFACT_INDEX": "stemma.storage.schemas",
    "COMMIT_ORDER": "stemma.storage.schemas",
    "CONFIGS": "stemma.storage.schemas",
    "DATA": "stemma.storage.schemas",
    "EXECUTION_EDGES": "stemma.storage.schemas",
    "EXECUTIONS": "stemma.storage.schemas",
    "FILE_REFS": "stemma.storage.schemas",
    "METRICS": "stemma.storage.schemas",
    "STEP_OUTPUTS": "stemma.storage.schemas",
    "STEPS": "stemma.storage.schemas",
    "TableSpec": "stemma.storage.schemas",
    "stage_execution": "stemma.storage.staging",
    "DEFAULT_STAGING_TIMEOUT": "stemma.storage.staging_checks",
    "STAGING_TIMEOUT_ENV": "stemma.storage.staging_checks",
    "ProblemKind": "stemma.storage.staging_checks",
    "StagingProblem": "stemma.storage.staging_checks",
    "WaveReport": "stemma.storage.staging_checks",
    "commit_wave": "stemma.storage.waves",
    "commit_wave_report": "stemma.storage.waves",
}
"""Each public name's module."""


__getattr__ = lazy_getattr(__name__, _HOMES, globals())
