"""``open_backend``: a backend by name, built in (``local``, ``local-thread``) or registered.

Other packages register theirs under the ``stemma.backends`` entry point (stemma-slurm's
``slurm`` and ``slurm-intra``). Kept apart from ``base``, which the backends themselves build
on, so that nothing imports in a circle.
"""

from __future__ import annotations

from typing import Any

from stemma.core import plugins
from stemma.core.backends.base import Backend
from stemma.core.errors import BackendUnavailableError

BACKEND_GROUP = plugins.BACKENDS
"""The entry-point group a package registers a backend factory under."""


def open_backend(name: str, **options: Any) -> Backend:
    """The backend registered as ``name`` (``local`` and ``local-thread`` are built in).

    Raises:
        BackendUnavailableError: no installed package provides that backend (the message says
            which package to install).
    """
    # (imported when chosen: a SLURM run need not load the process pool's machinery)
    if name == "local":
        from stemma.core.backends.local import LocalBackend

        return LocalBackend(**options)
    if name == "local-thread":
        from stemma.core.backends.thread import ThreadBackend

        return ThreadBackend(max_workers=options.get("max_workers"))
    registered = plugins.registered(BACKEND_GROUP)
    if name not in registered:
        hint = "pip install stemma-slurm" if name.startswith("slurm") else "install its package"
        raise BackendUnavailableError(
            f"no backend named {name!r} is installed "
            f"(known: {sorted({'local', 'local-thread', *registered})}); "
            f"to use it, {hint}"
        )
    factory = registered[name].load()
    return factory(**options)
