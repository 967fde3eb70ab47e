"""What a worker process opens of a store: stage its units' bundles, read their inputs.

A worker never commits, recovers or records events; the orchestrator does. A store package can
register a lighter object for its workers under the ``stemma.worker_stores`` entry point group,
by the same name as its store (stemma-storage's ``delta`` skips deltalake and pyarrow until a
unit reads its inputs): importing a store's every module is most of a worker's start-up, paid
once per local worker and once per SLURM array element. A kind with none registered opens its
full store.
"""

from __future__ import annotations

import os
from typing import cast

from stemma.core import plugins
from stemma.core.store.locations import resolve_root
from stemma.core.store.opening import default_store_kind, open_run_store
from stemma.core.store.protocols import WorkerStore

WORKER_STORE_GROUP = plugins.WORKER_STORES


def open_worker_store(
    root: str | os.PathLike[str] | None = None, *, kind: str | None = None
) -> WorkerStore:
    """The store a worker stages into: the kind's registered worker store, else its full one.

    Raises:
        StoreUnavailableError: the named store is not installed.
    """
    chosen = kind or default_store_kind()
    registered = plugins.registered(WORKER_STORE_GROUP).get(chosen)
    if registered is None:
        return open_run_store(root, kind=chosen)
    factory = registered.load()
    return cast(WorkerStore, factory(resolve_root(root)))


def worker_store_targets() -> dict[str, str]:
    """Worker stores registered under ``stemma.worker_stores``, by kind, with their targets."""
    return plugins.targets(WORKER_STORE_GROUP)
