"""The store seam: what a run's orchestrator, its workers and a reader need of a store.

``Store`` answers a reader (``plan``, the step cache); ``WorkerStore`` is what a worker's units
use (stage bundles, read inputs); ``RunStore`` is both and everything an orchestrator adds.
Implementations: stemma-core's SQLite store (``stemma.core.store.sqlite``) and stemma-storage's
Delta store, each found by name through the ``stemma.stores`` entry point group.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from stemma.core.execution_records import ExecutionRecord, StepEvent, StepOutputs
from stemma.core.records import StepRecord, StepStatus
from stemma.core.store.locations import RootLayout

if TYPE_CHECKING:  # annotations only: opening a store must not load the operations (pydantic)
    from stemma.core.operations.drafts import FinalizedArtifact


@runtime_checkable
class Store(Protocol):
    """Keeps step events, executions, artifacts and provenance under one root.

    Implementations must be safe to use from several threads of one process and from several
    processes on one root at once. Writers never expose half an execution: a staged bundle
    becomes visible whole or not at all, and committing the same bundle twice adds nothing.
    """

    @property
    def layout(self) -> RootLayout:
        """The directories under this store's root."""
        ...

    def recover(self, step_name: str | None = None) -> int:
        """Commit work staged by a process that died before committing; return how many.

        Args:
            step_name: only look at what was staged for steps of this name (cheap enough to
                call before every execution); everything when omitted.
        """
        ...

    def completed(self, fingerprints: Collection[str]) -> dict[str, StepRecord]:
        """The latest ``completed`` record of each of these fingerprints that has one."""
        ...

    def latest_by_name(self, name: str) -> StepRecord | None:
        """The most recent ``completed`` record of a step with this name, any fingerprint."""
        ...


@runtime_checkable
class WorkerStore(Protocol):
    """The part of a :class:`~stemma.core.store.RunStore` a worker's units use.

    A curator's ``execute_curator`` is handed this object as its ``store``: a registered worker
    store answers the rest of the ``RunStore`` reads too (opening its full store then).
    """

    @property
    def layout(self) -> RootLayout:
        """The directories under this store's root."""
        ...

    def stage_execution(self, record: ExecutionRecord) -> Path:
        """Write one unit's bundle under ``staging/`` and return it."""
        ...

    def stage_executions(self, records: Sequence[ExecutionRecord]) -> Path:
        """Write one bundle for a worker's pack of units of one step, and return it."""
        ...

    def load_artifacts(
        self, artifact_ids: Collection[str], *, content: bool = True
    ) -> dict[str, FinalizedArtifact]:
        """Artifacts (with their content unless ``content`` is False), for a unit's inputs."""
        ...

    def descendants(
        self, artifact_ids: Collection[str], artifact_type: str | None = None
    ) -> dict[str, frozenset[str]]:
        """Each artifact's descendants (itself excluded), of one type when given."""
        ...


class WaveProblem(Protocol):
    """A staged bundle a wave left out (missing files, or quarantined as unreadable)."""

    @property
    def bundle(self) -> Path:
        """Where the bundle was staged (what the worker reported)."""
        ...

    @property
    def error(self) -> str:
        """A message naming the bundle and the files."""
        ...

    def to_dict(self) -> Mapping[str, Any]:
        """A JSON-ready form, for the step event's metadata."""
        ...


class WaveOutcome(Protocol):
    """What committing a wave did."""

    @property
    def committed(self) -> int:
        """Bundles this call committed."""
        ...

    @property
    def problems(self) -> Sequence[WaveProblem]:
        """The bundles left out, and why."""
        ...


@runtime_checkable
class RunStore(Store, WorkerStore, Protocol):
    """What a run's orchestrator needs of a store, beyond what its workers use.

    Both front doors run on it: events, waves, step outputs, the caches' reads, lineage walks.
    Every method is batched: one call per step (or per wave of units), never one per artifact.
    """

    def record_events(self, events: Sequence[StepEvent]) -> None:
        """Append step events (``running``, ``completed``, ``skipped``, …) in one write."""
        ...

    def note_worker_log(self, bundle: Path, execution_run_ids: Sequence[str], log: str) -> None:
        """Keep a scheduler's log of the worker beside a staged bundle, to be committed with it.

        Raises:
            OSError: the bundle is already committed or cannot be written.
        """
        ...

    def commit_wave(
        self, bundles: Sequence[Path], *, step_outputs: StepOutputs | None = None
    ) -> WaveOutcome:
        """Commit staged bundles together as one wave, idempotently; say what it did.

        With ``step_outputs``, the step's output table rows go in the same wave. The outcome
        says how many bundles this call committed (``committed``: already committed ones are
        not counted) and which bundles were left out, and why.
        """
        ...

    def latest_step(self, step_spec_id: str, statuses: Collection[StepStatus]) -> StepEvent | None:
        """The newest event of this step fingerprint whose status is one of ``statuses``."""
        ...

    def step_outputs(self, step_run_ids: Collection[str]) -> dict[str, dict[str, tuple[str, ...]]]:
        """Per step run, per role, the artifact ids it offers downstream."""
        ...

    def executions_by_key(self, keys: Collection[str]) -> dict[str, ExecutionRecord]:
        """The newest successful execution of each execution key that has one (no content)."""
        ...

    def ancestry(self, artifact_ids: Collection[str]) -> dict[str, frozenset[str]]:
        """Each artifact's ancestors (itself included), walking lineage up, for LINEAGE pairing."""
        ...

    def completed_steps(self) -> dict[str, StepEvent]:
        """The newest ``completed`` event of every step fingerprint: a step-cache index."""
        ...

    def step_events(self, pipeline_run_id: str | None = None) -> list[StepEvent]:
        """Every step event of one run (all runs when omitted), oldest first."""
        ...
