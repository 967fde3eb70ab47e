"""What a lazy run's step threads hand its run thread: staged outcomes and open attempts.

Step threads stage their outcomes; the run's thread commits everything staged meanwhile together
(:meth:`OutcomeQueue.commit`: one Delta append per table for many steps, not one per step)
before it releases the steps' dependents.

A step's ``running`` event does not get a commit of its own either. It travels in the step's
staged bundle, beside its final event, unless the step is still running when the run's thread
next looks (:meth:`OutcomeQueue.record_open`, after about a second): then the events of every
attempt open that long are appended together, so the history shows them running, and a run
that dies mid-step leaves its trace. At 50 no-op steps, that per-step append was three quarters
of a lazy run's time (benchmarks/README.md).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from stemma.core.execution_records import StepOutputs
from stemma.core.records import StepOutcome, StepStarted
from stemma.core.store import WaveOutcome

log = logging.getLogger(__name__)


@runtime_checkable
class StagingStore(Protocol):
    """A store that stages outcomes and commits staged bundles together (``DeltaStore``)."""

    def stage_outcome(self, outcome: StepOutcome) -> Path:
        """Write the outcome's staged bundle and return it."""
        ...

    def commit_staged(self, bundle: Path) -> bool:
        """Commit one staged bundle idempotently and delete it."""
        ...

    def commit_wave(
        self, bundles: Sequence[Path], *, step_outputs: StepOutputs | None = None
    ) -> WaveOutcome:
        """Commit staged bundles together, one append per table, idempotently."""
        ...

    def record_started_events(self, events: Sequence[StepStarted]) -> None:
        """Append the ``running`` events of several attempts in one commit."""
        ...


class OutcomeQueue:
    """Outcomes staged by step threads, and attempts still open, for the run's thread."""

    def __init__(self, store: StagingStore) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._staged: list[tuple[str, Path]] = []
        self._open: dict[str, StepStarted] = {}

    def begin(self, started: StepStarted) -> None:
        """An attempt started: its ``running`` event waits for its bundle or :meth:`record_open`."""
        with self._lock:
            self._open[started.step_run_id] = started

    def stage(self, fingerprint: str, outcome: StepOutcome) -> None:
        """Stage the outcome of step ``fingerprint``; :meth:`commit` commits it later.

        The bundle carries the attempt's ``running`` event too, unless it was recorded already.
        """
        with self._lock:
            started = self._open.pop(outcome.started.step_run_id, None)
        if started is not None:
            outcome = dataclasses.replace(outcome, carries_start=True)
        try:
            bundle = self._store.stage_outcome(outcome)
        except BaseException:
            self._reopen([started] if started is not None else [])  # still to be recorded
            raise
        with self._lock:
            self._staged.append((fingerprint, bundle))

    def record_open(self, older_than: float) -> int:
        """Append, together, the ``running`` events of attempts open ``older_than`` seconds.

        Returns:
            How many events were appended. A failed append is logged, and its events wait for
            their bundles or the next call: they are the run's history, not its results, and
            the run goes on.
        """
        cutoff = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=older_than)
        with self._lock:
            due = [e for e in self._open.values() if e.timestamp <= cutoff]
            for event in due:
                del self._open[event.step_run_id]
        if not due:
            return 0
        try:
            self._store.record_started_events(due)
        except Exception:
            log.exception("could not record %d running step event(s)", len(due))
            self._reopen(due)
            return 0
        return len(due)

    def _reopen(self, events: list[StepStarted]) -> None:
        """Open again events taken out but not recorded (nothing else holds them meanwhile)."""
        with self._lock:
            for event in events:
                self._open.setdefault(event.step_run_id, event)

    def commit(self) -> dict[str, Exception | None]:
        """Commit every outcome staged since the last call, together.

        Returns:
            Per step fingerprint committed (or not), None or the error that kept it staged (it
            stays for ``recover()``).
        """
        with self._lock:
            staged, self._staged = self._staged, []
        if not staged:
            return {}
        try:
            if len(staged) == 1:  # a wave's claim costs more than it saves for one bundle
                self._store.commit_staged(staged[0][1])
                return {staged[0][0]: None}
            report = self._store.commit_wave([bundle for _, bundle in staged])
        except Exception as err:
            return dict.fromkeys((fingerprint for fingerprint, _ in staged), err)
        left_out = {problem.bundle: problem.error for problem in report.problems}
        return {
            fingerprint: RuntimeError(left_out[bundle]) if bundle in left_out else None
            for fingerprint, bundle in staged
        }
