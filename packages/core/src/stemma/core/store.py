"""The seam between the engine and where results are kept, and how a store is found by name."""

from __future__ import annotations

import functools
import os
from collections.abc import Collection, Mapping, Sequence
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from stemma.core.errors import StoreUnavailableError
from stemma.core.execution_records import ExecutionRecord, StepEvent, StepOutputs
from stemma.core.layout import RootLayout, resolve_root
from stemma.core.read_only_root import ReadOnlyRootStore, refuse_to_run
from stemma.core.records import StepRecord, StepStatus

if TYPE_CHECKING:  # annotations only: opening a store must not load the operations (pydantic)
    from stemma.core.operations.drafts import FinalizedArtifact

STORE_ENV = "STEMMA_STORE"
STORE_GROUP = "stemma.stores"


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


def available_stores() -> dict[str, str]:
    """Store names registered under the ``stemma.stores`` entry point, with their targets.

    ``sqlite`` is stemma-core's own, so it is listed even when core's entry points are not
    installed (a source checkout on ``sys.path``).
    """
    found = {name: ep.value for name, ep in _registered().items()}
    found.setdefault("sqlite", "stemma.core.sqlite_store:SqliteStore")
    return found


def default_store_kind() -> str:
    """The store :func:`open_store` opens when not told which.

    ``$STEMMA_STORE``, else ``delta`` when stemma-storage is installed, else ``sqlite``.
    """
    return os.environ.get(STORE_ENV) or ("delta" if "delta" in _registered() else "sqlite")


def open_pipeline_store(
    root: str | os.PathLike[str] | None = None, *, kind: str | None = None
) -> PipelineStore:
    """Open the store at ``root`` and check that it can serve the engine.

    On a root this process cannot write (a read-only mount, another user's directory) the
    store comes wrapped in a :class:`~stemma.core.read_only_root.ReadOnlyRootStore`: what is
    built there is answered, and a step that must run raises
    :class:`~stemma.core.errors.ReadOnlyRootError` before it starts.

    Raises:
        StoreUnavailableError: the store named by ``$STEMMA_STORE`` is only a plain ``Store``
            (it can answer ``plan`` but cannot run steps).
    """
    store = open_store(root, kind=kind)
    if not isinstance(store, PipelineStore):
        raise StoreUnavailableError(
            f"the store at {store.layout.root} is a {type(store).__name__}, which cannot run "
            "steps; unset STEMMA_STORE for the default (delta with stemma-storage, else sqlite)"
        )
    unwritable = store.layout.unwritable()
    return store if unwritable is None else ReadOnlyRootStore(store, unwritable)


@functools.cache
def _registered() -> dict[str, EntryPoint]:
    # Reading every installed distribution's metadata costs milliseconds: once per process.
    return {ep.name: ep for ep in entry_points(group=STORE_GROUP)}


def store_kind(store: object) -> str:
    """The name ``open_store`` knows ``store``'s kind by (what a worker opens to stage into).

    Asked once per unit as it is made for a worker, so it is also where a unit of a step that
    takes no lease (a ``dev`` version, ``skip_cache``) is refused on a read-only root.

    Raises:
        ReadOnlyRootError: ``store`` is a read-only root's: no worker can stage into it.
    """
    refuse_to_run(store, "a unit of a step that does not use the cache (dev, or skip_cache)")
    kind = getattr(store, "kind", None)
    return kind if isinstance(kind, str) else default_store_kind()


def open_store(root: str | os.PathLike[str] | None = None, *, kind: str | None = None) -> Store:
    """Open the store at ``root`` (see :func:`~stemma.core.layout.resolve_root`).

    Args:
        root: the store root; ``$STEMMA_ROOT`` or ``.stemma`` when omitted.
        kind: ``"delta"`` (stemma-storage), ``"sqlite"`` (SQLite, core only), or another
            registered name. Defaults to :func:`default_store_kind`: ``$STEMMA_STORE``, else
            ``delta`` when stemma-storage is installed, else ``sqlite``.

    Raises:
        StoreUnavailableError: the named store is not installed.
    """
    path: Path = resolve_root(root)
    registered = _registered()
    chosen = kind or default_store_kind()
    if chosen not in registered and chosen == "sqlite":
        # core's own store opens without its entry point (a source checkout on sys.path)
        from stemma.core.sqlite_store import SqliteStore

        return SqliteStore(path)
    if chosen not in registered:
        hint = (
            "pip install stemma-storage"
            if chosen == "delta"
            else "install the package providing it"
        )
        raise StoreUnavailableError(
            f"no store named {chosen!r} is installed (known: {sorted(available_stores())}); "
            f"to use it, {hint}"
        )
    factory = registered[chosen].load()
    store = factory(path)
    if not isinstance(store, Store):
        raise StoreUnavailableError(f"store {chosen!r} ({registered[chosen].value}) is not a Store")
    return store


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
class PipelineStore(Store, Protocol):
    """What the Pipeline needs beyond function steps: executions, events, outputs, content.

    Every method is batched: one call per step (or per wave of units), never one per artifact.
    """

    def record_events(self, events: Sequence[StepEvent]) -> None:
        """Append step events (``running``, ``completed``, ``skipped``, …) in one write."""
        ...

    def stage_execution(self, record: ExecutionRecord) -> Path:
        """Write one unit's bundle under ``staging/`` (a worker may call this) and return it."""
        ...

    def stage_executions(self, records: Sequence[ExecutionRecord]) -> Path:
        """Write one bundle for a worker's pack of units of one step, and return it."""
        ...

    def note_worker_log(self, bundle: Path, execution_run_ids: Sequence[str], log: str) -> None:
        """Keep a scheduler's log of the worker beside a staged bundle, to be committed with it.

        Raises:
            OSError: the bundle is already committed or cannot be written.
        """
        ...

    def commit_executions(
        self, bundles: Sequence[Path], *, step_outputs: StepOutputs | None = None
    ) -> int:
        """Commit staged bundles together (one Delta commit per table), idempotently.

        With ``step_outputs``, the step's output table rows go in the same wave. Returns how
        many bundles this call committed.
        """
        ...

    def commit_wave(
        self, bundles: Sequence[Path], *, step_outputs: StepOutputs | None = None
    ) -> WaveOutcome:
        """Like :meth:`commit_executions`, and say which bundles were left out and why."""
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

    def load_artifacts(
        self, artifact_ids: Collection[str], *, content: bool = True
    ) -> dict[str, FinalizedArtifact]:
        """Artifacts with their content, for materializing inputs and building curator frames.

        With ``content=False``, ids and metadata only (``content`` is None, ``size`` as
        recorded): the content is not read at all, for inputs a role does not hydrate.
        """
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

    def descendants(
        self, artifact_ids: Collection[str], artifact_type: str | None = None
    ) -> dict[str, frozenset[str]]:
        """Each artifact's descendants (itself excluded), walking lineage down, for ``Filter``.

        With ``artifact_type``, only descendants of that type (the walk crosses every type).
        """
        ...
