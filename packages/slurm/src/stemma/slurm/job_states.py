"""What sacct says about a run's jobs, parsed: pure functions, tested without a cluster."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass


class Phase(enum.Enum):
    """Where an array element is in its life, as far as the orchestrator cares."""

    WAITING = "waiting"
    """Queued, held or requeued: cancelling it drops it."""
    STARTED = "started"
    """Running (or finishing): it can no longer be dropped, only killed."""
    ENDED = "ended"
    """Finished one way or another; its result file, if any, is final."""


_WAITING = frozenset(
    {"PENDING", "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD", "RESV_DEL_HOLD", "SPECIAL_EXIT"}
)
_ENDED = frozenset(
    {
        "BOOT_FAIL",
        "CANCELLED",
        "COMPLETED",
        "DEADLINE",
        "FAILED",
        "NODE_FAIL",
        "OUT_OF_MEMORY",
        "PREEMPTED",
        "REVOKED",
        "TIMEOUT",
    }
)


@dataclass(frozen=True, kw_only=True)
class ElementState:
    """One array element's (or plain job's) line of ``sacct -X -P -o JobID,State,ExitCode``."""

    job_id: str
    """``123_4`` for an array element, ``123`` for a job that is not an array."""
    state: str
    """The state's first word: ``CANCELLED by 0`` becomes ``CANCELLED``."""
    exit_code: int | None
    """The exit code, negative for a signal (``0:9`` is -9); None if sacct gave none."""
    inferred: bool = False
    """Read off a line for several elements (a range, or the whole array), not the element's
    own: sacct shows a cancelled remainder under the array's original range, which may name
    elements that started a moment before and have no line of their own yet."""

    @property
    def phase(self) -> Phase:
        """Waiting, started or ended."""
        if self.state in _ENDED:
            return Phase.ENDED
        if self.state in _WAITING:
            return Phase.WAITING
        return Phase.STARTED


def parse_exit_code(text: str) -> int | None:
    """``"1:0"`` -> 1, ``"0:15"`` -> -15 (killed by signal 15), ``""`` -> None."""
    code, _, signal = text.strip().partition(":")
    try:
        number, signum = int(code or 0), int(signal or 0)
    except ValueError:
        return None
    return -signum if signum else number


def parse_sacct(lines: Iterable[str]) -> dict[str, ElementState]:
    """Element states by job id, from sacct's ``JobID|State|ExitCode`` lines.

    A line for a range of elements not split out yet (``123_[4-9%2]``) stands for each of
    them; a whole array not split at all is one line under its own id (see :func:`state_of`).
    """
    states: dict[str, ElementState] = {}
    for line in lines:
        parts = line.strip().split("|")
        if len(parts) < 3:
            continue
        state, exit_code = parts[1].split(" ")[0].rstrip("+"), parse_exit_code(parts[2])
        ids = expand_job_ids(parts[0])
        inferred = ids != [parts[0]]
        for job_id in ids:
            known = states.get(job_id)
            if known is None or known.inferred:  # an element's own line always wins
                states[job_id] = ElementState(
                    job_id=job_id, state=state, exit_code=exit_code, inferred=inferred
                )
    return states


def expand_job_ids(text: str) -> list[str]:
    """``123_[1,3-5%2]`` -> ``123_1 123_3 123_4 123_5``; any other id is returned as is."""
    head, bracket, rest = text.partition("_[")
    if not bracket:
        return [text]
    ids: list[str] = []
    for part in rest.rstrip("]").split("%")[0].split(","):
        low, _, high = part.partition("-")
        if low.isdigit() and (high or low).isdigit():
            ids.extend(f"{head}_{index}" for index in range(int(low), int(high or low) + 1))
    return ids


def state_of(job_id: str, states: dict[str, ElementState]) -> ElementState | None:
    """An element's state: its own line, else its whole array's line, else None (not listed).

    An array's own line stands for the elements not split off yet; an element that just
    started may lack a line of its own for a few seconds, so the poller confirms an ended
    array line with squeue before it believes it of an element.
    """
    return states.get(job_id) or states.get(array_id(job_id))


def array_id(job_id: str) -> str:
    """The job id sacct and scancel take for a whole array: ``123_4`` -> ``123``."""
    return job_id.split("_", 1)[0]
