"""What runs inside an array element, and how the orchestrator reads what it left behind.

submitit keeps only a traceback string when a function raises; the backend's contract is to hand
the unit's own exception back. So each element runs :func:`run_element`, which catches the
unit's exception and returns it as a value (its traceback attached as a note), and
:func:`read_outcome` turns the element's result file into a value, that exception, or a
:class:`WorkerCrashedError` when the job itself failed (timed out, could not import the
function, was preempted without a requeue).
"""

from __future__ import annotations

import faulthandler
import os
import pickle
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn, TextIO

from stemma.core.backends.base import WorkerCrashedError
from stemma.core.shared_paths import warn_if_writable_by_others
from stemma.core.store.failure_logs import tail_lines
from stemma.slurm import own_warning

_stacks_to: TextIO | None = None
"""The element's log, where the warning signal writes every thread's stack (kept open)."""

REQUEUE_PAUSES = (1.0, 3.0)
"""Seconds before each further ``scontrol requeue`` when submitit's own request failed."""


@dataclass(frozen=True)
class ElementResult:
    """What one element returns to submitit: the unit's value or its exception."""

    value: Any = None
    error: BaseException | None = None


class RemoteUnitError(RuntimeError):
    """A unit raised an exception that cannot be pickled; this carries its type and traceback."""


def run_element(
    fn: Callable[[Any], Any],
    payload: Any,
    *,
    time_limit_s: float | None = None,
    signal_delay_s: float = 30.0,
) -> ElementResult:
    """Run ``fn(payload)`` in the job; return its value, or the exception it raised.

    SIGTERM gets its default action back (submitit ignores it), so cancelling with
    ``scancel --signal=TERM`` stops the unit at once, as SIGTERM stops a local worker. Given
    the job's ``time_limit_s``, the element warns itself ``signal_delay_s`` before it should
    SLURM's warning not have come (:mod:`stemma.slurm.own_warning`).
    """
    from submitit.core.utils import UncompletedJobError

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if _stop_before_time_limit() and time_limit_s is not None:
        own_warning.arm(time_limit_s, signal_delay_s)
    try:
        return ElementResult(value=fn(payload))
    except UncompletedJobError:  # submitit's own timeout or preemption: the job's business
        raise
    except Exception as error:
        text = traceback.format_exc()
        error.add_note(f"Traceback in the SLURM job:\n{text}")
        try:
            pickle.dumps(error)
        except Exception:
            error = RemoteUnitError(f"{type(error).__name__}: {error}\n{text}")
        return ElementResult(error=error)


def _stop_before_time_limit() -> bool:
    """Wrap submitit's warning-signal handler: on a timeout, stop the pack instead of dying.

    SLURM signals the job ``signal_delay_s`` before its limit (up to a minute earlier); the
    signal also dumps every thread's stack into the element's log (``faulthandler``).
    submitit's handler requeues a preempted job and exits: this attempt then ends at once,
    staging nothing, as the requeued one reruns the pack. For a job that timed out (any
    warning, when the limit is 10 minutes or less) it raises ``UncompletedJobError``: then the
    unit running fails with a clear reason, and the units not started are recorded as failed
    without running (:mod:`stemma.core.backends.worker_stop`), so the pack is staged and its
    finished units committed before the hard kill.

    Returns:
        Whether the handler is in place (False outside submitit, which installs the first).
    """
    from submitit.core.utils import UncompletedJobError

    from stemma.core.backends import worker_stop

    original = signal.getsignal(signal.SIGUSR2)
    if not callable(original):
        return False  # not under submitit: no warning to wait for
    job = _job_id()

    def on_warning(signum: int, frame: FrameType | None) -> None:
        own_warning.note_warning()
        try:
            original(signum, frame)
        except SystemExit:  # preempted: submitit asked SLURM to requeue the job, which reruns
            os._exit(1)  # the whole pack; stage nothing of this attempt, or it would land twice
        except UncompletedJobError:
            reason = (
                f"SLURM job {job} reached its time limit before this unit finished: raise the "
                "operation's time_limit or give each element fewer units (units_per_worker)"
            )
            worker_stop.stop(reason)  # raises in a running unit, and only there
        except Exception as error:  # submitit's `scontrol requeue` failed: never go on
            _requeue_again(job, error)

    signal.signal(signal.SIGUSR2, on_warning)
    # The warning also writes every thread's stack to the element's log, at the C level: where
    # a job that ran out of time was is then in its log, even if it was stuck in native code,
    # where no Python handler runs (``chain``: the handler above still runs after it). To a
    # copy of the log's descriptor: a unit captures its tools' output by swapping fd 2.
    global _stacks_to
    if _stacks_to is None:
        _stacks_to = os.fdopen(os.dup(sys.stderr.fileno()), "w", closefd=True)
    faulthandler.register(signal.SIGUSR2, file=_stacks_to, all_threads=True, chain=True)
    return True


