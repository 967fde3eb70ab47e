"""The ``slurm-intra`` backend: each pack runs as an ``srun`` step inside the current allocation.

For work launched from inside ``salloc`` or an ``sbatch`` script: no queueing, the allocation's
resources are reused. A pack's ``(fn, payload)`` is pickled to the run's log directory (shared
with the allocation's nodes), ``srun --exact`` runs :mod:`stemma.slurm.intra_step` on it, and
the step's result file, or its exit code and log when it has none, settles the future.

Each step's execution keys are recorded before the run waits on it (``intra_ledger``): when
only the orchestrator process dies, its steps run on, and a rerun in the same allocation waits
for them (``adopt``) instead of running their units again.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from stemma.core.backends.base import AdoptedElement, WaveRequest
from stemma.core.cancel_levels import CancelLevel, cancel_grace
from stemma.slurm import commands
from stemma.slurm.adoption import recovery_time
from stemma.slurm.backend import SLURM_CANCEL_GRACE, import_submitit
from stemma.slurm.element import ElementFiles
from stemma.slurm.errors import NotInAllocationError
from stemma.slurm.intra_ledger import STEPS_LEDGER, StepEntry, find_orphan_steps, listed_steps
from stemma.slurm.intra_watch import StepWatcher, settle_step
from stemma.slurm.job_ledger import JobLedger, ledger_path, now_iso, store_root

STEP_MODULE = "stemma.slurm.intra_step"
_DRAIN_SECONDS = 30.0
"""How long a terminate waits for killed steps to exit and leave squeue."""
_DEFAULT_REQUEST = WaveRequest(
    job_name="stemma-intra", run_id="intra", run_tag="stemma-intra", step_number=0, max_parallel=1
)


class SlurmIntraBackend:
    """Runs units as ``srun`` steps of the allocation this process runs in."""

    name = "slurm-intra"
    queues_whole_waves = False
    shared_filesystem = True
    """Workers stage on a filesystem the orchestrator reads over the network: verify staging."""

    def __init__(
        self,
        max_workers: int | None = None,
        *,
        python: str | None = None,
        default_root: str | os.PathLike[str] | None = None,
        cancel_grace_seconds: float | None = None,
    ) -> None:
        """Check that this process is inside an allocation.

        Args:
            max_workers: steps at once (default: the allocation's CPUs on this node).
            python: the command steps run Python with (default: this interpreter).
            default_root: the store root for waves whose request has no ``log_dir``.
            cancel_grace_seconds: at level 2, time between SIGTERM and killing the steps; None
                for ``$STEMMA_CANCEL_GRACE_SECONDS``, else 5 s.

        Raises:
            NotInAllocationError: ``SLURM_JOB_ID`` is unset.
        """
        self.job_id = os.environ.get("SLURM_JOB_ID", "")
        if not self.job_id:
            raise NotInAllocationError(
                "the slurm-intra backend runs units as srun steps inside a SLURM allocation, but "
                "SLURM_JOB_ID is unset; run the pipeline inside one (salloc -c 8 --mem 16G "
                "python pipeline.py, or from an sbatch script), or use backend='slurm' to submit "
                "job arrays instead"
            )
        import_submitit()
        cpus = os.environ.get("SLURM_CPUS_ON_NODE") or os.environ.get("SLURM_NTASKS") or "1"
        self.max_workers = max_workers or max(1, int(cpus))
        self.python = python or sys.executable
        self.default_root = Path(default_root or os.environ.get("STEMMA_ROOT") or ".stemma")
        self.cancel_grace_seconds = cancel_grace(cancel_grace_seconds, SLURM_CANCEL_GRACE)
        self._threads = ThreadPoolExecutor(self.max_workers, thread_name_prefix="stemma-srun")
        self._steps: dict[int, subprocess.Popen[bytes]] = {}
        self._lock = threading.Lock()
        self._cancelled: CancelLevel | None = None
        self._ledger = JobLedger()
        self._own: set[str] = set()
        """The steps this run started or adopted (their names): never offered to it again."""
        self._watcher = StepWatcher(lambda: listed_steps(self.job_id), self._cancel_reason)
        self._opened_at = time.time()
        """When adoption counts from if a wave does not say when its run's recovery began
        (``adoption.recovery_time``)."""

    def submit(self, fn: Callable[[Any], Any], payload: Any) -> Future[Any]:
        """Run ``fn(payload)`` as one ``srun`` step."""
        return self._threads.submit(self._run_step, fn, payload, _DEFAULT_REQUEST, ())

    def submit_wave(
        self, fn: Callable[[Any], Any], payloads: Sequence[Any], request: WaveRequest
    ) -> list[Future[Any]]:
        """One step per payload, at most ``max_workers`` at once, with the request's resources."""
        keys = request.pack_keys or [()] * len(payloads)
        return [
            self._threads.submit(self._run_step, fn, p, request, tuple(k))
            for p, k in zip(payloads, keys, strict=True)
        ]

    def adopt(self, keys: Collection[str], request: WaveRequest) -> list[AdoptedElement]:
        """The steps dead runs left running in this allocation that compute only ``keys``.

        Each is watched like a step of this run (one squeue call per poll for all of them,
        killed with the run) and recorded in this run's srun ledger, so a run that dies in
        turn leaves it adoptable by the next (``stemma.slurm.intra_ledger``).
        """
        log_dir = self._log_dir(request)
        root = store_root(log_dir)
        if root is None:
            return []
        with self._lock:
            own = set(self._own)
        orphans = find_orphan_steps(
            root,
            keys,
            run_id=request.run_id,
            allocation=self.job_id,
            own=own,
            finished_since=recovery_time(request, self._opened_at),
        )
        ledger = ledger_path(log_dir, request.run_id, STEPS_LEDGER)
        adopted: list[AdoptedElement] = []
        for orphan in orphans:
            self._ledger.record(ledger, orphan.entry)
            with self._lock:
                self._own.add(orphan.job_id)
            log = Path(orphan.entry.log)
            files = ElementFiles(
                job_id=f"{self.job_id} step {orphan.job_id}",
                result=orphan.result,
                stdout=log,
                stderr=log,
            )
            future = self._watcher.watch(orphan.job_id, files)
            adopted.append(
                AdoptedElement(
                    keys=orphan.keys, future=future, run_id=orphan.run_id, job_id=files.job_id
                )
            )
        return adopted

    def _log_dir(self, request: WaveRequest) -> Path:
        log_dir = Path(request.log_dir or self.default_root / "logs" / "slurm" / request.run_id)
        return log_dir.expanduser().absolute()

    def _run_step(
        self, fn: Callable[[Any], Any], payload: Any, request: WaveRequest, keys: tuple[str, ...]
    ) -> Any:
        from submitit.core.utils import cloudpickle_dump

        log_dir = self._log_dir(request)
        log_dir.mkdir(parents=True, exist_ok=True)
        token = uuid.uuid4().hex[:12]
        stem = log_dir / f"step-{token}"
        # A name of its own: a rerun finds the step in squeue by it (``intra_ledger``).
        name = f"{request.job_name}-{token}"
        files = ElementFiles(
            job_id=f"{self.job_id} step {stem.name}",
            result=stem.with_suffix(".result.pkl"),
            stdout=stem.with_suffix(".log"),
            stderr=stem.with_suffix(".log"),
        )
        source = stem.with_suffix(".in.pkl")
        cloudpickle_dump((fn, payload), source)
        with files.stdout.open("wb") as log:
            process = subprocess.Popen(
                [
                    *self._srun(request, name),
                    self.python,
                    "-m",
                    STEP_MODULE,
                    str(source),
                    str(files.result),
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            with self._lock:
                self._steps[process.pid] = process
                self._own.add(name)
            try:
                if keys:
                    self._record(request, log_dir, name, files, keys)
                code = process.wait()
            finally:
                with self._lock:
                    self._steps.pop(process.pid, None)
        return settle_step(files, exit_code=code, reason=self._cancel_reason())

    def _record(
        self,
        request: WaveRequest,
        log_dir: Path,
        name: str,
        files: ElementFiles,
        keys: tuple[str, ...],
    ) -> None:
        """Append the step to the run's srun ledger, synced, before the run waits on it."""
        entry = StepEntry(
            allocation=self.job_id,
            step_name=name,
            step_number=request.step_number,
            result=str(files.result),
            log=str(files.stdout),
            submitted_at=now_iso(),
            keys=keys,
        )
        self._ledger.record(ledger_path(log_dir, request.run_id, STEPS_LEDGER), entry)

    def _cancel_reason(self) -> str | None:
        if self._cancelled is None:
            return None
        return f"the run was cancelled ({self._cancelled.describe()})"

    def _srun(self, request: WaveRequest, name: str) -> list[str]:
        from stemma.slurm.sbatch_options import time_limit_minutes

        return [
            "srun",
            "--exact",
            "--nodes=1",
            "--ntasks=1",
            f"--cpus-per-task={request.cpus}",
            f"--mem={self._step_memory_mb(request)}M",
            f"--time={time_limit_minutes(request.time_limit)}",
            f"--job-name={name}",
            *(["--gres", f"gpu:{request.gpus}"] if request.gpus else []),
        ]

    def _step_memory_mb(self, request: WaveRequest) -> int:
        """The request's memory, capped at an even share of the allocation's memory per node.

        A step asking for more than the allocation holds is refused outright by srun.
        """
        wanted = max(1, math.ceil(request.memory_gb * 1024))
        allocated = os.environ.get("SLURM_MEM_PER_NODE", "")
        if allocated.isdigit():
            return max(1, min(wanted, int(allocated) // self.max_workers))
        return wanted

    def cancel(self, level: CancelLevel) -> None:
        """1: nothing; 2: SIGTERM the steps, kill them after the grace period; 3: kill now."""
        if level is CancelLevel.FORCE:
            self._cancelled = level
            grace = {"grace_seconds": self.cancel_grace_seconds}
            threading.Thread(target=self.terminate, kwargs=grace).start()
        elif level is CancelLevel.HARD:
            self._cancelled = level
            self.terminate(grace_seconds=0)

    def shutdown(self, *, cancel_pending: bool = False) -> None:
        """Wait for running steps, adopted ones too (dropping queued ones: ``cancel_pending``)."""
        self._threads.shutdown(wait=True, cancel_futures=cancel_pending)
        self._watcher.join()

    def terminate(self, *, grace_seconds: float = 2.0) -> None:
        """Drop queued packs; SIGTERM running steps, then ``scancel`` them after the grace.

        Returns once squeue lists none of the steps (a step stays listed for a moment after
        its srun exits).
        """
        self._threads.shutdown(wait=False, cancel_futures=True)
        steps = self._step_ids()
        if steps and grace_seconds > 0:
            commands.scancel(steps, signal="TERM")
            self._wait_for_steps(grace_seconds)
        left = self._step_ids()
        if left:
            commands.scancel(left)
        self._wait_for_steps(_DRAIN_SECONDS)
        deadline = time.monotonic() + _DRAIN_SECONDS
        while self._step_ids() and time.monotonic() < deadline:
            time.sleep(0.2)

    def _step_ids(self) -> list[str]:
        """The allocation's steps named ``stemma-…`` (``JOBID.STEPID``), from squeue."""
        out = commands.run_slurm(
            ["squeue", "-h", "-s", "-j", self.job_id, "-o", "%i|%j"], check=False
        )
        return [
            line.split("|")[0]
            for line in out.splitlines()
            if line.split("|")[-1].startswith("stemma-")
        ]

    def _wait_for_steps(self, seconds: float) -> None:
        with self._lock:
            processes = list(self._steps.values())
        for process in processes:
            try:
                process.wait(timeout=seconds)
            except subprocess.TimeoutExpired:
                process.kill()
