"""The Delta Lake store: stemma's default Store, and the RunStore the Pipeline runs on."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from stemma.core.crash_points import crash_point
from stemma.core.execution_records import ExecutionRecord, StepEvent, StepOutputs
from stemma.core.file_lock import FileLock
from stemma.core.operations.drafts import FinalizedArtifact
from stemma.core.records import StepRecord, StepStatus
from stemma.core.store.locations import RootLayout, resolve_root
from stemma.core.store.staging.worker_logs import note_worker_log
from stemma.storage import output_mirror, pipeline_queries, staging_checks
from stemma.storage.auto_compaction import AutoCompaction, auto_compaction
from stemma.storage.bucket_leases import BucketLease
from stemma.storage.bucket_writes import BucketWrites
from stemma.storage.compaction_policy import CompactionPolicy
from stemma.storage.execution_rows import event_frame
from stemma.storage.object_roots import check_reachable
from stemma.storage.recovery import recover_staged
from stemma.storage.schemas import STEPS
from stemma.storage.sqlite_import import import_core_records
from stemma.storage.staged_packs import UnitKey, staged_pack
from stemma.storage.staging import stage_execution, stage_executions
from stemma.storage.staging_checks import WaveReport
from stemma.storage.step_records import completed_records, latest_completed_by_name
from stemma.storage.table_damage import committing, reading
from stemma.storage.tables import append_rows
from stemma.storage.wave_chunks import commit_chunk_rows
from stemma.storage.waves import commit_wave_report


class DeltaStore(output_mirror.KeepsOutputs):
    """Step events, executions, artifacts and provenance in Delta tables under ``{root}/delta``.

    Safe to share between threads and to open from several processes on one root: every table
    write holds that table's file lock, and every execution is staged before it is committed, so a
    crash between the two loses nothing (:meth:`recover` commits it later, once).

    Constructing a store does no I/O; tables are created when first written.

    Args:
        root: the store root (see :func:`~stemma.core.store.locations.resolve_root`).
        staging_timeout: how long a commit waits, in seconds, for staged files that appear late
            (a shared filesystem); ``$STEMMA_STAGING_TIMEOUT`` when omitted, else 30.
        shared_filesystem: workers on other hosts stage into this root (a run on SLURM sets
            it from its backend): staged files are checked by opening and reading them, not by
            listing their directory (:mod:`stemma.core.store.staging.visibility`).
        compact: whether tables are compacted in the background after commits, once they hold
            enough small files: ``False`` never, ``True`` as by default, a
            :class:`~stemma.storage.compaction_policy.CompactionPolicy` to say when; omitted,
            ``$STEMMA_COMPACT`` (``on`` or ``off``, default on) and
            ``$STEMMA_COMPACT_SMALL_FILES`` (default 100; 16 on a root in an object store)
            say (:mod:`stemma.storage.auto_compaction`).

    Raises:
        ValueError: the staging timeout is negative or not a number,
            ``$STEMMA_COMMIT_CHUNK_ROWS`` is not a positive whole number, or a compaction
            variable holds something it cannot be (checked here, so a bad value stops the run
            before anything is staged, not half-way through a commit).
    """

    kind = "delta"
    """The name ``open_store`` knows this store by."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        staging_timeout: float | None = None,
        shared_filesystem: bool = False,
        compact: bool | CompactionPolicy | None = None,
    ) -> None:
        self._layout = RootLayout(resolve_root(root))
        self._staging_timeout = staging_checks.staging_timeout(staging_timeout)
        self._shared = shared_filesystem
        self._reached = False
        self._writes = BucketWrites(self._layout)  # (a bucket's credentials may only read)
        commit_chunk_rows()
        self._compact = compact  # as given: a pickled copy reads the environment again
        self._compaction = auto_compaction(self._layout, compact)

    def __repr__(self) -> str:
        return f"DeltaStore({self._layout.shown!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # A copy runs its own compactions (a thread and its locks do not pickle).
        return (_reopen, (self._layout.shown, self._staging_timeout, self._shared, self._compact))

    @property
    def layout(self) -> RootLayout:
        """The directories under this store's root."""
        return self._layout

    @property
    def shared_filesystem(self) -> bool:
        """Whether staged files are checked by opening and reading them (a shared root)."""
        return self._shared

    @property
    def compaction(self) -> AutoCompaction | None:
        """The compactions this store runs after its commits; ``None`` when it runs none.

        ``store.compaction.wait()`` waits for the one under way (a script need not: its end
        lets it finish); ``store.compaction.compactions`` lists those made.
        """
        return self._compaction

    def expect_shared_filesystem(self) -> None:
        """From now on, check staged files by opening and reading them, never by listing.

        A run whose backend stages from other hosts calls this; it is never undone, so a
        store shared by several runs checks carefully once any of them needs it.
        """
        self._shared = True

    def recover(self, step_name: str | None = None) -> int:
        """Commit every complete bundle left in staging; return how many this call committed.

        Incomplete bundles older than an hour (their writer died mid-way) are deleted; bundles
        with an unreadable file are quarantined (``staging/.quarantine``), with a note in
        ``logs/failures/``. On a root stemma-core built alone, what it recorded in
        ``core.sqlite`` is imported into the Delta tables first, once
        (:mod:`stemma.storage.sqlite_import`).

        Args:
            step_name: only the bundles of steps with this name; all when omitted.
        """
        if not self._reached:  # a root in a bucket: said in one line before any work is sent
            check_reachable(self._layout)
            self._reached = True
        with committing(self._layout):  # a damaged table: said once, the work kept staged
            import_core_records(self._layout)
            recovered = self._writes.unless_read_only(  # (read-only: left staged for a writer)
                lambda: recover_staged(self._layout, step_name=step_name, shared=self._shared),
                "what crashed runs staged",
            )
            return recovered or 0

    def completed(self, fingerprints: Collection[str]) -> dict[str, StepRecord]:
        """The latest ``completed`` record of each of these fingerprints that has one."""
        return completed_records(self._layout, fingerprints)

    def latest_by_name(self, name: str) -> StepRecord | None:
        """The most recent ``completed`` record of a step with this name, any fingerprint."""
        return latest_completed_by_name(self._layout, name)

    # The Pipeline's side (stemma.core.store.RunStore)

    def record_events(self, events: Sequence[StepEvent]) -> None:
        """Append step events to the steps log in one commit (extra detail in ``metadata``).

        On a bucket these credentials may only read, nothing (as on a read-only local root):
        what reaches here then is a cache hit's event, a step that must run being refused
        before it starts (:meth:`refuse_if_unwritable`).
        """
        if events:
            with reading(self._layout, STEPS):
                self._writes.unless_read_only(
                    lambda: append_rows(self._layout, STEPS, event_frame(list(events))),
                    f"{len(events)} step event(s)",
                )
            crash_point("delta.append.orchestration.steps")

    def stage_executions(self, records: Sequence[ExecutionRecord]) -> Path:
        """Write one bundle for a worker's pack of units of one step, and return it."""
        return stage_executions(self._layout, records)

    def stage_execution(self, record: ExecutionRecord) -> Path:
        """Write one unit's bundle under ``staging/{N}_{step}/…`` and return it (workers call this).

        Raises:
            ArtifactTypeError: an artifact's type is not registered in this process.
        """
        return stage_execution(self._layout, record)

    def step_lease(self, fingerprint: str) -> FileLock | BucketLease:
        """The lease a run takes before building step key ``fingerprint``.

        On a filesystem, a lock file under ``locks/`` (``flock``: dropped when its holder
        dies); on a root in an object store, an object in the bucket kept by conditional writes
        and a heartbeat (:mod:`stemma.storage.bucket_leases`), so runners on different machines
        build a key once.

        With credentials that may only read the bucket, a key built there gets this machine's
        lock alone (the engine then looks again and finds it: a function step built elsewhere
        is looked for only under its lease), and any other is refused before its lease.

        Raises:
            ReadOnlyRootError: the key is not built and these credentials may not write.
        """
        local = FileLock(self._layout.locks / fingerprint[:2] / f"{fingerprint}.step.lock")
        if self._layout.store is None:
            return local
        if self._writes.denied() is not None and self.latest_step(
            fingerprint, [StepStatus.COMPLETED]
        ):
            return local
        self.refuse_if_unwritable(f"a step that must run (key {fingerprint[:12]})")
        return BucketLease(self._layout, fingerprint)

    def refuse_if_unwritable(self, what: str) -> None:
        """Raise before ``what`` starts if these credentials may not write the root's bucket.

        Found by one write probe the first time a step must run
        (:mod:`stemma.storage.bucket_writes`); a root on a filesystem is never probed here.

        Raises:
            ReadOnlyRootError: they may not; the message names the root and the permission.
            RootURLError: the probe could not reach the store.
        """
        self._writes.refuse(what)

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
        :mod:`stemma.storage.staged_packs`.
        """
        return staged_pack(self._layout, step_number, step_name, units)

    def commit_wave(
        self, bundles: Sequence[Path], *, step_outputs: StepOutputs | None = None
    ) -> WaveReport:
        """Commit staged bundles as one wave, idempotently; say which it left out and why.

        One Delta append per table. Its ``committed`` is how many bundles this call committed
        (already committed ones are not counted). Late files are waited for with backoff up to
        the staging timeout; a bundle still incomplete then stays in staging (the next
        :meth:`recover` commits it), an unreadable one is quarantined; either way a note goes to
        ``logs/failures/`` and the rest commits.
        See :mod:`stemma.storage.waves` for how a crash at any point is recovered, once.
        Once committed, the tables that hold enough small files are compacted in the
        background (:attr:`compaction`); this call does not wait for it.

        Raises:
            StagedBundleError: a path is not a bundle under this root's staging.
            CommitConflictError: a table kept conflicting; :meth:`recover` finishes the wave.
            DamagedTableError: a table cannot be read; the bundles stay staged, and the next
                :meth:`recover` after its repair commits them.
        """
        with committing(self._layout):  # a damaged table: said once, the work kept staged
            report = commit_wave_report(
                self._layout,
                bundles,
                step_outputs,
                timeout=self._staging_timeout,
                shared=self._shared,
            )
        if self._compaction is not None:
            self._compaction.after_commit()  # in the background: the wave is already returned
        return report

    def latest_step(self, step_spec_id: str, statuses: Collection[StepStatus]) -> StepEvent | None:
        """The newest event of this step fingerprint whose status is one of ``statuses``."""
        return pipeline_queries.latest_step(self._layout, step_spec_id, statuses)

    def step_outputs(self, step_run_ids: Collection[str]) -> dict[str, dict[str, tuple[str, ...]]]:
        """Per step run, per role, the artifact ids it offers downstream."""
        return pipeline_queries.step_outputs(self._layout, step_run_ids)

    def executions_by_key(self, keys: Collection[str]) -> dict[str, ExecutionRecord]:
        """The newest successful execution of each execution key that has one (no content)."""
        return pipeline_queries.executions_by_key(self._layout, keys)

    def load_artifacts(
        self, artifact_ids: Collection[str], *, content: bool = True
    ) -> dict[str, FinalizedArtifact]:
        """Artifacts from each type's table (content column unread if not ``content``)."""
        return pipeline_queries.load_artifacts(self._layout, artifact_ids, content=content)

    def load_contents(self, rows: Mapping[str, FinalizedArtifact]) -> dict[str, FinalizedArtifact]:
        """``rows`` (read without content) with their contents, each table's content alone read.

        (:func:`~stemma.storage.pipeline_queries.contents_of`: the orchestrator's read of a
        window's small inputs, which it ships with their units.)
        """
        return pipeline_queries.contents_of(self._layout, rows)

    def ancestry(self, artifact_ids: Collection[str]) -> dict[str, frozenset[str]]:
        """Each artifact's ancestors (itself included), walking lineage up."""
        return pipeline_queries.ancestry(self._layout, artifact_ids)

    def completed_steps(self) -> dict[str, StepEvent]:
        """The newest ``completed`` event of every step fingerprint: a step-cache index."""
        return pipeline_queries.completed_steps(self._layout)

    def step_events(self, pipeline_run_id: str | None = None) -> list[StepEvent]:
        """Every step event of one run (all runs when omitted), oldest first."""
        return pipeline_queries.step_events(self._layout, pipeline_run_id)

    def descendants(
        self, artifact_ids: Collection[str], artifact_type: str | None = None
    ) -> dict[str, frozenset[str]]:
        """Each artifact's descendants (itself excluded), walking lineage down, of one type."""
        return pipeline_queries.descendants(self._layout, artifact_ids, artifact_type)


def _reopen(
    root: str, staging_timeout: float | None, shared: bool, compact: bool | CompactionPolicy | None
) -> DeltaStore:
    return DeltaStore(
        root, staging_timeout=staging_timeout, shared_filesystem=shared, compact=compact
    )
