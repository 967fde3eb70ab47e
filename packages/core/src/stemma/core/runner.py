"""``StepRunner``: run a graph of specs, each step once, in parallel where the graph allows.

It consumes specs lazily (a generator is fine), expands unseen deps depth-first, asks the store
once per batch of new steps which are built already, never runs below a built step, runs ready
steps on a thread pool up to ``max_concurrent``, cascades a failure to dependents while
independent branches finish, and then raises one error chaining the first cause.

Steps stage their outcomes; this thread commits all those staged since its last look together
(one Delta append per table for the lot) and only then releases their dependents, so a step's
record is committed before anything built on it runs, as when each step committed its own.
"""

from __future__ import annotations

import concurrent.futures as cf
import datetime as dt
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from stemma.core.artifact import Artifact
from stemma.core.errors import StepFailedError
from stemma.core.outcome_queue import OutcomeQueue, StagingStore
from stemma.core.records import StepSkipped
from stemma.core.run_ids import new_attempt_id, new_run_id
from stemma.core.step_execution import StepCodeError, execute_step
from stemma.core.step_graph import expand, needed
from stemma.core.step_planner import StepPlanner
from stemma.core.step_spec import StepSpec
from stemma.core.store import Store

log = logging.getLogger("stemma.core.runner")

DEFAULT_MAX_CONCURRENT = 8
OPEN_STEPS_RECORDED_AFTER = 1.0
"""Seconds a step runs before its ``running`` event is appended on its own (a quicker step's
goes in its staged bundle, with its final event: see :mod:`stemma.core.outcome_queue`)."""


@dataclass
class _RunState:
    """Book-keeping of one ``run`` call; lives on the calling thread only."""

    specs: dict[str, StepSpec] = field(default_factory=dict[str, StepSpec])
    artifacts: dict[str, Artifact] = field(default_factory=dict[str, Artifact])
    waiting: dict[str, int] = field(default_factory=dict[str, int])
    dependents: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    running: dict[cf.Future[Artifact], str] = field(default_factory=dict[cf.Future[Artifact], str])
    failed: dict[str, BaseException] = field(default_factory=dict[str, BaseException])
    skipped: set[str] = field(default_factory=set[str])
    scheduled: set[str] = field(default_factory=set[str])
    step_count: int = 0
    outcomes: OutcomeQueue | None = None
    """Where steps stage their outcomes for this thread to commit (None: each commits its own)."""
    commit_errors: dict[str, Exception] = field(default_factory=dict[str, Exception])
    """Steps whose staged outcome could not be committed (it stays for ``recover()``)."""


