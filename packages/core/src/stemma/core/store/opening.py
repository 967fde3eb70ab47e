"""Opening a store by name: the registered kinds, the default, and the read-only root's wrap."""

from __future__ import annotations

import os
from pathlib import Path

from stemma.core import plugins
from stemma.core.errors import StoreUnavailableError
from stemma.core.store.locations import STORE_ENV as STORE_ENV  # (named here too: its home before)
from stemma.core.store.locations import usable_root
from stemma.core.store.protocols import RunStore, Store
from stemma.core.store.read_only_root import ReadOnlyRootStore, refuse_to_run

STORE_GROUP = plugins.STORES


def available_stores() -> dict[str, str]:
    """Store names registered under the ``stemma.stores`` entry point, with their targets.

    ``sqlite`` is stemma-core's own, so it is listed even when core's entry points are not
    installed (a source checkout on ``sys.path``).
    """
    found = {name: ep.value for name, ep in plugins.registered(STORE_GROUP).items()}
    found.setdefault("sqlite", "stemma.core.store.sqlite:SqliteStore")
    return found


def default_store_kind() -> str:
    """The store :func:`open_store` opens when not told which.

    ``$STEMMA_STORE``, else ``delta`` when stemma-storage is installed, else ``sqlite``.
    """
    return os.environ.get(STORE_ENV) or (
        "delta" if "delta" in plugins.registered(STORE_GROUP) else "sqlite"
    )


def open_run_store(
    root: str | os.PathLike[str] | None = None, *, kind: str | None = None
) -> RunStore:
    """Open the store at ``root`` and check that it can serve the engine.

    On a root this process cannot write (a read-only mount, another user's directory) the
    store comes wrapped in a :class:`~stemma.core.store.read_only_root.ReadOnlyRootStore`: what is
    built there is answered, and a step that must run raises
    :class:`~stemma.core.errors.ReadOnlyRootError` before it starts. A root in an object store
    is not looked at here: whether its credentials may write is asked of its store only once a
    step must run (:class:`~stemma.core.store.read_only_root.RefusesWrites`), so opening costs
    no request.

    Raises:
        StoreUnavailableError: the store named by ``$STEMMA_STORE`` is only a plain ``Store``
            (it can answer ``plan`` but cannot run steps).
        NotARootError: the root is a file (or lies under one); nothing is opened.
    """
    store = open_store(root, kind=kind)
    if not isinstance(store, RunStore):
        raise StoreUnavailableError(
            f"the store at {store.layout.root} is a {type(store).__name__}, which cannot run "
            "steps; unset STEMMA_STORE for the default (delta with stemma-storage, else sqlite)"
        )
    unwritable = store.layout.unwritable()
    return store if unwritable is None else ReadOnlyRootStore(store, unwritable)


def store_kind(store: object) -> str:
    """The name ``open_store`` knows ``store``'s kind by (what a worker opens to stage into).

    Asked once per unit as it is made for a worker, so it is also where a unit of a step that
    takes no lease (a ``dev`` version, ``skip_cache``) is refused on a read-only root.

    Raises:
        ReadOnlyRootError: ``store`` is a read-only root's (or its bucket's credentials may
            only read): no worker can stage into it.
    """
    refuse_to_run(store, "a unit of a step that does not use the cache (dev, or skip_cache)")
    kind = getattr(store, "kind", None)
    return kind if isinstance(kind, str) else default_store_kind()


def open_store(root: str | os.PathLike[str] | None = None, *, kind: str | None = None) -> Store:
    """Open the store at ``root`` (see :func:`~stemma.core.store.locations.resolve_root`).

    Args:
        root: the store root; ``$STEMMA_ROOT`` or ``.stemma`` when omitted.
        kind: ``"delta"`` (stemma-storage), ``"sqlite"`` (SQLite, core only), or another
            registered name. Defaults to :func:`default_store_kind`: ``$STEMMA_STORE``, else
            ``delta`` when stemma-storage is installed, else ``sqlite``.

    Raises:
        StoreUnavailableError: the named store is not installed.
        NotARootError: the root is a file (or lies under one); nothing is opened.
    """
    path: Path = usable_root(root)
    registered = plugins.registered(STORE_GROUP)
    chosen = kind or default_store_kind()
    if chosen not in registered and chosen == "sqlite":
        # core's own store opens without its entry point (a source checkout on sys.path)
        from stemma.core.store.sqlite import SqliteStore

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
