"""The SLURM command-line calls the backend makes, in one place, with errors that say what to do.

Everything that starts a scheduler process goes through :func:`run_slurm`, so a missing command
or a controller that does not answer is reported the same way everywhere.
"""

from __future__ import annotations

import getpass
import shutil
import subprocess
import time
from collections.abc import Iterable, Sequence

from stemma.slurm.errors import START_HINT, ClusterUnavailableError

_TIMEOUT_SECONDS = 60.0
_SCANCEL_BATCH = 500
"""Job ids per scancel call: one call for a whole run, split only so argv stays short."""
_SQUEUE_RETRY_WAITS = (0.5, 2.0)
"""Seconds before asking squeue again after it failed for a reason other than unknown ids."""
_NO_SUCH_JOB = "Invalid job id specified"


def run_slurm(argv: Sequence[str], *, timeout: float = _TIMEOUT_SECONDS, check: bool = True) -> str:
    """Run a SLURM command and return its stdout.

    Args:
        argv: the command.
        timeout: seconds to wait for it.
        check: raise when it exits non-zero (scancel does for jobs that already ended, which
            is not a failure to cancel).

    Raises:
        ClusterUnavailableError: the command is not installed, timed out or failed; the message
            carries its stderr and how to start a cluster.
    """
    done = _call(argv, timeout)
    if check and done.returncode != 0:
        raise _failed(argv, done)
    return done.stdout


def _call(argv: Sequence[str], timeout: float) -> subprocess.CompletedProcess[str]:
    if shutil.which(argv[0]) is None:
        raise ClusterUnavailableError(
            f"{argv[0]!r} is not on PATH: this machine has no SLURM client; {START_HINT}"
        )
    try:
        return subprocess.run(
            list(argv), capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired as error:
        raise ClusterUnavailableError(
            f"{' '.join(argv)} did not answer within {timeout:.0f}s; is slurmctld running? "
            f"{START_HINT}"
        ) from error


def _failed(argv: Sequence[str], done: subprocess.CompletedProcess[str]) -> ClusterUnavailableError:
    return ClusterUnavailableError(
        f"{' '.join(argv)} failed with exit code {done.returncode}: "
        f"{(done.stderr or done.stdout).strip()}; {START_HINT}"
    )


def max_array_size() -> int:
    """The cluster's ``MaxArraySize``: an array's indices must stay below it."""
    for line in run_slurm(["scontrol", "show", "config"]).splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "MaxArraySize":
            return int(value.strip())
    return 1001  # SLURM's default when the controller does not report it


def sacct_lines(job_ids: Iterable[str]) -> list[str]:
    """``JobID|State|ExitCode`` of the given jobs and their array elements, in one sacct call."""
    ids = sorted(set(job_ids))
    if not ids:
        return []
    out = run_slurm(["sacct", "-X", "-n", "-P", "-o", "JobID,State,ExitCode", "-j", ",".join(ids)])
    return [line for line in out.splitlines() if line.strip()]


def squeue_lines(job_ids: Iterable[str]) -> list[str]:
    """``JobID|State|`` of the given arrays' elements the controller holds, one per element.

    squeue is the controller's own, current view (sacct lags it by seconds); finished jobs
    leave it, so only waiting and running elements are listed.
    """
    ids = sorted(set(job_ids))
    if not ids:
        return []
    argv = ["squeue", "-h", "-r", "-o", "%i|%T|", "-j", ",".join(ids)]
    done = _call(argv, _TIMEOUT_SECONDS)
    for wait in _SQUEUE_RETRY_WAITS:
        if done.returncode == 0 or _NO_SUCH_JOB in done.stderr:
            break
        # a loaded controller's "Socket timed out": asked again, never read as "nothing held",
        # which would fail running elements or submit again work a rerun could adopt
        time.sleep(wait)
        done = _call(argv, _TIMEOUT_SECONDS)
    if done.returncode == 0:
        return [line for line in done.stdout.splitlines() if line.strip()]
    if _NO_SUCH_JOB in done.stderr:
        return []  # every id has left the controller (one unknown id fails the call)
    raise _failed(argv, done)


def squeue_jobs() -> list[tuple[str, str]]:
    """``(job id, job name)`` of every job of this user that the controller still holds.

    Array elements that have not started yet are listed once, under the array's job id.
    """
    out = run_slurm(["squeue", "-h", "-u", getpass.getuser(), "-o", "%F|%i|%j"])
    jobs: list[tuple[str, str]] = []
    for line in out.splitlines():
        array_id, job_id, name = [*line.split("|", 2), "", ""][:3]
        jobs.append((array_id or job_id, name))
    return jobs


def scancel(
    job_ids: Iterable[str], *, signal: str | None = None, pending_only: bool = False
) -> None:
    """Cancel (or, with ``signal``, only signal) the given jobs or array elements.

    Args:
        job_ids: ``123`` for a whole array, ``123_4`` for one element.
        signal: send this signal (``TERM``, ``KILL``) to the jobs instead of cancelling them.
        pending_only: leave elements that already started alone.
    """
    ids = sorted(set(job_ids))
    for start in range(0, len(ids), _SCANCEL_BATCH):
        argv = ["scancel", "--quiet"]
        if signal is not None:
            # Other signals go to the job steps only; KILL also takes the batch shell.
            argv += [f"--signal={signal}", *(["--full"] if signal == "KILL" else [])]
        if pending_only:
            argv.append("--state=PENDING")
        # Non-zero when a listed job already ended (or, with a state filter, did not match).
        run_slurm([*argv, *ids[start : start + _SCANCEL_BATCH]], check=False)


def check_cluster() -> None:
    """Raise unless ``sinfo`` answers (a cheap first check before a wave is submitted).

    Raises:
        ClusterUnavailableError: no SLURM client, or the controller does not answer.
    """
    run_slurm(["sinfo", "-h", "-o", "%P"], timeout=30)