class StepRunner:
    """Executes :class:`StepSpec` graphs against one store."""

    def __init__(
        self,
        store: Store,
        *,
        max_concurrent: int = DEFAULT_MAX_CONCURRENT,
        run_id: str | None = None,
    ) -> None:
        if max_concurrent < 1:
            raise ValueError(f"max_concurrent must be at least 1, got {max_concurrent}")
        self.store = store
        self.max_concurrent = max_concurrent
        self.run_id = run_id or new_run_id("lazy")
        self.planner = StepPlanner(store)

    def run(self, specs: Iterable[StepSpec]) -> dict[str, Artifact]:
        """Build every spec (and its deps); return artifacts by fingerprint.

        Raises:
            StepCycleError: the graph has a cycle (before anything of that part runs).
            StepFailedError: a step failed; independent steps still ran. ``__cause__`` is the
                first failure's own exception.
        """
        self.store.layout.ensure()
        recovered = self.store.recover()
        if recovered:
            log.info("committed %d execution(s) staged by an earlier, interrupted run", recovered)
        state = _RunState()
        if isinstance(self.store, StagingStore):
            state.outcomes = OutcomeQueue(self.store)
        try:
            with cf.ThreadPoolExecutor(
                self.max_concurrent, thread_name_prefix="stemma-step"
            ) as pool:
                # A list is known whole: one store query for all of it. A generator is consumed
                # lazily, one root at a time, so its first steps start before it is exhausted.
                batches = [list(specs)] if isinstance(specs, Sequence) else ([r] for r in specs)
                for roots in batches:
                    self._add(roots, state, pool)
                    self._collect(state, pool, block=False)
                while state.running:
                    self._collect(state, pool, block=True)
        finally:  # what steps staged is committed, also when the run itself fails
            self._commit(state)
            if state.outcomes is not None:  # attempts that never staged an outcome
                state.outcomes.record_open(older_than=0)
        if state.failed:
            self.store.record_skipped(self._skipped_events(state))
            raise _failure(state)
        return state.artifacts

    def _skipped_events(self, state: _RunState) -> list[StepSkipped]:
        """One ``skipped`` event per step not run, naming the failed step it waited on."""
        now = dt.datetime.now(dt.UTC)
        events: list[StepSkipped] = []
        for fingerprint in sorted(state.skipped):
            spec = state.specs[fingerprint]
            culprit = next(
                (
                    d.name
                    for d in spec.deps
                    if d.fingerprint in state.failed or d.fingerprint in state.skipped
                ),
                "?",
            )
            events.append(
                StepSkipped(
                    step=spec.identity(),
                    step_run_id=new_attempt_id(),
                    run_id=self.run_id,
                    timestamp=now,
                    reason="dependency_failed",
                    detail=f"not run: its dependency {culprit!r} failed or was not run",
                )
            )
        return events

    def _add(self, roots: list[StepSpec], state: _RunState, pool: cf.ThreadPoolExecutor) -> None:
        new = [spec for root in roots for spec in expand(root, state.specs)]
        for fingerprint, artifact in self.planner.built(new).items():
            state.artifacts.setdefault(fingerprint, artifact)
        for spec in (spec for root in roots for spec in needed(root, state.artifacts)):
            if spec.fingerprint in state.scheduled:
                continue
            state.scheduled.add(spec.fingerprint)
            pending = [
                dep.fingerprint for dep in spec.deps if dep.fingerprint not in state.artifacts
            ]
            if any(dep in state.failed or dep in state.skipped for dep in pending):
                state.skipped.add(spec.fingerprint)
                self._cascade(spec.fingerprint, state)
                continue
            if log.isEnabledFor(logging.INFO):  # the reason costs a store query
                log.info(
                    "step %s (%s) will run: %s",
                    spec.name,
                    spec.fingerprint[:8],
                    self.planner.reason(spec),
                )
            state.waiting[spec.fingerprint] = len(pending)
            for dep in pending:
                state.dependents.setdefault(dep, []).append(spec.fingerprint)
            if not pending:
                self._submit(spec, state, pool)

    def _submit(self, spec: StepSpec, state: _RunState, pool: cf.ThreadPoolExecutor) -> None:
        state.step_count += 1
        deps = {dep.fingerprint: state.artifacts[dep.fingerprint] for dep in spec.deps}
        future = pool.submit(
            execute_step,
            spec,
            store=self.store,
            deps=deps,
            run_id=self.run_id,
            step_number=state.step_count,
            outcomes=state.outcomes,
        )
        state.running[future] = spec.fingerprint

    def _commit(self, state: _RunState) -> None:
        """Commit the outcomes staged since the last call, together."""
        if state.outcomes is not None:
            for fingerprint, error in state.outcomes.commit().items():
                if error is not None:
                    state.commit_errors[fingerprint] = error

    def _collect(self, state: _RunState, pool: cf.ThreadPoolExecutor, *, block: bool) -> None:
        if not state.running:
            return
        while True:
            finished, _ = cf.wait(
                list(state.running),
                timeout=OPEN_STEPS_RECORDED_AFTER if block else 0,
                return_when=cf.FIRST_COMPLETED,
            )
            if state.outcomes is not None:  # steps running a while show in the history
                state.outcomes.record_open(older_than=OPEN_STEPS_RECORDED_AFTER)
            if finished or not block:
                break
        self._commit(state)  # every finished step's outcome, before its dependents run
        for future in finished:
            fingerprint = state.running.pop(future)
            error = future.exception() or state.commit_errors.pop(fingerprint, None)
            if error is not None:
                state.failed[fingerprint] = error
                self._cascade(fingerprint, state)
                continue
            state.artifacts[fingerprint] = future.result()
            for dependent in state.dependents.pop(fingerprint, []):
                state.waiting[dependent] -= 1
                if state.waiting[dependent] == 0 and dependent not in state.skipped:
                    self._submit(state.specs[dependent], state, pool)

    def _cascade(self, fingerprint: str, state: _RunState) -> None:
        stack = list(state.dependents.pop(fingerprint, []))
        while stack:
            dependent = stack.pop()
            if dependent not in state.skipped:
                state.skipped.add(dependent)
                stack.extend(state.dependents.pop(dependent, []))


def _failure(state: _RunState) -> StepFailedError:
    failed = [state.specs[fp].name for fp in state.failed]
    skipped = sorted(state.specs[fp].name for fp in state.skipped)
    first = next(iter(state.failed.values()))
    message = f"{len(failed)} step(s) failed: {', '.join(failed)}"
    if skipped:
        message += f"; {len(skipped)} not run because a dependency failed: {', '.join(skipped)}"
    error = StepFailedError(message, failed=failed, skipped=skipped)
    error.__cause__ = (
        first.__cause__ if isinstance(first, StepCodeError) and first.__cause__ else first
    )
    return error
