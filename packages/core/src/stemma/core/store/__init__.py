"""The store: where a root's results are kept, and the one seam the engine and readers use.

Inside: ``protocols`` (``Store`` ⊂ ``RunStore``, with ``WorkerStore`` the part a worker uses),
``opening`` (a store by name), ``locations`` (where everything lives under a root), the
read-only root, history and lineage reads, ``staging/`` (the staging protocol both stores
share) and ``sqlite/`` (stemma-core's own store). The sibling packages use the names below.

Every name is imported on first use (PEP 562): a worker reading ``store.locations`` does not
load the entry-point machinery of ``opening`` with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stemma.core.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from stemma.core.store.opening import (
        STORE_ENV,
        STORE_GROUP,
        available_stores,
        default_store_kind,
        open_run_store,
        open_store,
        store_kind,
    )
    from stemma.core.store.protocols import (
        RunStore,
        Store,
        WaveOutcome,
        WaveProblem,
        WorkerStore,
    )

_PROTOCOLS = "stemma.core.store.protocols"
_OPENING = "stemma.core.store.opening"
_EXPORTS = {
    "RunStore": _PROTOCOLS,
    "Store": _PROTOCOLS,
    "WaveOutcome": _PROTOCOLS,
    "WaveProblem": _PROTOCOLS,
    "WorkerStore": _PROTOCOLS,
    "STORE_ENV": _OPENING,
    "STORE_GROUP": _OPENING,
    "available_stores": _OPENING,
    "default_store_kind": _OPENING,
    "open_run_store": _OPENING,
    "open_store": _OPENING,
    "store_kind": _OPENING,
}
"""Each public name and the module that defines it."""

__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    # the protocols
    "RunStore",
    "Store",
    "WaveOutcome",
    "WaveProblem",
    "WorkerStore",
    # opening a store by name
    "STORE_ENV",
    "STORE_GROUP",
    "available_stores",
    "default_store_kind",
    "open_run_store",
    "open_store",
    "store_kind",
]
