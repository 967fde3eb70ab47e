"""``EngineRun``: one run of the engine, whichever front door fills it (design note 0008).

It owns what a run has: its context (store, backend, live counts), the live channel that
writes ``runs/{id}/state.json`` and reads cancel requests, the canceller of the three presses,
and the step scheduler. ``Pipeline`` submits steps one by one as a script calls it; the lazy
``run()`` submits a lowered graph. Neither the scheduler nor anything below it knows which.

The scheduler is event-driven: a step goes to a step thread only once every step it reads from
has finished (each finished step's future counts its dependents down), so no thread is ever
blocked waiting for another step, and independent ready steps never queue behind a waiting one.
A function step does not hold its thread while its unit runs either: it hands the unit to the
run's :class:`FunctionPacks` (which packs ready steps' units together) and finishes on a step
thread when the unit comes back.
"""

from __future__ import annotations

import atexit
import contextlib
import datetime as dt
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait

from stemma.core.cancel_levels import CancelLevel
from stemma.core.engine.cancel.cancellation import Canceller
from stemma.core.engine.cancel.opening_presses import OpeningPresses
from stemma.core.engine.cancel.pause_points import pause_point
from stemma.core.engine.dispatch.function_packs import FunctionPacks, PendingStep
from stemma.core.engine.dispatch.step_dispatch import run_step
from stemma.core.engine.planned_step import PlannedStep
from stemma.core.engine.references import StepResult
from stemma.core.engine.run_context import RunContext
from stemma.core.live.channel import LiveChannel

DEFAULT_PARALLEL_STEPS = 4
"""Steps that may dispatch and commit at once (their units share the backend's workers)."""
OPEN_STEPS_RECORDED_AFTER = 1.0
"""Seconds a deferred event (a quick step's ``running``) waits for the next write before it
is written on its own, so a long step shows as running in the history while it runs."""


