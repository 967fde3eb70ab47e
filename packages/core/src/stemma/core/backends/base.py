"""The ``Backend`` seam: submit units of work, get futures back, shut down with escalating force."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from importlib.metadata import entry_points
from typing import Any, Protocol, runtime_checkable

from stemma.core.errors import StemmaError, StoreUnavailableError

BACKEND_GROUP = "stemma.backends"


class WorkerCrashedError(StemmaError, RuntimeError):
    """A worker process died while running a unit (killed, out of memory, segfault).

    Attributes:
        exit_codes: the exit codes of the pool's processes that died (negative: the signal).
        peak_rss_mb: the largest peak resident memory of any worker, in MiB, if known.
    """

    def __init__(self, message: str, *, exit_codes: list[int], peak_rss_mb: float | None) -> None:
        super().__init__(message)
        self.exit_codes = exit_codes
        self.peak_rss_mb = peak_rss_mb


@runtime_checkable
class Backend(Protocol):
    """Runs picklable units of work somewhere else and reports back through futures."""

    name: str
    """Recorded in executions and steps rows (``local``, ``slurm``, …)."""

    def submit(self, fn: Callable[[Any], Any], payload: Any) -> Future[Any]:
        """Run ``fn(payload)`` on a worker.

        The future fails with the unit's own exception, or with :class:`WorkerCrashedError`
        when the worker died.
        """
        ...

    def shutdown(self, *, cancel_pending: bool = False) -> None:
        """Wait for running units (dropping queued ones when ``cancel_pending``) and stop."""
        ...

    def terminate(self) -> None:
        """Stop now: running workers get SIGTERM, then SIGKILL; nothing is left behind."""
        ...


def open_backend(name: str, **options: Any) -> Backend:
    """The backend registered as ``name`` (``local`` is built in).

    Raises:
        StoreUnavailableError: no installed package provides that backend (the message says
            which package to install).
    """
    if name == "local":
        from stemma.core.backends.local import LocalBackend

        return LocalBackend(**options)
    registered = {ep.name: ep for ep in entry_points(group=BACKEND_GROUP)}
    if name not in registered:
        hint = "pip install stemma-slurm" if name.startswith("slurm") else "install its package"
        raise StoreUnavailableError(
            f"no backend named {name!r} is installed (known: {sorted({'local', *registered})}); "
            f"to use it, {hint}"
        )
    factory = registered[name].load()
    return factory(**options)
