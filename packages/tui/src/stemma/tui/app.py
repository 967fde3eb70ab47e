"""The stemma dashboard: runs, a run's steps live, steps, artifacts; cancel with ``c``.

Screens never do I/O: every read runs in a thread worker that posts a message back, and the
headless :class:`~stemma.tui.client.DashboardClient` does the reading.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen

from stemma.core.cancel_levels import CancelLevel
from stemma.core.exit_codes import CliError
from stemma.core.live import RunStatus
from stemma.core.runs.run_rows import RunRow
from stemma.tui import collector
from stemma.tui.client import DashboardClient
from stemma.tui.client.first_runs import read_first_runs
from stemma.tui.messages import CancelSent, Launched, LaunchFailed, LoadFailed
from stemma.tui.readonly import allowed
from stemma.tui.screens.runs import RunsScreen
from stemma.tui.widgets.cancel_bar import CancelBar, how_it_ended, next_level
from stemma.tui.widgets.column_fit import cut_middle
from stemma.tui.widgets.title_line import TitleLine

# The other screens are imported where they open: the first frame needs only the runs list, and
# their widgets (tabs, logs, inputs) are ~30 ms of imports before it.


class StemmaApp(App[None]):
    """``stemma tui [ROOT] [RUN] [--step NAME] [--readonly]``."""

    CSS_PATH = "app.tcss"
    TITLE = "stemma"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Help"),
        # Reached only when a screen's own c or n is off (read-only): say so, not nothing.
        # System bindings: listed neither in the footer nor in Textual's keys panel.
        Binding("c", "read_only('cancel')", "Read-only", show=False, system=True),
        Binding("n", "read_only('new run')", "Read-only", show=False, system=True),
    ]

    def __init__(
        self,
        root: Path,
        *,
        run_id: str | None = None,
        step: int | None = None,
        readonly: bool = False,
    ) -> None:
        """Open on the runs list, or over it on ``run_id``, or over that on its ``step``.

        Args:
            root: the stemma root.
            run_id: a run to open at once (its full id: ``stemma.tui.opening`` resolves one).
            step: the number of a step of ``run_id`` to open at once.
            readonly: hide launching and cancelling (see :mod:`stemma.tui.readonly`).
        """
        super().__init__()
        self.client = DashboardClient(root)
        self.errors_said: set[str] = set()
        """The errors toasted so far: each is toasted once (see :meth:`_load_failed`)."""
        self.start_run = run_id
        """The run opened over the runs list at start, if any."""
        self.start_step = step if run_id is not None else None
        """The step opened over that run at start, if any."""
        self.readonly = readonly
        """Launch (``n``) and cancel (``c``) are off on every screen."""
        self.cancel_presses: dict[str, int] = {}
        """Per run, the highest cancel level asked for from this dashboard."""
        self.first_runs: list[RunRow] | None = read_first_runs(self.client)
        """The newest runs, read before the first frame (see :mod:`.client.first_runs`); the
        runs screen takes them (None after, or when they were not read in time)."""
        self.ready = False
        """Textual's start-up is over: frames drawn from now on reach the terminal."""

    def on_mount(self) -> None:
        """Start on the runs list, with the run and step asked for on top: Back goes down."""
        self.push_screen(RunsScreen())
        if self.start_run is not None:
            self.open_run(self.start_run)
            if self.start_step is not None:
                self.open_step(self.start_run, self.start_step)

    def allows(self, action: str) -> bool:
        """The one rule every screen's ``check_action`` asks: False hides and disables a key."""
        return allowed(action, readonly=self.readonly)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The app's own keys: ``read_only`` answers a hidden key only in read-only mode."""
        if action == "read_only":
            return self.readonly
        return self.allows(action)

    def action_read_only(self, what: str) -> None:
        """A key read-only mode turned off was pressed: say why nothing happens."""
        self.notify(f"read-only dashboard: {what} is off (--readonly)", timeout=3)

    def title_line(
        self, label: str, run_id: str | None = None, step: int | None = None
    ) -> TitleLine:
        """A screen's header: ``label``, and the command that reopens the screen.

        Args:
            label: what the screen shows (``run RUN``).
            run_id: the run on screen, if any.
            step: the number of the step on screen, if any.
        """
        return TitleLine(label, self.client.root, run_id, step)

    def on_ready(self) -> None:
        """Start-up is over: the runs screen goes on with what it put off, after one more frame.

        Frames drawn during Textual's start-up never reach the terminal, so work put off "until
        after the first frame" waits for this, whether the runs screen mounted before or after.
        """
        self.ready = True
        self.call_after_refresh(collector.resume)
        for screen in self.screen_stack:
            if isinstance(screen, RunsScreen):
                screen.call_after_refresh(screen.after_first_frame)

    def action_help(self) -> None:
        """Show the keys (or close them)."""
        from stemma.tui.screens.help import HelpScreen

        if isinstance(self.screen, HelpScreen):
            self.pop_screen()
        else:
            self.push_screen(HelpScreen())

    def open_run(self, run_id: str) -> None:
        """Show one run."""
        from stemma.tui.screens.run import RunScreen

        self.push_screen(RunScreen(run_id))

    def open_step(self, run_id: str, number: int) -> None:
        """Show one step of a run."""
        from stemma.tui.screens.step import StepScreen

        self.push_screen(StepScreen(run_id, number))

    def open_artifact(self, artifact_id: str) -> None:
        """Show one artifact."""
        from stemma.tui.screens.artifact import ArtifactScreen

        self.push_screen(ArtifactScreen(artifact_id))

    def press_cancel(self, run_id: str, status: RunStatus, applied: int) -> CancelLevel | None:
        """One press of ``c`` on a run: ask for the next level; None when there is nothing to do.

        Args:
            run_id: the run.
            status: its status as last seen.
            applied: the level its orchestrator has applied so far.
        """
        if status is not RunStatus.RUNNING:
            ended = how_it_ended(status, applied)  # as the run screen's header says it
            self.notify(f"run {ended}: nothing to cancel", severity="warning")
            return None
        level = next_level(applied, self.cancel_presses.get(run_id, 0))
        if level is None:
            self.notify("hard cancel already asked: nothing stronger left", severity="warning")
            return None
        self.cancel_presses[run_id] = int(level)
        self._send_cancel(run_id, level)
        return level

    @work(thread=True, group="cancel", exit_on_error=False)
    def _send_cancel(self, run_id: str, level: CancelLevel) -> None:
        try:
            self.client.cancel(run_id, level)
        except (OSError, ValueError) as err:
            self.post_message(LoadFailed(f"cancel of {run_id}", str(err)))
            return
        self.post_message(CancelSent(run_id, int(level)))

    @on(CancelSent)
    def _cancel_sent(self, message: CancelSent) -> None:
        # The run screen's cancel bar already says the level asked and what the next press
        # does: a toast there would only cover the step table's last rows (at 80x24).
        if self.screen.query(CancelBar):
            return
        level = CancelLevel(message.level)
        self.notify(
            f"cancel {int(level)}/3 asked of {message.run_id[-8:]}: {level.name.lower()}",
            timeout=4,
        )

    def ask_launch(self) -> None:
        """Ask for a pipeline script, then start it detached."""
        from stemma.tui.screens.launch import LaunchScreen

        def chosen(line: str | None) -> None:
            if line:
                self.notify(_starting(line), timeout=3, markup=False)
                self._launch(line)

        # A toast would sit on the dialog, over what is typed: the dialog says errors itself.
        self.clear_notifications()
        self.push_screen(LaunchScreen(self.client.root), chosen)

    @work(thread=True, group="launch", exit_on_error=False)
    def _launch(self, line: str) -> None:
        try:
            started = self.client.launch(line)
        except CliError as err:  # no such script, a quote left open: nothing was started
            self.post_message(LaunchFailed(line, str(err)))
            return
        self.post_message(Launched(line, started))

    @on(Launched)
    def _launched(self, message: Launched) -> None:
        started = message.started
        if not started.run_ids:  # its error from the log, and where the rest of it is
            self._launch_error(f"{message.script}: {started.no_run()}\nlog: {started.log}")
            return
        # One short line: at 80 columns a toast is 40 wide, and a second line covered the
        # summary. The runs list puts its cursor on the run, which says the rest.
        self.notify(f"started {started.run_ids[0][-8:]} (pid {started.pid})", timeout=6)
        for screen in self.screen_stack:
            if isinstance(screen, RunsScreen):
                screen.select_when_shown(started.run_ids[0])

    @on(LaunchFailed)
    def _launch_failed(self, message: LaunchFailed) -> None:
        self._launch_error(f"could not start {message.line}: {message.error}")

    def _launch_error(self, said: str) -> None:
        """A toast, or the launch dialog's own line when one is open (never a toast over it)."""
        from stemma.tui.screens.launch import LaunchScreen

        if isinstance(self.screen, LaunchScreen):
            self.screen.show_error(said)
        else:
            self.notify(said, severity="error", timeout=20, markup=False)

    @on(LoadFailed)
    def _load_failed(self, message: LoadFailed) -> None:
        # A read that fails at every refresh (a damaged table) would raise a toast a second:
        # the screen's own line keeps saying it, so one toast is enough.
        said = f"{message.what}: {message.error}"
        if said in self.errors_said:
            return
        self.errors_said.add(said)
        self.notify(said, severity="error", timeout=15, markup=False)  # time to read a fix

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """The command palette (ctrl+p): Textual's own commands plus the dashboard's."""
        from stemma.tui.screens.run import RunScreen

        inherited: Iterable[SystemCommand] = super().get_system_commands(screen)  # pyright: ignore[reportUnknownMemberType]
        yield from inherited
        yield SystemCommand("Help", "Every key of every screen", self.action_help)
        if isinstance(screen, RunsScreen):
            runs = screen
            for status in ("all", *(s.value for s in RunStatus)):
                yield SystemCommand(
                    f"Show {status} runs",
                    f"Filter the runs list to {status} runs",
                    lambda chosen=status: runs.set_status_filter(chosen),
                )
            yield SystemCommand(
                "Filter runs",
                "Part of an id, script, argument, user or host; a regex; ! inverts",
                runs.action_search,
            )
            if self.allows("launch"):
                yield SystemCommand("New run", "Start a pipeline script detached", self.ask_launch)
        if isinstance(screen, RunScreen | RunsScreen) and self.allows("cancel_run"):
            yield SystemCommand(
                "Cancel run", "One press of c: the next cancel level", screen.action_cancel_run
            )


def run_dashboard(
    root: Path, *, run_id: str | None = None, step: int | None = None, readonly: bool = False
) -> None:
    """Run the dashboard on ``root`` until the user quits (arguments as :class:`StemmaApp`'s)."""
    StemmaApp(root, run_id=run_id, step=step, readonly=readonly).run()


TOAST_TEXT = 36
"""Characters a toast shows on one line at 80 columns (60% of the width, less its frame)."""


def _starting(line: str) -> str:
    """``starting flow.py 2…``: the script's file name and its arguments, on one toast line.

    The whole line (a long path) wrapped the toast to several lines over the runs list; the
    launch dialog showed the whole command already.
    """
    from stemma.core.runs.launching import split_script_line  # (after the first frame)

    try:
        script, argv = split_script_line(line)  # split as the launch itself splits it
    except CliError:
        shown = line.strip()
    else:
        shown = shlex.join((Path(script).name, *argv))
    return f"starting {cut_middle(shown, TOAST_TEXT - len('starting …'))}…"
