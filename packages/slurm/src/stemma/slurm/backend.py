"""The ``slurm`` backend: one submitit job array per wave, settled by one poller per backend.

Every wave becomes as few ``sbatch`` calls as ``MaxArraySize`` allows (one, below it), throttled
to ``max_parallel`` running elements (``--array=0-N%P``), named ``request.job_name``, with its job
id appended to the run's ledger the moment sbatch answers. Jobs run the orchestrator's own
Python (``sys.executable``) with its ``sys.path``, so anything the orchestrator imports by name
the job imports too.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from stemma.core.backends.base import AdoptedElement, WaveRequest
from stemma.core.cancel_levels import CancelLevel, cancel_grace
from stemma.core.shared_paths import warn_if_writable_by_others
from stemma.slurm import commands
from stemma.slurm.adoption import adopted_entry, find_orphans, recovery_time
from stemma.slurm.array_stopping import ArrayStopper
from stemma.slurm.element import ElementFiles, run_element
from stemma.slurm.errors import SubmissionError
from stemma.slurm.job_ledger import JobLedger, LedgerEntry, ledger_path, now_iso, store_root
from stemma.slurm.poller import ElementFuture, PollSettings, RunPoller
from stemma.slurm.sbatch_options import check_sbatch_text, split_wave, submitit_parameters

SLURM_CANCEL_GRACE = 5.0
"""Seconds a force cancel gives a job between SIGTERM and the hard ``scancel``, by default."""


def import_submitit() -> None:
    """Import submitit whole, now, in the thread that opens a backend.

    Its modules are imported lazily elsewhere, from the run's step threads; submitit's own
    package imports in a cycle, so two threads importing it first at once can meet in Python's
    import locks and one fail with ``_DeadlockError`` (seen in CI: two steps submitting their
    first waves together). Imported once here, every later import is a lookup.
    """
    importlib.import_module("submitit")  # (~0.1 s, once per process opening a SLURM backend)


class SlurmBackend:
    """Runs each wave of packs as a SLURM job array through submitit."""

    name = "slurm"
    queues_whole_waves = True
    shared_filesystem = True
    """Workers stage on a filesystem the orchestrator reads over the network: verify staging."""

    def __init__(
        self,
        max_workers: int | None = None,
        *,
        max_array_size: int | None = None,
        cancel_grace_seconds: float | None = None,
        poll: PollSettings | None = None,
        python: str | None = None,
        default_root: str | os.PathLike[str] | None = None,
    ) -> None:
        """Prepare the backend; nothing is asked of the cluster until the first wave.

        Args:
            max_workers: ignored: a wave's throttle is its request's ``max_parallel``
                (accepted so ``open_backend("slurm", max_workers=…)`` works).
            max_array_size: split arrays at this size instead of the cluster's
                ``MaxArraySize`` (never above it).
            cancel_grace_seconds: at ``CancelLevel.FORCE``, how long jobs have between
                SIGTERM and the hard ``scancel``; None for ``$STEMMA_CANCEL_GRACE_SECONDS``,
                else 5 s.
            poll: how often the run's jobs are polled.
            python: the command jobs run Python with (default: this interpreter).
            default_root: the store root for waves whose request has no ``log_dir``
                (default: ``$STEMMA_ROOT`` or ``./.stemma``).
        """
        del max_workers
        import_submitit()
        if max_array_size is not None and max_array_size < 1:
            raise ValueError(f"max_array_size must be at least 1, got {max_array_size}")
        self.max_array_size_option = max_array_size
        self.cancel_grace_seconds = cancel_grace(cancel_grace_seconds, SLURM_CANCEL_GRACE)
        self.python = python or sys.executable
        self.default_root = Path(default_root or os.environ.get("STEMMA_ROOT") or ".stemma")
        self.poller = RunPoller(settings=poll or PollSettings())
        self.sbatch_calls = 0
        """sbatch calls made so far (one per array)."""
        self._ledger = JobLedger()
        self._arrays: set[str] = set()
        self._cluster_max_array: int | None = None
        self._step_elements: dict[int, list[str]] = {}
        self._adopted: set[str] = set()
        """Elements of dead runs' arrays this run waits for (``123_4``): cancelled one by one,
        never as their whole array (its other elements are not this run's)."""
        self._opened_at = time.time()
        """When adoption counts from if a wave does not say when its run's recovery began
        (``adoption.recovery_time``)."""
        self._lock = threading.Lock()
        self._stopper = ArrayStopper(self.poller, self._all_arrays)

    # ------------------------------------------------------------------ submitting

    def submit(self, fn: Callable[[Any], Any], payload: Any) -> Future[Any]:
        """Run ``fn(payload)`` as a one-element job (``fn`` must be importable by name)."""
        run_id = f"adhoc_{uuid.uuid4().hex[:8]}"
        request = WaveRequest(
            job_name=f"stemma-{run_id[-8:]}-s0-submit",
            run_id=run_id,
            run_tag=f"stemma-{run_id[-8:]}",
            step_number=0,
            max_parallel=1,
        )
        return self.submit_wave(fn, [payload], request)[0]

    def submit_wave(
        self, fn: Callable[[Any], Any], payloads: Sequence[Any], request: WaveRequest
    ) -> list[Future[Any]]:
        """One array per ``max_array_size`` payloads; one future per payload, in order.

        Raises:
            ClusterUnavailableError: no SLURM client, or the controller does not answer.
            SubmissionError: sbatch refused an array (the arrays of this wave already
                submitted are cancelled).
            ValueError: the request's resources or time limit are malformed.
        """
        from submitit.core.utils import FailedJobError, FailedSubmissionError

        if not payloads:
            return []
        log_dir = Path(request.log_dir or self.default_root / "logs" / "slurm" / request.run_id)
        log_dir = log_dir.expanduser().absolute()
        check_sbatch_text("the SLURM log folder (under the root)", str(log_dir))
        log_dir.mkdir(parents=True, exist_ok=True)
        # Each job unpickles its units from here (submitit's *_submitted.pkl), on a compute node.
        warn_if_writable_by_others(log_dir, what="the pickled units its SLURM jobs run")
        parameters = submitit_parameters(request, python_path=_python_path())
        futures: list[ElementFuture] = []
        submitted: list[str] = []
        for indices in split_wave(len(payloads), self._max_array_size()):
            try:
                jobs = self._sbatch(fn, [payloads[i] for i in indices], log_dir, parameters)
            except (FailedJobError, FailedSubmissionError) as error:
                commands.scancel(submitted)
                raise SubmissionError(
                    f"sbatch refused {request.job_name} ({len(indices)} elements): {error}; "
                    "check the operation's resources and extra options (partition, account…) "
                    "against `sinfo` and `scontrol show config`"
                ) from error
            except BaseException:  # e.g. a payload that cannot be pickled
                commands.scancel(submitted)
                raise
            array = jobs[0].job_id.split("_", 1)[0]
            submitted.append(array)
            self._record(request, log_dir, array, indices)
            futures.extend(self._future(str(job.job_id), log_dir) for job in jobs)
        steps = request.pack_steps or [(request.step_number,)] * len(futures)
        with self._lock:  # an element of several function steps counts for each of them
            for future, numbers in zip(futures, steps, strict=True):
                for number in set(numbers):
                    self._step_elements.setdefault(number, []).append(future.files.job_id)
        self.poller.track(futures)  # after the last array: every poll covers the whole wave
        return list(futures)

    def adopt(self, keys: Collection[str], request: WaveRequest) -> list[AdoptedElement]:
        """The elements dead runs left on the cluster that compute only ``keys``, now tracked.

        Each is watched like an element this backend submitted (one poll for all, cancelled
        with the run) and recorded in this run's ledger with its keys, so a run that dies in
        turn leaves it adoptable by the next (``stemma.slurm.adoption``).
        """
        log_dir = Path(request.log_dir or self.default_root / "logs" / "slurm" / request.run_id)
        root = store_root(log_dir.expanduser().absolute())
        if root is None:
            return []
        orphans = find_orphans(
            root,
            keys,
            run_id=request.run_id,
            own=self._arrays | self._adopted,
            finished_since=recovery_time(request, self._opened_at),
        )
        if not orphans:
            return []
        adopted: list[AdoptedElement] = []
        futures: list[ElementFuture] = []
        ledger = ledger_path(log_dir.expanduser().absolute(), request.run_id)
        for entry in {id(o.entry): o.entry for o in orphans}.values():
            self._ledger.record(ledger, adopted_entry(orphans, entry))
        with self._lock:
            for orphan in orphans:
                self._adopted.add(orphan.job_id)
                self._step_elements.setdefault(request.step_number, []).append(orphan.job_id)
        for orphan in orphans:
            future = self._future(orphan.job_id, Path(orphan.entry.log_dir))
            futures.append(future)
            adopted.append(
                AdoptedElement(
                    keys=orphan.keys, future=future, run_id=orphan.run_id, job_id=orphan.job_id
                )
            )
        self.poller.track(futures)
        return adopted

    def _sbatch(
        self,
        fn: Callable[[Any], Any],
        payloads: list[Any],
        log_dir: Path,
        parameters: dict[str, Any],
    ) -> list[Any]:
        from submitit.slurm.slurm import SlurmExecutor

        executor = SlurmExecutor(folder=log_dir, python=self.python)
        executor.update_parameters(**parameters)
        with self._lock:
            self.sbatch_calls += 1
        element = functools.partial(
            run_element,
            fn,
            time_limit_s=float(parameters["time"]) * 60,
            signal_delay_s=float(parameters.get("signal_delay_s", 30)),
        )
        return executor.map_array(element, payloads)

    def job_states(self, step_number: int) -> dict[str, int]:
        """How many of a step's elements are in each scheduler state (``{"RUNNING": 2, …}``).

        From the poller's last answers, so no scheduler call; for the run's live state
        (``StepState.jobs``).
        """
        with self._lock:
            elements = list(self._step_elements.get(step_number, []))
        states = self.poller.last_states
        return dict(Counter(states.get(job_id, "PENDING") for job_id in elements))

    def _record(self, request: WaveRequest, log_dir: Path, array: str, indices: range) -> None:
        with self._lock:
            self._arrays.add(array)
        keys = request.pack_keys
        entry = LedgerEntry(
            job_id=array,
            job_name=request.job_name,
            step_number=request.step_number,
            elements=len(indices),
            log_dir=str(log_dir),
            submitted_at=now_iso(),
            keys=tuple(keys[i] for i in indices) if keys else (),
        )
        self._ledger.record(ledger_path(log_dir, request.run_id), entry)

    def _future(self, job_id: str, log_dir: Path) -> ElementFuture:
        # submitit's file names (JobPaths with task 0), built directly: JobPaths is slow at scale.
        files = ElementFiles(
            job_id=job_id,
            result=log_dir / f"{job_id}_0_result.pkl",
            stdout=log_dir / f"{job_id}_0_log.out",
            stderr=log_dir / f"{job_id}_0_log.err",
        )
        return ElementFuture(files, self.poller)

    def max_elements(self) -> int:
        """The most elements one array holds (``max_array_size``, else ``MaxArraySize``).

        The engine sizes a step's elements so that the step fits in one array when it can.
        """
        return self._max_array_size()

    def _max_array_size(self) -> int:
        if self._cluster_max_array is None:
            commands.check_cluster()
            self._cluster_max_array = commands.max_array_size()
        cluster = self._cluster_max_array
        option = self.max_array_size_option
        return cluster if option is None else min(option, cluster)

    # ------------------------------------------------------------------ stopping

    def cancel(self, level: CancelLevel) -> None:
        """Stop the run's jobs with the force of ``level``; never blocks for long.

        1: nothing (the orchestrator stops dispatching); 2: SIGTERM now, a hard ``scancel``
        after ``cancel_grace_seconds`` (in the background); 3: SIGKILL and ``scancel`` now.
        Elements not started yet are dropped at levels 2 and 3 (``ArrayStopper``).
        """
        self._stopper.cancel(level, grace_seconds=self.cancel_grace_seconds)

    def shutdown(self, *, cancel_pending: bool = False) -> None:
        """Wait for every element (dropping those not started when ``cancel_pending``).

        Returns once squeue holds none of the run's jobs; a hard ``scancel`` a level-2 cancel
        still owed is done first.
        """
        self._stopper.shutdown(cancel_pending=cancel_pending)

    def terminate(self, *, grace_seconds: float = 2.0) -> None:
        """SIGTERM the run's jobs, hard ``scancel`` after ``grace_seconds`` (at once with none).

        Returns when squeue holds none of them; their futures fail with ``WorkerCrashedError``.
        """
        self._stopper.terminate(grace_seconds=grace_seconds)

    def _all_arrays(self) -> list[str]:
        """What a cancel stops: this run's arrays, and the dead runs' elements it adopted."""
        with self._lock:
            adopted = {element.split("_", 1)[0] for element in self._adopted}
            polled = {array for array in self.poller.arrays() if array not in adopted}
            return sorted(self._arrays | polled | self._adopted)


def _python_path() -> str:
    """The orchestrator's ``sys.path`` directories (minus the interpreter's own), for jobs."""
    own = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    entries = [
        entry
        for entry in sys.path
        if entry and Path(entry).is_dir() and not any(entry.startswith(p) for p in own)
    ]
    return os.pathsep.join(dict.fromkeys(entries))
