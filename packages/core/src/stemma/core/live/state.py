"""A running pipeline's live state file: what it writes, and how readers see it.

``{root}/runs/{run_id}/state.json`` is replaced atomically (write, then rename) at most once a
second while the run lives. Readers never see half a file. A run whose heartbeat is older than
the stale timeout (or whose process is gone, on this host) is ``stale``, not running: its
orchestrator died without saying so.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import threading
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from stemma.core.backends.worker_deaths import process_alive
from stemma.core.crash_points import crash_point
from stemma.core.run_ids import check_run_id
from stemma.core.store.locations import resolve_root
from stemma.core.store.root_urls import is_url
from stemma.core.unit_counts import UnitCounts

STATE_FILE = "state.json"
_WRITING = threading.Lock()
STALE_ENV = "STEMMA_STALE_SECONDS"
STALE_AFTER_SECONDS = float(os.environ.get(STALE_ENV, "30"))
"""Default: a heartbeat older than this makes a running run ``stale`` (``$STEMMA_STALE_SECONDS``,
30 s when unset; the writer refreshes it every second)."""


class RunStatus(StrEnum):
    """A run as a reader sees it."""

    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    STALE = "stale"
    """Written as running, but the heartbeat stopped: the orchestrator died."""


FINAL_STEP_STATUSES = frozenset({"completed", "failed", "cancelled", "skipped"})
"""Step statuses a step never leaves."""
STALE_STEP = "stale"
"""What a reader shows for a step left ``running`` by an orchestrator that is gone."""


@dataclass(frozen=True, kw_only=True)
class StepState:
    """One step's live progress. Counts are units (execution batches), not artifacts.

    The counts mean what :class:`~stemma.core.unit_counts.UnitCounts` says, as in
    ``StepResult`` and the steps event log: ``succeeded + failed + cancelled + running`` and
    the pending units make ``total``, and ``cached`` is part of ``succeeded``.
    """

    number: int
    name: str
    operation: str
    status: str = "pending"
    """``pending``, ``running``, then a final step status (``completed``, ``failed``,
    ``cancelled``, ``skipped``); readers show ``stale`` for a step left running by a dead
    orchestrator."""
    cache: str | None = None
    """``step`` for a step-level cache hit."""
    total: int = 0
    """Every unit the step has, cached and cancelled ones included (known once its inputs
    are resolved)."""
    cached: int = 0
    """Of ``succeeded``, units the execution cache answered (a step-level hit: all)."""
    succeeded: int = 0
    """Units whose outputs the step has: run and succeeded, or cached."""
    failed: int = 0
    """Units that ran and failed, or whose result could not be committed."""
    cancelled: int = 0
    """Units that never ran to an end because the step stopped first."""
    running: int = 0
    """Units handed to the backend and not yet back."""
    started_at: str | None = None
    ended_at: str | None = None
    jobs: Mapping[str, int] = field(default_factory=dict[str, int])
    """Scheduler job states and how many elements are in each (SLURM), else empty."""
    upstream: tuple[int, ...] = ()
    """The numbers of the steps whose outputs this one reads (empty in files written before
    the field existed: readers then show the steps flat)."""

    @property
    def counts(self) -> UnitCounts:
        """The step's counts, as every view of a step counts them."""
        return UnitCounts(
            total=self.total,
            succeeded=self.succeeded,
            cached=self.cached,
            failed=self.failed,
            cancelled=self.cancelled,
            running=self.running,
        )

    @property
    def done(self) -> int:
        """Units finished one way or another: succeeded (cached included), failed, cancelled."""
        return self.counts.done

    def settled(self, status: str, *, ended_at: str) -> StepState:
        """This step as final: ``status``, and its running and pending units cancelled."""
        counts = self.counts.settled()
        return replace(
            self,
            status=status,
            total=counts.total,
            cancelled=counts.cancelled,
            running=0,
            ended_at=self.ended_at or ended_at,
        )


