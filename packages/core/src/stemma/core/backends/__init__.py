"""Backends: where execution units run. The local process pool is the default.

Backends are found by name through the ``stemma.backends`` entry point, so ``backend="slurm"``
works when stemma-slurm is installed and says what to install when it is not.

The names below load on first use (PEP 562): a reader of run state files imports
``stemma.core.backends.worker_deaths`` through this package, and the local backend
(``multiprocessing``, ``concurrent.futures``) and the registry (``importlib.metadata``) cost
the dashboard's first frame ~50 ms it has no use for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stemma.core.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from stemma.core.backends.base import Backend, WorkerCrashedError
    from stemma.core.backends.local import LocalBackend
    from stemma.core.backends.registry import open_backend

__all__ = [
    "Backend",
    "LocalBackend",
    "WorkerCrashedError",
    "open_backend",
]

_MODULES = {
    "Backend": "stemma.core.backends.base",
    "WorkerCrashedError": "stemma.core.backends.base",
    "LocalBackend": "stemma.core.backends.local",
    "open_backend": "stemma.core.backends.registry",
}


__getattr__ = lazy_getattr(__name__, _MODULES, globals())
