"""What the run screen does with a stale run: say what is left of it, and ``r`` to resume it.

The base of :class:`~.run.RunScreen`, apart from it as :mod:`.runs_keys` is from the runs list:
once the run on screen reads stale, its scheduler is asked (in a thread worker) what it still
holds, and ``r`` (the running-steps filter on any other run) shows the run's recorded command
and, on Enter, starts it again as ``stemma resume`` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual import on, work
from textual.screen import Screen

from stemma.core.live import RunState
from stemma.tui.messages import Launched, LaunchFailed
from stemma.tui.screens.showing import showing
from stemma.tui.screens.stale_jobs import JobsLoaded, ResumeReady, StaleJobs

if TYPE_CHECKING:
    from stemma.tui.app import StemmaApp


class StaleRun(Screen[None]):
    """A run's screen, as far as its run may be stale; :class:`~.run.RunScreen` shows the run."""

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id
        self.stale_jobs = StaleJobs()
        """What the scheduler still holds of this run, while it is stale."""
        self.stale = False
        """The run on screen reads stale: ``r`` resumes it."""

    @property
    def stemma(self) -> StemmaApp:
        """The app, typed."""
        return cast("StemmaApp", self.app)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Launch, cancel and resume are off in read-only mode (the app's one rule).

        ``r`` resumes a stale run, and shows the running steps of any other.
        """
        if action == "resume_run":
            return self.stale and self.stemma.allows("launch")
        if action == "only" and parameters == ("running",):
            return not self.stale
        return self.stemma.allows(action)

    def redraw(self) -> None:
        """Draw the run again (the screen's business)."""
        raise NotImplementedError

    def stale_facts(self, state: RunState | None) -> str:
        """What the facts line adds: the run it resumes, and what is left of a stale run."""
        said = f" · resumes {state.resumes}" if state is not None and state.resumes else ""
        if self.stale:
            resumable = self.stemma.allows("launch")
            said += "\n" + self.stale_jobs.describe(self.run_id, resumable=resumable)
        return said

    def note_staleness(self, stale: bool) -> None:
        """The run read stale (or not): ``r`` follows, and a stale run's scheduler is asked."""
        if stale != self.stale:
            self.stale = stale
            self.refresh_bindings()
        if stale and self.stale_jobs.due() and showing(self):
            self.stale_jobs.asked()
            self._load_jobs()

    @work(thread=True, exclusive=True, group="stale-jobs", exit_on_error=False)
    def _load_jobs(self) -> None:
        from stemma.core.runs.alive_jobs import alive_jobs  # (only for a stale run)

        self.post_message(JobsLoaded(alive_jobs(self.stemma.client.root, self.run_id)))

    @on(JobsLoaded)
    def _show_jobs(self, message: JobsLoaded) -> None:
        self.stale_jobs.took(message.jobs)
        self.redraw()

    def action_resume_run(self) -> None:
        """``r`` on a stale run: show its recorded command, to start again with Enter."""
        self._prepare_resume()

    @work(thread=True, exclusive=True, group="launch", exit_on_error=False)
    def _prepare_resume(self) -> None:
        from stemma.core.exit_codes import CliError
        from stemma.core.live import read_state
        from stemma.core.runs.relaunch import relaunch_of

        root = self.stemma.client.root
        try:
            relaunch = relaunch_of(read_state(root, self.run_id), root)
        except (CliError, OSError, ValueError) as err:  # no command, its script gone, …
            self.post_message(LaunchFailed(f"stemma resume {self.run_id}", str(err)))
            return
        self.post_message(ResumeReady(relaunch))

    @on(ResumeReady)
    def _ask_resume(self, message: ResumeReady) -> None:
        from stemma.tui.screens.resume import ResumeScreen

        def chosen(resume: bool | None) -> None:
            if resume:
                self.notify(f"resuming {self.run_id[-8:]}…", timeout=3)
                self._resume()

        self.stemma.push_screen(ResumeScreen(self.run_id, message.relaunch), chosen)

    @work(thread=True, exclusive=True, group="launch", exit_on_error=False)
    def _resume(self) -> None:
        from stemma.core.exit_codes import CliError
        from stemma.core.runs.resuming import resume_run

        line = f"stemma resume {self.run_id}"
        try:
            _, started = resume_run(self.stemma.client.root, self.run_id)
        except CliError as err:  # alive again, already resumed elsewhere, …
            self.post_message(LaunchFailed(line, str(err)))
            return
        self.post_message(Launched(line, started))  # the app says it, as for a new run