class EngineRun:
    """Schedules a run's steps as their inputs finish, and ends the run cleanly."""

    def __init__(
        self,
        context: RunContext,
        *,
        parallel_steps: int = DEFAULT_PARALLEL_STEPS,
        on_step_done: Callable[[PlannedStep], None] | None = None,
        opening: OpeningPresses | None = None,
    ) -> None:
        """Start the live channel of ``context``'s run; steps start as they are submitted.

        Args:
            context: the run's shared context (store recovered, backend opened).
            parallel_steps: steps dispatched at once.
            on_step_done: called on a step thread after each step's future is settled.
            opening: the presses watched since the run began opening (``watched_opening``):
                handed to the run's canceller before the run is listed.

        Raises:
            ValueError: ``parallel_steps`` below 1.
            OpeningInterrupted: a press landed before the run was listed (nothing started).
        """
        if parallel_steps < 1:
            raise ValueError(f"parallel_steps must be at least 1, got {parallel_steps}")
        self.ctx = context
        self.canceller = Canceller(
            context, signals=opening.signals if opening is not None else None
        )
        if opening is not None:  # from here every press is the run's; before, none was
            opening.hand_over(self.canceller.press)
        self._threads = ThreadPoolExecutor(parallel_steps, thread_name_prefix="stemma-step")
        self._lock = threading.Lock()
        self._waiting: dict[int, int] = {}
        self._on_step_done = on_step_done
        self._ended = False
        self._packs = FunctionPacks(context, most_packs=context.max_workers)
        context.function_units = self._packs
        self._live = LiveChannel(
            context.store.layout.root, context.monitor, self.canceller.requested_elsewhere
        )
        try:
            self._live.start()
        except BaseException:
            self.canceller.close()  # never listed: nothing would put the handlers back
            raise
        pause_point("opening.listed")  # the state file is written: the run is listed
        self._stop_flusher = threading.Event()
        self._flusher = threading.Thread(
            target=self._flush_old_events, name="stemma-open-steps", daemon=True
        )
        self._flusher.start()
        # Deferred events (cache hits, open attempts) wait for the next commit; never lose them
        # to a script that ends without finalize().
        atexit.register(self._flush_events)

    @property
    def run_id(self) -> str:
        """The run's id."""
        return self.ctx.run_id

    def submit(self, step: PlannedStep) -> Future[StepResult]:
        """Add ``step`` to the run; it starts once every step it reads from has finished.

        Raises:
            RuntimeError: the run has ended.
        """
        ctx = self.ctx
        with self._lock:
            if self._ended:
                raise RuntimeError(f"run {ctx.run_id} has ended; start another")
            ctx.steps[step.number] = step
            upstream = [ctx.steps[n].future for n in step.upstream_steps()]
            pending = [future for future in upstream if not future.done()]
            self._waiting[step.number] = len(pending)
        ctx.monitor.step_submitted(
            step.number,
            step.name,
            step.operation.label(),
            upstream=tuple(step.upstream_steps()),
        )
        self.canceller.install_signal_handlers()  # from the main thread only
        if not pending:
            self._start(step)
        for future in pending:
            future.add_done_callback(lambda _, step=step: self._one_input_done(step))
        return step.future

    def _one_input_done(self, step: PlannedStep) -> None:
        with self._lock:
            self._waiting[step.number] -= 1
            ready = self._waiting[step.number] == 0
        if ready:
            self._start(step)

    def _start(self, step: PlannedStep) -> None:
        with self._lock:
            self._waiting.pop(step.number, None)
        self._threads.submit(self._run, step)

    def _run(self, step: PlannedStep) -> None:
        try:
            result = run_step(self.ctx, step)
        except BaseException as error:  # an orchestration fault: the caller sees it on result()
            self._settle(step, error)
            return
        if isinstance(result, PendingStep):  # its unit is out: finish when it comes back
            result.outcome.add_done_callback(
                lambda _, step=step, pending=result: self._threads.submit(
                    self._finish, step, pending
                )
            )
            return
        self._settle(step, result)

    def _finish(self, step: PlannedStep, pending: PendingStep) -> None:
        try:
            result = pending.finish(pending.outcome.result())
        except BaseException as error:
            self._settle(step, error)
            return
        self._settle(step, result)

    def _settle(self, step: PlannedStep, outcome: StepResult | BaseException) -> None:
        if isinstance(outcome, BaseException):
            # After a hard cancel the interpreter is shutting down under the step (a commit's
            # thread pool refuses work): that is the cancel, not a failure; what was staged
            # stays staged for the next start.
            hard = self.ctx.cancel_level >= CancelLevel.HARD
            self.ctx.monitor.step_finished(step.number, "cancelled" if hard else "failed")
            step.future.set_exception(outcome)
        else:
            step.future.set_result(outcome)
        if self._on_step_done is not None:
            self._on_step_done(step)

    def cancel(self, level: int | str | CancelLevel = CancelLevel.GRACEFUL) -> None:
        """Cancel the run at ``level`` (see :class:`~stemma.core.cancel_levels.CancelLevel`)."""
        self.canceller.request(level)

    def wait(self) -> None:
        """Block until every submitted step has finished."""
        while True:
            futures = [step.future for step in list(self.ctx.steps.values())]
            wait(futures)
            if len(futures) == len(self.ctx.steps):
                return

    def end(self) -> None:
        """Wait for every step, write what is deferred, stop the backend and the live channel.

        Interrupted (a notebook's Interrupt button), it cancels the run at force, ends it, and
        lets the ``KeyboardInterrupt`` through; after a hard cancel it lets it through at once.
        """
        try:
            self.wait()
        except KeyboardInterrupt:
            if self.canceller.interrupted():
                self.end()
            raise
        with self._lock:
            self._ended = True
        self._threads.shutdown(wait=True)
        self._packs.close()
        self._stop_flusher.set()
        self._flusher.join()
        try:
            self.ctx.record([])  # the events deferred to the next write
            atexit.unregister(self._flush_events)  # (a failed write is tried again at exit)
        finally:  # a store that stopped answering must not leave workers or a live run behind
            self.ctx.backend.shutdown()
            self._live.stop()
            self.canceller.close()

    def _flush_old_events(self) -> None:
        """Write deferred events once the oldest has waited past its time (a long step)."""
        while not self._stop_flusher.wait(OPEN_STEPS_RECORDED_AFTER / 4):
            oldest = self.ctx.oldest_deferred()
            if oldest is None:
                continue
            if (dt.datetime.now(dt.UTC) - oldest).total_seconds() >= OPEN_STEPS_RECORDED_AFTER:
                with contextlib.suppress(Exception):  # the step's own write will try again
                    self.ctx.record([])

    def _flush_events(self) -> None:
        with contextlib.suppress(Exception):  # at exit: best effort, never a traceback
            self.ctx.record([])
        with contextlib.suppress(Exception):
            self._live.stop()