def _requeue_again(job: str, error: Exception) -> NoReturn:
    """Ask SLURM again to requeue a preempted job, then end this attempt, staging nothing.

    A loaded controller can time out on a requeue it carried out (then its kill ends this
    process any moment) or drop it. Either way this attempt must not go on to stage: the
    requeued attempt reruns the pack, and both would be committed. If every request fails, the
    element ends failed without a result, and its units fail with this log's reason.
    """
    print(f"stemma: requeueing SLURM job {job} failed: {error}", file=sys.stderr, flush=True)
    for pause in REQUEUE_PAUSES:
        time.sleep(pause)
        try:
            asked = subprocess.run(
                ["scontrol", "requeue", job], capture_output=True, text=True, timeout=60
            )
        except (OSError, subprocess.SubprocessError) as failed:
            answer = str(failed)
        else:
            if asked.returncode == 0:
                print(f"stemma: requeued SLURM job {job}", file=sys.stderr, flush=True)
                break
            answer = asked.stderr.strip()
        print(f"stemma: scontrol requeue {job}: {answer}", file=sys.stderr, flush=True)
    os._exit(1)


def _job_id() -> str:
    array, task = os.environ.get("SLURM_ARRAY_JOB_ID"), os.environ.get("SLURM_ARRAY_TASK_ID")
    return f"{array}_{task}" if array and task else os.environ.get("SLURM_JOB_ID", "?")


@dataclass(frozen=True, kw_only=True)
class ElementFiles:
    """Where submitit keeps one element's files."""

    job_id: str
    result: Path
    stdout: Path
    stderr: Path


def read_outcome(files: ElementFiles) -> tuple[Any, BaseException | None]:
    """``(value, None)`` or ``(None, exception)`` from an element's result file (which exists)."""
    from submitit.core.utils import pickle_load

    warn_if_writable_by_others(files.result, what="a SLURM job's result")
    try:
        status, payload = pickle_load(files.result)
    except Exception as error:  # torn or unreadable: the job is as good as dead
        return None, crash_error(files, state="UNREADABLE", exit_code=None, detail=repr(error))
    if status == "success" and isinstance(payload, ElementResult):
        return payload.value, payload.error
    if status == "success":
        return payload, None
    return None, crash_error(files, state="FAILED", exit_code=None, detail=str(payload))


def crash_error(
    files: ElementFiles,
    *,
    state: str,
    exit_code: int | None,
    detail: str = "",
    reason: str | None = None,
) -> WorkerCrashedError:
    """The error of an element that ended without a result: its state, exit code and log.

    ``reason`` (the run was cancelled) replaces the hint the state would give.
    """
    tail = detail or _tail(files.stderr)
    hint = reason or _HINTS.get(state, "see the job's log")
    return WorkerCrashedError(
        f"SLURM job {files.job_id} ended {state}"
        f"{'' if exit_code is None else f' (exit code {exit_code})'} without a result; {hint}. "
        f"Log: {files.stderr} (stdout: {files.stdout})" + (f"\n{tail}" if tail else ""),
        exit_codes=[] if exit_code is None else [exit_code],
        peak_rss_mb=None,
    )


_HINTS = {
    "TIMEOUT": "it ran past its time limit: raise the operation's time_limit or give each "
    "element fewer units",
    "OUT_OF_MEMORY": "it ran out of memory: raise the operation's memory_gb or give each "
    "element fewer units",
    "CANCELLED": "it was cancelled (scancel, a stemma cancel, or an administrator)",
    "NODE_FAIL": "its node failed; rerun to retry the units",
    "PREEMPTED": "it was preempted and not requeued; rerun to retry the units",
}


def _tail(path: Path, lines: int = 20) -> str:
    return tail_lines(path, lines) or ""  # reads the file's last MiB at most


def worker_log_text(files: ElementFiles, max_lines: int = 200) -> str:
    """The tails of an element's stdout and stderr, each under a header naming its file."""
    parts: list[str] = []
    for path in (files.stdout, files.stderr):
        text = _tail(path, max_lines)
        if text:
            parts.append(f"==> {path} <==\n{text}")
    return "\n".join(parts)
