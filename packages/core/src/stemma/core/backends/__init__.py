"""Backends: where execution units run. The local process pool is the default.

Backends are found by name through the ``stemma.backends`` entry point, so ``backend="slurm"``
works when stemma-slurm is installed and says what to install when it is not.
"""

from stemma.core.backends.base import Backend, WorkerCrashedError
from stemma.core.backends.local import LocalBackend
from stemma.core.backends.registry import open_backend

__all__ = [
    "Backend",
    "LocalBackend",
    "WorkerCrashedError",
    "open_backend",
]
