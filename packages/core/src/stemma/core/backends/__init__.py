"""Backends: where execution units run. The local process pool is the default.

Backends are found by name through the ``stemma.backends`` entry point, so ``backend="slurm"``
works when stemma-slurm is installed and says what to install when it is not.

The names below load on first use (PEP 562): a reader of run state files imports
``stemma.core.backends.worker_deaths`` through this package, and the local backend
(``multiprocessing``, ``concurrent.futures``) and the registry (``importlib.metadata``) cost
the dashboard's first frame ~50 ms it has no use for.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'stemma.core.backends' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value
