"""Every exit code of the ``stemma`` command, in one place: scripts may rely on them.

| code | meaning |
|---|---|
| 0 | success: the command did what it was asked; a watched or run pipeline completed |
| 1 | the pipeline failed: a step failed, or some units failed (a run that completed under the
  `continue` policy with failures counts as failed); for ``stemma check``: problems were found
  that are not repaired (each is listed with its fix) |
| 2 | usage error: unknown command, bad option or value (argparse's own code) |
| 3 | not found: no such run, step, artifact or script |
| 4 | unavailable: the command needs a package that is not installed (the message names it) |
| 5 | the pipeline was cancelled |
| 6 | the pipeline is stale: its orchestrator stopped without saying so (``stemma reap`` it) |
| 7 | damaged: a table of the root cannot be read (``stemma check ROOT`` names the file and fix) |
| 8 | ``stemma check --repair`` found problems and repaired every one: the root is sound now |
| 130 | interrupted (Ctrl-C) |
"""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """What ``stemma`` returns to its caller."""

    OK = 0
    RUN_FAILED = 1
    USAGE = 2
    NOT_FOUND = 3
    UNAVAILABLE = 4
    RUN_CANCELLED = 5
    RUN_STALE = 6
    DAMAGED = 7
    REPAIRED = 8
    INTERRUPTED = 130

    @classmethod
    def for_run_status(cls, status: str) -> ExitCode:
        """The code a command that waited for a run returns for the run's final ``status``."""
        return _BY_RUN_STATUS.get(status, cls.RUN_FAILED)


_BY_RUN_STATUS = {
    "completed": ExitCode.OK,
    "failed": ExitCode.RUN_FAILED,
    "cancelled": ExitCode.RUN_CANCELLED,
    "stale": ExitCode.RUN_STALE,
}


class CliError(Exception):
    """A failure the command reports as one line (what went wrong, and what to do) and a code.

    Commands raise it; :func:`stemma.core.cli.main.main` prints it to stderr and exits with
    ``code``. No traceback: every message already says what to do.
    """

    def __init__(self, message: str, code: ExitCode = ExitCode.RUN_FAILED) -> None:
        super().__init__(message)
        self.code = code
