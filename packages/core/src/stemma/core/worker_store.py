"""What a worker process opens of a store: stage its units' bundles, read their inputs.

A worker never commits, recovers or records events; the orchestrator does. A store package can
register a lighter object for its workers under the ``stemma.worker_stores`` entry point group,
by the same name as its store (stemma-storage's ``delta`` skips deltalake and pyarrow until a
unit reads its inputs): importing a store's every module is most of a worker's start-up, paid
once per local worker and once per SLURM array element. A kind with none registered opens its
full store.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Collection, Sequence
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast, runtime_checkable

from stemma.core.execution_records import ExecutionRecord
from stemma.core.layout import RootLayout, resolve_root
from stemma.core.store import default_store_kind, open_pipeline_store

if TYPE_CHECKING:
    from stemma.core.operations.drafts import FinalizedArtifact

WORKER_STORE_GROUP = "stemma.worker_stores"


@runtime_checkable
class WorkerStore(Protocol):
    """The part of a :class:`~stemma.core.store.PipelineStore` a worker's units use.

    A curator's ``execute_curator`` is handed this object as its ``store``: a registered worker
    store answers the rest of the ``PipelineStore`` reads too (opening its full store then).
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


def open_worker_store(
    root: str | os.PathLike[str] | None = None, *, kind: str | None = None
) -> WorkerStore:
    """The store a worker stages into: the kind's registered worker store, else its full one.

    Raises:
        StoreUnavailableError: the named store is not installed.
    """
    chosen = kind or default_store_kind()
    registered = _registered().get(chosen)
    if registered is None:
        return open_pipeline_store(root, kind=chosen)
    factory = registered.load()
    return cast(WorkerStore, factory(resolve_root(root)))


def worker_store_targets() -> dict[str, str]:
    """Worker stores registered under ``stemma.worker_stores``, by kind, with their targets."""
    return {name: ep.value for name, ep in _registered().items()}


@functools.cache
def _registered() -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in entry_points(group=WORKER_STORE_GROUP)}
