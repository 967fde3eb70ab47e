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
    """Text a followed file gained."""

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
        """What every live file gained since the last poll (a file's end when first seen)."""
        chunks: list[LogChunk] = []
        for path in self.files():
            text = self._read_new(path)
            if text:
                chunks.append(LogChunk(path=path, text=text))
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
