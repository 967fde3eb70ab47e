"""Follow a running step's worker logs: what each live log file gained since the last look.

The files followed are the ones the step's workers write while they run, modified since the
step started:

- local units capture their tools' output in their sandbox,
  ``{root}/working/{N}_{operation}/{ab}/{cd}/{execution_run_id}/tool_output.log``, which goes
  away when the unit ends (its tail is then recorded with the execution);
- SLURM elements write their stdout and stderr where submitit puts them, under
  ``{root}/logs/slurm/{run_id}/``. Those files are the run's, not the step's: an element's file
  names carry its job id, not its step, so every element log of the run that changed since the
  step started is followed.

A poll returns whole lines only: a line still being written is held back until its newline
arrives, or until a poll finds its file idle (a prompt, a progress line without a newline),
so the view never shows half a line followed by its rest under a header of its own.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

FIRST_READ_BYTES = 64 * 1024
"""How much of a file already long when first seen is shown: its end."""
READ_LIMIT_BYTES = 1024 * 1024
"""At most this much of one file per poll; the rest comes with the next."""


@dataclass(frozen=True, kw_only=True)
class LogChunk:
    """Text a followed file gained: whole lines, each ending with a newline."""

    path: Path
    text: str


class LogFollower:
    """Tails one step's live log files; each :meth:`poll` returns what they gained."""

    def __init__(
        self, root: Path, *, run_id: str, step_number: int, operation: str, since: float
    ) -> None:
        """Follow the logs of step ``step_number`` of ``run_id``.

        Args:
            root: the store root.
            run_id: the run.
            step_number: the step.
            operation: its operation's name (part of its sandboxes' folder).
            since: a UNIX time; files last modified before it are someone else's.
        """
        self.sandboxes = root / "working" / f"{step_number}_{operation}"
        self.scheduler_logs = root / "logs" / "slurm" / run_id
        self.since = since
        self._offsets: dict[Path, int] = {}
        self._partial: dict[Path, str] = {}
        """Per file, the text after its last newline, not shown yet."""

    def files(self) -> list[Path]:
        """The live log files now, oldest change first."""
        found: list[tuple[float, Path]] = []
        for path in self._candidates():
            try:
                changed = os.stat(path).st_mtime
            except OSError:
                continue  # its unit just ended and its sandbox went
            if changed >= self.since or path in self._offsets:
                found.append((changed, path))
        return [path for _, path in sorted(found)]

    def poll(self) -> list[LogChunk]:
        """The whole lines every live file gained since the last poll (its end when first seen).

        A file's unfinished last line comes with the poll that brings its newline, or alone
        (a newline added) with the first poll that finds the file idle or gone.
        """
        chunks: list[LogChunk] = []
        files = self.files()
        for path in files:
            new = self._read_new(path)
            held = self._partial.pop(path, "")
            if not new:
                text = f"{held}\n" if held else ""
            else:
                text, newline, rest = (held + new).rpartition("\n")
                text += newline
                if rest:
                    self._partial[path] = rest
            if text:
                chunks.append(LogChunk(path=path, text=text))
        for path in [path for path in self._partial if path not in files]:
            chunks.append(LogChunk(path=path, text=f"{self._partial.pop(path)}\n"))
        return chunks

    def _read_new(self, path: Path) -> str:
        try:
            with path.open("rb") as handle:
                size = handle.seek(0, os.SEEK_END)
                start = self._offsets.get(path)
                if start is None or start > size:  # new, or truncated and rewritten
                    start = max(0, size - FIRST_READ_BYTES)
                handle.seek(start)
                data = handle.read(min(size - start, READ_LIMIT_BYTES))
        except OSError:
            return ""
        self._offsets[path] = start + len(data)
        return data.decode("utf-8", errors="replace")

    def _candidates(self) -> Iterator[Path]:
        # Sandboxes are three levels below the step's folder: {ab}/{cd}/{execution_run_id}.
        for first in _subdirs(self.sandboxes):
            for second in _subdirs(first):
                for execution in _subdirs(second):
                    yield execution / "tool_output.log"
        for folder, _, names in os.walk(self.scheduler_logs):
            for name in names:
                if name.endswith((".out", ".err")):
                    yield Path(folder) / name


def _subdirs(folder: Path) -> Iterator[Path]:
    try:
        with os.scandir(folder) as entries:
            yield from (Path(entry.path) for entry in entries if entry.is_dir())
    except OSError:
        return


def followed_title(path: Path, root: Path, width: int) -> str:
    """The header shown above a followed file's lines, at most ``width`` cells.

    The path is shown from the root; a longer one is shortened from the left, where the
    folders every file of the step shares are, keeping the execution id and the file name.
    """
    try:
        shown = str(path.relative_to(root))
    except ValueError:
        shown = str(path)
    title = f"── {shown}"
    if len(title) <= width:
        return title
    keep = max(1, width - len("── …"))
    return f"── …{shown[-keep:]}"
