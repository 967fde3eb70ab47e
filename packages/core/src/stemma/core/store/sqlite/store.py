"""The SQLite store: the RunStore of stemma-core alone, in ``{root}/core.sqlite``."""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stemma.core.execution_records import ExecutionRecord, StepEvent, StepOutputs
from stemma.core.records import StepRecord, StepStatus
from stemma.core.store.locations import RootLayout
from stemma.core.store.sqlite import execution_reads, lineage, step_reads
from stemma.core.store.sqlite.connections import Connections
from stemma.core.store.sqlite.event_rows import event_row
from stemma.core.store.sqlite.recovery import recover_staged
from stemma.core.store.sqlite.schema import DATABASE_FILE, STEP_COLUMNS, insert_sql
from stemma.core.store.sqlite.staged_packs import UnitKey, staged_pack
from stemma.core.store.sqlite.staging import stage_executions
from stemma.core.store.sqlite.wave_commit import commit_wave
from stemma.core.store.staging import problems as staging_problems
from stemma.core.store.staging.problems import WaveReport
from stemma.core.store.staging.worker_logs import note_worker_log

if TYPE_CHECKING:  # annotations only: opening a store must not load the operations (pydantic)
    from stemma.core.operations.drafts import FinalizedArtifact

_INSERT_STEP = insert_sql("steps", STEP_COLUMNS)