@dataclass(frozen=True, kw_only=True)
class RunState:
    """The whole live state of one run, as written in ``state.json``."""

    run_id: str
    name: str
    status: RunStatus
    pid: int
    host: str
    root: str
    backend: str
    started_at: str
    heartbeat: str
    """When the orchestrator last wrote this file (UTC, ISO 8601)."""
    ended_at: str | None = None
    cancel_level: int = 0
    """The highest cancellation level applied so far (0: none)."""
    reaped_at: str | None = None
    """When ``stemma reap`` settled the run after its orchestrator died (None: it did not)."""
    user: str = ""
    """Who started the run (login name; empty in files written before the field existed)."""
    command: tuple[str, ...] = ()
    """``sys.argv`` of the orchestrator as the script sees it: the script and its arguments
    (what tells apart runs of one pipeline, and what a resume would run again)."""
    cwd: str = ""
    """The orchestrator's working directory, which relative paths in ``command`` are from."""
    launch: tuple[str, ...] = ()
    """The orchestrator process's whole command line as it was started: its interpreter
    (``sys.executable``), the interpreter's options and what followed (``sys.orig_argv``).
    What ``stemma resume`` runs again, in ``cwd``; empty in files written before it was kept."""
    resumes: str = ""
    """The run this one resumes (started by ``stemma resume RUN``); empty otherwise."""
    steps: tuple[StepState, ...] = ()

    def to_json(self) -> str:
        """The file's content."""
        return json.dumps(asdict(self), indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> RunState:
        """Parse a state file's content.

        Raises:
            ValueError: not a state file (the message says what is wrong).
        """
        try:
            data: dict[str, Any] = json.loads(text)
            steps = tuple(_step_state(step) for step in data.pop("steps", []))
            data["status"] = RunStatus(data["status"])
            # JSON has no tuples: give the field back its declared type, so states compare equal.
            data["command"] = tuple(data.get("command", ()))
            data["launch"] = tuple(data.get("launch", ()))
            return cls(**data, steps=steps)
        except (json.JSONDecodeError, TypeError, KeyError) as err:
            raise ValueError(f"not a stemma run state file: {err}") from err

    def seen_at(self, now: dt.datetime, stale_after: float = STALE_AFTER_SECONDS) -> RunState:
        """This state as a reader should show it at ``now``: ``stale`` if the writer is gone."""
        if self.status is not RunStatus.RUNNING:
            return self
        age = (now - dt.datetime.fromisoformat(self.heartbeat)).total_seconds()
        if age > stale_after or not _alive_here(self.host, self.pid):
            return self.stale()
        return self

    def stale(self) -> RunState:
        """This run as readers show it once its orchestrator is gone.

        Nothing runs any more: its running steps read ``stale`` (no unit running, no ETA,
        their time stopped at the last heartbeat); the counts stay as last written.
        """
        steps = tuple(
            replace(step, status=STALE_STEP, running=0, ended_at=self.heartbeat)
            if step.status in ("running", STALE_STEP)
            else step
            for step in self.steps
        )
        return replace(self, status=RunStatus.STALE, steps=steps)

    def settled(self, status: RunStatus, *, ended_at: str) -> RunState:
        """This run as final: ``status``; running steps cancelled, pending ones skipped.

        A step still running when a run ends (a hard cancel, a dead orchestrator being
        reaped) never finishes: its running and pending units count as cancelled.
        """
        steps = tuple(
            step
            if step.status in FINAL_STEP_STATUSES
            else step.settled(
                "skipped" if step.status == "pending" else "cancelled", ended_at=ended_at
            )
            for step in self.steps
        )
        return replace(self, status=status, steps=steps, ended_at=self.ended_at or ended_at)


def _step_state(data: dict[str, Any]) -> StepState:
    # JSON has no tuples: give the field back its declared type, so states compare equal.
    upstream: list[int] = data.pop("upstream", [])
    return StepState(**data, upstream=tuple(upstream))


def run_dir(root: str | os.PathLike[str], run_id: str) -> Path:
    """``{root}/runs/{run_id}``: the run's live state and control requests.

    A root given as a bucket's URL has its live state in its local half on this machine.

    Raises:
        ValueError: ``run_id`` is not a run id (a path, ``..``): nothing outside ``runs/``.
        RootURLError: ``root`` is a URL that cannot be used here.
    """
    check_run_id(run_id)
    return live_root(root) / "runs" / run_id


def live_root(root: str | os.PathLike[str]) -> Path:
    """The directory holding ``root``'s live channel: the root, or a bucket root's local half.

    A path is taken as given (relative stays relative: no ``$STEMMA_ROOT``, no ``absolute``),
    so only a URL costs anything (the local half's marker read, once per call).
    """
    given = os.fspath(root)
    return resolve_root(given) if is_url(given) else Path(given)


def write_state(root: str | os.PathLike[str], state: RunState) -> None:
    """Replace the run's state file atomically."""
    directory = run_dir(root, state.run_id)
    directory.mkdir(parents=True, exist_ok=True)
    partial = directory / f".{STATE_FILE}.{uuid.uuid4().hex}.tmp"  # threads never share one
    partial.write_text(state.to_json())
    with _WRITING:  # the last writer in this process wins, whole
        partial.replace(directory / STATE_FILE)
    crash_point("live.state")


def read_state(
    root: str | os.PathLike[str],
    run_id: str,
    *,
    now: dt.datetime | None = None,
    stale_after: float = STALE_AFTER_SECONDS,
) -> RunState:
    """The run's state as of ``now`` (stale if its heartbeat stopped).

    Raises:
        FileNotFoundError: no live state for that run under ``root`` (the message names the path).
        ValueError: the file is not a state file.
    """
    path = run_dir(root, run_id) / STATE_FILE
    if not path.is_file():
        raise FileNotFoundError(f"no live state for run {run_id!r}: {path} does not exist")
    state = RunState.from_json(path.read_text())
    return state.seen_at(now or dt.datetime.now(dt.UTC), stale_after)


def list_states(
    root: str | os.PathLike[str], *, stale_after: float = STALE_AFTER_SECONDS
) -> list[RunState]:
    """Every run with a state file under ``root``, newest first; unreadable files are skipped."""
    now = dt.datetime.now(dt.UTC)
    found: list[RunState] = []
    runs = live_root(root) / "runs"
    paths = list(runs.glob(f"*/{STATE_FILE}")) if runs.is_dir() else list[Path]()
    for path in paths:
        try:
            found.append(RunState.from_json(path.read_text()).seen_at(now, stale_after))
        except (OSError, ValueError):
            continue  # being replaced, or not ours: the next refresh shows it
    return sorted(found, key=lambda state: state.started_at, reverse=True)


def utc_now() -> str:
    """Now, as the state file writes times."""
    return dt.datetime.now(dt.UTC).isoformat()


def _alive_here(host: str, pid: int) -> bool:
    """False only when the run is on this host and its process is gone (or a zombie)."""
    if host != socket.gethostname():
        return True  # another machine: only the heartbeat can tell
    return process_alive(pid)
