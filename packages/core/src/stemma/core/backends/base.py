"""The ``Backend`` seam: submit units of work, get futures back, shut down with escalating force."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from stemma.core.cancel_levels import CancelLevel
from stemma.core.errors import StemmaError

IN_PROCESS_BACKENDS = frozenset({"local-thread"})
"""Backends that run units in the orchestrator's own process (threads): nothing is pickled,
and a curator runs there too instead of in a subprocess of its own."""


class WorkerCrashedError(StemmaError, RuntimeError):
    """A worker process died while running a unit (killed, out of memory, segfault).

    Attributes:
        exit_codes: the exit codes of the pool's processes that died (negative: the signal).
        peak_rss_mb: the largest peak resident memory of any worker, in MiB, if known.
        memory: for a worker judged killed for memory (by SIGKILL), its peak and its host's
            memory when the death was found, as recorded in the execution's
            ``metadata.memory`` (``memory_at_death.MemoryAtDeath.as_metadata``); else None.
    """

    def __init__(
        self,
        message: str,
        *,
        exit_codes: list[int],
        peak_rss_mb: float | None,
        memory: Mapping[str, int | None] | None = None,
    ) -> None:
        super().__init__(message)
        self.exit_codes = exit_codes
        self.peak_rss_mb = peak_rss_mb
        self.memory = memory

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled whole (keyword arguments and all): a step's caller gets it as the cause."""
        return (_crashed, (str(self), self.exit_codes, self.peak_rss_mb, self.memory))


def _crashed(
    message: str,
    exit_codes: list[int],
    peak_rss_mb: float | None,
    memory: Mapping[str, int | None] | None,
) -> WorkerCrashedError:
    """Rebuild a pickled :class:`WorkerCrashedError`."""
    return WorkerCrashedError(
        message, exit_codes=exit_codes, peak_rss_mb=peak_rss_mb, memory=memory
    )


@dataclass(frozen=True, kw_only=True)
class WaveRequest:
    """What a wave of packs asks of the machine, and how its jobs are named and logged.

    The local backend reads only ``max_parallel``; a scheduler backend turns the rest into its
    job options (SLURM: one array, ``--array=0-N%max_parallel``).
    """

    job_name: str
    """``stemma-{run8}-s{N}-{op}`` (``stemma.core.run_ids.job_name``)."""
    run_id: str
    """The pipeline run the wave belongs to."""
    run_tag: str
    """``stemma-{run8}``, the prefix of every job name of the run: ``stemma reap`` finds a
    crashed run's jobs by it."""
    step_number: int
    """The step the wave runs (to record job ids per step in the run's live directory)."""
    max_parallel: int
    """At most this many packs at once."""
    cpus: int = 1
    memory_gb: float = 4.0
    gpus: int = 0
    time_limit: str = "01:00:00"
    """SLURM form: ``MM``, ``HH:MM:SS``, ``D-HH:MM`` or ``D-HH:MM:SS``."""
    extra: Mapping[str, str] = field(default_factory=dict[str, str])
    """Backend-specific options, passed through as given (``{"partition": "gpu"}``)."""
    log_dir: str | None = None
    """Where scheduler logs go (``{root}/logs/slurm/{run_id}``); None for the backend's choice."""
    pack_steps: tuple[tuple[int, ...], ...] = ()
    """The steps of each pack's units, when a wave carries several function steps' units
    (empty: every pack is ``step_number``'s). A scheduler reports job states per step by it."""
    pack_keys: tuple[tuple[str, ...], ...] = ()
    """The execution keys of each pack's units, in order (empty: not given). A scheduler records
    them with the jobs it submits, so the unit an element computes can be found by its key once
    the orchestrator that sent it is gone."""
    recovered_at: float = 0.0
    """When the run's recovery began committing what staging held (Unix time; 0: not known). A
    dead run's element that finished before then had its bundles committed by that recovery;
    one that finished after has not, and only a rerun that adopts it commits them."""


@dataclass(frozen=True, kw_only=True)
class AdoptedElement:
    """Work a dead run left running on a scheduler that this run waits for instead of sending.

    A backend whose jobs outlive their orchestrator may offer ``adopt(keys, request)``, which
    returns these: each computes exactly ``keys`` (in the order its outcomes come back), and
    ``future`` settles as a pack's would (``stemma.core.engine.dispatch.adoption``).
    """

    keys: tuple[str, ...]
    """The execution keys of its units, in order."""
    future: Future[Any]
    """Settles with the units' outcomes, or fails if the element died."""
    run_id: str
    """The run that submitted it."""
    job_id: str
    """The scheduler's id for it (``123_4``), for the run's log."""


@runtime_checkable
class Backend(Protocol):
    """Runs picklable units of work somewhere else and reports back through futures."""

    name: str
    """Recorded in executions and steps rows (``local``, ``slurm``, …)."""

    queues_whole_waves: bool
    """True when the backend wants a step's whole wave at once (a scheduler: one job array,
    throttled by ``WaveRequest.max_parallel``); False to be fed packs as its slots free up, so
    that a stop drops everything not yet handed over."""

    def submit(self, fn: Callable[[Any], Any], payload: Any) -> Future[Any]:
        """Run ``fn(payload)`` on a worker.

        The future fails with the unit's own exception, or with :class:`WorkerCrashedError`
        when the worker died.
        """
        ...

    def submit_wave(
        self, fn: Callable[[Any], Any], payloads: Sequence[Any], request: WaveRequest
    ) -> list[Future[Any]]:
        """Run ``fn(payload)`` for every payload: one future each, in order.

        A scheduler backend submits the wave in as few calls as its limits allow (one job array,
        split at the cluster's maximum array size); cancelling a future that has not started
        drops its element.
        """
        ...

    def cancel(self, level: CancelLevel) -> None:
        """Stop with the force of ``level`` (see :class:`CancelLevel`); never blocks for long.

        Level 1 is the orchestrator's business (it stops dispatching), so backends do nothing;
        level 2 drops queued work and terminates running workers (SIGTERM, then SIGKILL after a
        grace period); level 3 kills everything at once.
        """
        ...

    def shutdown(self, *, cancel_pending: bool = False) -> None:
        """Wait for running units (dropping queued ones when ``cancel_pending``) and stop."""
        ...

    def terminate(self, *, grace_seconds: float = 2.0) -> None:
        """Stop now: SIGTERM, then SIGKILL after ``grace_seconds`` (at once with no grace).

        Nothing is left behind.
        """
        ...


def start_workers_early(backend: Backend) -> None:
    """Have ``backend`` start its first worker now, if it starts workers (the local pool does).

    Called when a run's step is about to execute, before the step records its start, reads its
    inputs and plans its units: a worker's start-up (half a second of imports) then passes
    meanwhile instead of in front of the first unit. A fully cached run never gets here, so it
    starts no worker.
    """
    start = getattr(backend, "start_early", None)
    if callable(start):
        start()