class SqliteStore:
    """Step events, executions, artifacts and lineage in one SQLite database under the root.

    The database is ``{root}/core.sqlite`` (WAL mode; one connection per thread and process);
    workers stage bundles of files under ``{root}/staging`` without touching it, and the
    orchestrator commits each wave of bundles in one transaction, idempotently, so a crash
    between staging and commit loses nothing (:meth:`recover` commits it later, once) and a
    crash during a commit changes nothing. Safe to share between threads and to open from
    several processes on one root at once, on one machine: the database must sit on a local
    filesystem (SQLite's WAL does not work over NFS or Lustre).

    Constructing a store does no I/O; the database is created by the first write.

    Args:
        root: the store root (see :func:`~stemma.core.store.locations.resolve_root`).
        staging_timeout: how long a commit waits, in seconds, for staged files that appear late
            (a shared filesystem); ``$STEMMA_STAGING_TIMEOUT`` when omitted, else 30.
        shared_filesystem: workers on other hosts stage into this root (a run on SLURM sets
            it from its backend): staged files are checked by opening and reading them, not by
            listing their directory (:mod:`stemma.core.store.staging.visibility`).

    Raises:
        ValueError: the staging timeout is negative or not a number.
    """

    kind = "sqlite"
    """The name ``open_store`` knows this store by."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        staging_timeout: float | None = None,
        shared_filesystem: bool = False,
    ) -> None:
        self._layout = RootLayout(Path(root).absolute())
        self._staging_timeout = staging_timeout  # as given: a pickled copy reads the env again
        self._timeout = staging_problems.staging_timeout(staging_timeout)
        self._shared = shared_filesystem
        self._connections = Connections(self._layout.root / DATABASE_FILE)

    def __repr__(self) -> str:
        return f"SqliteStore({str(self._layout.root)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # Connections belong to their thread and process: a copy opens its own.
        return (_reopen, (str(self._layout.root), self._staging_timeout, self._shared))

    @property
    def layout(self) -> RootLayout:
        """The directories under this store's root."""
        return self._layout

    @property
    def shared_filesystem(self) -> bool:
        """Whether staged files are checked by opening and reading them (a shared root)."""
        return self._shared

    def expect_shared_filesystem(self) -> None:
        """From now on, check staged files by opening and reading them, never by listing.

        A run whose backend stages from other hosts calls this; it is never undone, so a
        store shared by several runs checks carefully once any of them needs it.
        """
        self._shared = True

    @property
    def database(self) -> Path:
        """The database file: ``{root}/core.sqlite``."""
        return self._connections.path

    def close(self) -> None:
        """Close the calling thread's connection (it reopens if the store is used again)."""
        self._connections.close()

    def recover(self, step_name: str | None = None) -> int:
        """Commit every complete bundle left in staging; return how many this call committed.

        Incomplete bundles older than an hour (their writer died mid-way) are removed; bundles
        with an unreadable file are quarantined (``staging/.quarantine``), with a note in
        ``logs/failures/``.

        Args:
            step_name: only the bundles of steps with this name; all when omitted.
        """
        return recover_staged(
            self._layout, self._connections, step_name=step_name, shared=self._shared
        )

    def completed(self, fingerprints: Collection[str]) -> dict[str, StepRecord]:
        """The latest ``completed`` record of each of these fingerprints that has one."""
        return step_reads.completed_records(self._connections, fingerprints)

    def latest_by_name(self, name: str) -> StepRecord | None:
        """The most recent ``completed`` record of a step with this name, any fingerprint."""
        return step_reads.latest_completed_by_name(self._connections, name)

    # The Pipeline's side (stemma.core.store.RunStore)

    def record_events(self, events: Sequence[StepEvent]) -> None:
        """Append step events to the steps log in one transaction."""
        if not events:
            return
        with self._connections.writing() as connection:
            connection.executemany(_INSERT_STEP, [event_row(event) for event in events])

    def stage_execution(self, record: ExecutionRecord) -> Path:
        """Write one unit's bundle under ``staging/{N}_{step}/…`` and return it (workers call this).

        Raises:
            ArtifactTypeError: an artifact's fields or metadata are not plain JSON data.
        """
        return stage_executions(self._layout, [record])

    def stage_executions(self, records: Sequence[ExecutionRecord]) -> Path:
        """Write one bundle for a worker's pack of units of one step, and return it."""
        return stage_executions(self._layout, records)

    def note_worker_log(self, bundle: Path, execution_run_ids: Sequence[str], log: str) -> None:
        """Keep a scheduler's worker log beside a staged bundle, for ``executions.worker_log``.

        Raises:
            OSError: the bundle was committed already (or its directory is not writable).
        """
        note_worker_log(bundle, execution_run_ids, log)

    def staged_pack(
        self, step_number: int, step_name: str, units: Collection[UnitKey]
    ) -> dict[UnitKey, tuple[Path, ExecutionRecord]]:
        """Per unit found, the complete bundle of the step holding it and its staged record.

        What an orchestrator whose worker died asks before recording its pack as crashed
        (``stemma.core.store.staging.pack_reading.StagedPackReader``); see
        :mod:`stemma.core.store.sqlite.staged_packs`.
        """
        return staged_pack(self._layout, step_number, step_name, units)

    def commit_wave(
        self, bundles: Sequence[Path], *, step_outputs: StepOutputs | None = None
    ) -> WaveReport:
        """Commit staged bundles as one transaction, idempotently; say which it left out and why.

        Its ``committed`` is how many bundles this call committed (already committed ones are
        not counted). Late files are waited for with backoff up to the staging timeout; a bundle
        still incomplete then stays in staging (the next :meth:`recover` commits it), an
        unreadable one is quarantined; either way a note goes to ``logs/failures/`` and the rest
        commits. See :mod:`stemma.core.store.sqlite.wave_commit`.

        Raises:
            StagedBundleError: a path is not a bundle under this root's staging.
            sqlite3.Error: the transaction failed and was rolled back; the bundles stay.
        """
        return commit_wave(
            self._layout,
            self._connections,
            bundles,
            step_outputs,
            timeout=self._timeout,
            shared=self._shared,
        )

    def latest_step(self, step_spec_id: str, statuses: Collection[StepStatus]) -> StepEvent | None:
        """The newest event of this step fingerprint whose status is one of ``statuses``."""
        return step_reads.latest_step(self._connections, step_spec_id, statuses)

    def step_outputs(self, step_run_ids: Collection[str]) -> dict[str, dict[str, tuple[str, ...]]]:
        """Per step run, per role, the artifact ids it offers downstream."""
        return execution_reads.step_outputs(self._connections, step_run_ids)

    def executions_by_key(self, keys: Collection[str]) -> dict[str, ExecutionRecord]:
        """The newest successful execution of each execution key that has one (no content)."""
        return execution_reads.executions_by_key(self._connections, keys)

    def load_artifacts(
        self, artifact_ids: Collection[str], *, content: bool = True
    ) -> dict[str, FinalizedArtifact]:
        """Artifacts with their content (ids and metadata only with ``content=False``)."""
        return execution_reads.load_artifacts(self._connections, artifact_ids, content=content)

    def ancestry(self, artifact_ids: Collection[str]) -> dict[str, frozenset[str]]:
        """Each artifact's ancestors (itself included), walking lineage up."""
        return lineage.ancestry(self._connections, artifact_ids)

    def completed_steps(self) -> dict[str, StepEvent]:
        """The newest ``completed`` event of every step fingerprint: a step-cache index."""
        return step_reads.completed_steps(self._connections)

    def step_events(self, pipeline_run_id: str | None = None) -> list[StepEvent]:
        """Every step event of one run (all runs when omitted), oldest first."""
        return step_reads.step_events(self._connections, pipeline_run_id)

    def descendants(
        self, artifact_ids: Collection[str], artifact_type: str | None = None
    ) -> dict[str, frozenset[str]]:
        """Each artifact's descendants (itself excluded), walking lineage down, of one type."""
        return lineage.descendants(self._connections, artifact_ids, artifact_type)


def _reopen(root: str, timeout: float | None, shared: bool = False) -> SqliteStore:
    return SqliteStore(root, staging_timeout=timeout, shared_filesystem=shared)
