"""``GroupCommit``: several steps' commits as one wave and one event write (a group commit).

A lazy graph's function steps are many and small: each one's commit on its own (a wave of one
bundle, then its final event) costs more than the step. Steps that finish while a commit is in
flight queue behind it; the next commit takes all of them at once — one wave of every queued
bundle, then one write of every queued final event — and only then are their results handed
back, so a step's record is committed before anything built on it starts.

It is the one commit path, batched: the same ``commit_wave`` and the same event write as a
single step's, with what a wave leaves out reported to the step whose bundle it was. Steps whose
units shared a worker pack share its one bundle: it is committed once, by whichever of them
commits first, and what it left out is reported to each of them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from stemma.core.execution_records import StepEvent
from stemma.core.store.protocols import RunStore, WaveProblem

if TYPE_CHECKING:
    from stemma.core.engine.run_context import RunContext

Settle = Callable[[Sequence[WaveProblem]], StepEvent]
"""Makes a step's final event once its commit says what it left out of the step's bundles."""


@dataclass(eq=False)
class _Entry:
    bundles: list[Path]
    settle: Settle
    done: threading.Event = field(default_factory=threading.Event)
    event: StepEvent | None = None
    error: BaseException | None = None


class _Run(Protocol):
    """What a group commit needs of its run: the store, its commit lock, its event writer."""

    @property
    def store(self) -> RunStore: ...

    @property
    def commit_lock(self) -> threading.Lock: ...

    def record(self, events: Sequence[StepEvent]) -> None: ...


class GroupCommit:
    """Commits the queued steps of one run together; thread-safe."""

    def __init__(self, ctx: _Run) -> None:
        self._ctx = ctx
        self._queue: list[_Entry] = []
        self._queue_lock = threading.Lock()
        self._leader = threading.Lock()
        self._committed: dict[Path, list[WaveProblem]] = {}
        """Bundles committed so far (shared by several steps' units), with their problems."""

    def commit(self, bundles: Sequence[Path], settle: Settle) -> StepEvent:
        """Commit ``bundles`` with whatever else is queued; return the step's final event.

        Raises:
            Exception: what the store raised committing the group (the bundles stay staged).
        """
        entry = _Entry(list(bundles), settle)
        with self._queue_lock:
            self._queue.append(entry)
        while not entry.done.is_set():
            if self._leader.acquire(timeout=0.05):
                try:
                    with self._queue_lock:
                        group, self._queue = self._queue, []
                    if group:
                        self._commit_group(group)
                finally:
                    self._leader.release()
        if entry.error is not None:
            raise entry.error
        assert entry.event is not None
        return entry.event

    def _commit_group(self, group: list[_Entry]) -> None:
        ctx = self._ctx
        try:
            fresh = list(
                dict.fromkeys(
                    b for entry in group for b in entry.bundles if b not in self._committed
                )
            )
            if fresh:
                with ctx.commit_lock:
                    report = ctx.store.commit_wave(fresh)
                for bundle in fresh:
                    self._committed[bundle] = []
                for problem in report.problems:
                    self._committed.setdefault(problem.bundle, []).append(problem)
            events: list[StepEvent] = []
            for entry in group:
                problems = [p for b in dict.fromkeys(entry.bundles) for p in self._committed[b]]
                entry.event = entry.settle(problems)
                events.append(entry.event)
            ctx.record(events)  # with every event deferred until now: one write
        except BaseException as error:
            for entry in group:
                entry.error = error
        finally:
            for entry in group:
                entry.done.set()


_making = threading.Lock()


def group_commit_of(ctx: RunContext) -> GroupCommit:
    """The run's one group commit, made the first time one of its function steps commits."""
    with _making:
        if ctx.group_commit is None:
            ctx.group_commit = GroupCommit(ctx)
        return ctx.group_commit
