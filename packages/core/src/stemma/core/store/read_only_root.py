"""A root this process cannot write: answered from, never written to.

A root on a read-only mount (a published results directory, a snapshot) or owned by someone
else can still answer everything already built there: a rerun whose every step is cached. What
must run cannot: it writes its lease under ``locks/``, its events, its staged bundle, its commit.
So the decision is made once, when a run opens its store
(:func:`~stemma.core.store.open_run_store`): a root with a place this process cannot write
(:meth:`~stemma.core.store.locations.RootLayout.unwritable`) is wrapped in a
:class:`ReadOnlyRootStore` (so is one passed in, when the run's context is opened). It reads
through to the real store and never writes: ``recover()`` commits nothing, events are not recorded
(a cache hit's: there is nowhere to record it), and a step that must run is refused where every
such step passes before anything of it is written — its lease (a step that caches) or its unit
being made for a worker (one that does not) — with a
:class:`~stemma.core.errors.ReadOnlyRootError` naming the path and what to do
(:func:`refuse_to_run`). Staging and commits raise the same error, should anything get there.

A root in an object store is the other case: its local half is writable, but the credentials
may read the bucket and not write it, which no ``stat`` can tell. Its store answers
:class:`RefusesWrites` (stemma-storage's Delta store does, by a write probe made only when a
step must run: a fully cached rerun makes no request for it), and :func:`refuse_to_run`, and
the lease the store hands out, ask it at the same points; core has no object-store code.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from stemma.core.errors import ReadOnlyRootError
from stemma.core.execution_records import ExecutionRecord, StepEvent, StepOutputs
from stemma.core.records import StepRecord, StepStatus
from stemma.core.store.locations import RootLayout

if TYPE_CHECKING:  # annotations only: opening a store must not load the operations (pydantic)
    from stemma.core.operations.drafts import FinalizedArtifact
    from stemma.core.store.protocols import RunStore, WaveOutcome

log = logging.getLogger("stemma.core.store.read_only_root")


def read_only_error(root: Path, path: Path, what: str) -> ReadOnlyRootError:
    """The error for ``what`` (a step to run, a bundle to stage) on a root that is read-only."""
    return ReadOnlyRootError(
        f"{what} must write under the stemma root {root}, but {path} cannot be written "
        "(a read-only mount, or no write permission for this user). Steps already built there "
        "are answered from it; to build this one, give the run a root you can write "
        "(root=..., $STEMMA_ROOT, or stemma --root), for example a copy of this one, or make "
        f"{path} writable",
        root=root,
        path=path,
    )


@runtime_checkable
class RefusesWrites(Protocol):
    """A store that can tell, only when asked, that its root cannot be written by this process.

    A root in an object store reached with credentials that may read but not write: the
    answer costs requests (stemma-storage probes with one write), so it is asked once a step
    must run, never on opening the store.
    """

    def refuse_if_unwritable(self, what: str) -> None:
        """Raise before ``what`` (a step, a unit) starts if this root cannot be written.

        Raises:
            ReadOnlyRootError: it cannot; the message names the root and what to do.
        """
        ...


def refuse_to_run(store: object, what: str) -> None:
    """Raise before ``what`` starts if ``store`` is a read-only root's.

    A local root found read-only when the store was opened, or a store that finds out when
    asked (:class:`RefusesWrites`: a bucket whose credentials may only read).

    Raises:
        ReadOnlyRootError: it is; the message names the path (or URL) and what to do.
    """
    if isinstance(store, ReadOnlyRootStore):
        raise read_only_error(store.layout.root, store.unwritable, what)
    if isinstance(store, RefusesWrites):
        store.refuse_if_unwritable(what)


class ReadOnlyRootStore:
    """A store on a root this process cannot write: every read passes through, no write does."""

    def __init__(self, store: RunStore, unwritable: Path) -> None:
        """Wrap ``store``, whose root cannot be written at ``unwritable``."""
        self._store = store
        self.unwritable = unwritable
        """The place under the root that cannot be written (the root itself, or a directory)."""

    def __repr__(self) -> str:
        return f"ReadOnlyRootStore({self._store!r})"

    @property
    def kind(self) -> str:
        """The wrapped store's kind (what ``open_store`` knows it by)."""
        return str(getattr(self._store, "kind", "")) or type(self._store).__name__

    @property
    def layout(self) -> RootLayout:
        """The directories under the root."""
        return self._store.layout

    # Writes: none, ever.

    def recover(self, step_name: str | None = None) -> int:
        """Commit nothing (nothing can be): what is staged stays for a run that can write."""
        del step_name
        return 0

    def record_events(self, events: Sequence[StepEvent]) -> None:
        """Record nothing: the root keeps no history of runs it cannot be written by.

        What reaches here is a step cache hit's event, or the running event of a step that
        its lease or its unit (:func:`~stemma.core.store.store_kind`) refuses next: a step
        never runs here, so no event of real work is ever dropped.
        """
        if events:
            log.debug("%d event(s) not recorded: %s is read-only", len(events), self.unwritable)

    def stage_execution(self, record: ExecutionRecord) -> Path:
        """Refuse: nothing can be staged here.

        Raises:
            ReadOnlyRootError: always.
        """
        raise self._error(f"step {record.step_name!r}")

    def stage_executions(self, records: Sequence[ExecutionRecord]) -> Path:
        """Refuse: nothing can be staged here.

        Raises:
            ReadOnlyRootError: always.
        """
        raise self._error(f"step {records[0].step_name!r}" if records else "staging")

    def note_worker_log(self, bundle: Path, execution_run_ids: Sequence[str], log: str) -> None:
        """Refuse: nothing is staged here to note a log beside.

        Raises:
            ReadOnlyRootError: always.
        """
        raise self._error(f"the worker log of {bundle}")

    def commit_wave(
        self, bundles: Sequence[Path], *, step_outputs: StepOutputs | None = None
    ) -> WaveOutcome:
        """Refuse: nothing can be committed here.

        Raises:
            ReadOnlyRootError: always.
        """
        raise self._error("a commit")

    # Reads: passed through.

    def completed(self, fingerprints: Collection[str]) -> dict[str, StepRecord]:
        """The latest ``completed`` record of each of these fingerprints that has one."""
        return self._store.completed(fingerprints)

    def latest_by_name(self, name: str) -> StepRecord | None:
        """The most recent ``completed`` record of a step with this name, any fingerprint."""
        return self._store.latest_by_name(name)

    def latest_step(self, step_spec_id: str, statuses: Collection[StepStatus]) -> StepEvent | None:
        """The newest event of this step fingerprint whose status is one of ``statuses``."""
        return self._store.latest_step(step_spec_id, statuses)

    def step_outputs(self, step_run_ids: Collection[str]) -> dict[str, dict[str, tuple[str, ...]]]:
        """Per step run, per role, the artifact ids it offers downstream."""
        return self._store.step_outputs(step_run_ids)

    def executions_by_key(self, keys: Collection[str]) -> dict[str, ExecutionRecord]:
        """The newest successful execution of each execution key that has one (no content)."""
        return self._store.executions_by_key(keys)

    def load_artifacts(
        self, artifact_ids: Collection[str], *, content: bool = True
    ) -> dict[str, FinalizedArtifact]:
        """Artifacts with their content (ids and metadata only with ``content=False``)."""
        return self._store.load_artifacts(artifact_ids, content=content)

    def ancestry(self, artifact_ids: Collection[str]) -> dict[str, frozenset[str]]:
        """Each artifact's ancestors (itself included), walking lineage up."""
        return self._store.ancestry(artifact_ids)

    def completed_steps(self) -> dict[str, StepEvent]:
        """The newest ``completed`` event of every step fingerprint: a step-cache index."""
        return self._store.completed_steps()

    def step_events(self, pipeline_run_id: str | None = None) -> list[StepEvent]:
        """Every step event of one run (all runs when omitted), oldest first."""
        return self._store.step_events(pipeline_run_id)

    def descendants(
        self, artifact_ids: Collection[str], artifact_type: str | None = None
    ) -> dict[str, frozenset[str]]:
        """Each artifact's descendants (itself excluded), walking lineage down, of one type."""
        return self._store.descendants(artifact_ids, artifact_type)

    def _error(self, what: str) -> ReadOnlyRootError:
        return read_only_error(self.layout.root, self.unwritable, what)
