"""What the thread workers post back to the screens: loaded data, or why it could not load."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    # Annotations only: stemma.core.runs.launching is for ``n`` (launch), not the first frame.
    from stemma.core.runs.launching import Detached
    from stemma.core.runs.run_rows import RunRow
    from stemma.tui.client.log_follow import LogChunk
    from stemma.tui.client.views import ArtifactView, RunView, StepView


class RunsLoaded(Message):
    """The runs list was read (``partial``: only the newest runs, the rest is on its way)."""

    def __init__(self, rows: list[RunRow], *, partial: bool = False) -> None:
        super().__init__()
        self.rows = rows
        self.partial = partial


class RunLoaded(Message):
    """One run's steps were read."""

    def __init__(self, view: RunView) -> None:
        super().__init__()
        self.view = view


class StepLoaded(Message):
    """One step's executions, params and outputs were read."""

    def __init__(self, view: StepView) -> None:
        super().__init__()
        self.view = view


class ArtifactLoaded(Message):
    """One artifact's preview and lineage were read."""

    def __init__(self, view: ArtifactView) -> None:
        super().__init__()
        self.view = view


class LogLoaded(Message):
    """A log's text was read."""

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title = title
        self.text = text


class LogGrew(Message):
    """Followed log files gained text (``chunks``), or following started (``files`` found)."""

    def __init__(self, chunks: list[LogChunk], *, started: bool = False) -> None:
        super().__init__()
        self.chunks = chunks
        self.started = started


class LoadFailed(Message):
    """A read failed; ``error`` says why, in words for the user."""

    def __init__(self, what: str, error: str) -> None:
        super().__init__()
        self.what = what
        self.error = error


class CancelSent(Message):
    """A cancel request at ``level`` was written for ``run_id``."""

    def __init__(self, run_id: str, level: int) -> None:
        super().__init__()
        self.run_id = run_id
        self.level = level


class Launched(Message):
    """A script was started detached."""

    def __init__(self, script: str, started: Detached) -> None:
        super().__init__()
        self.script = script
        self.started = started


class LaunchFailed(Message):
    """A script could not be started (no such file, a line that cannot be split, …)."""

    def __init__(self, line: str, error: str) -> None:
        super().__init__()
        self.line = line
        self.error = error
