"""The three cancellation levels (docs/concepts/cancellation.md).

Shared by Ctrl-C, ``Pipeline.cancel``, ``stemma cancel``, the dashboard and every backend.
"""

from __future__ import annotations

import enum

from stemma.core.env_seconds import seconds_setting

CANCEL_GRACE_ENV = "STEMMA_CANCEL_GRACE_SECONDS"
"""At a force cancel, the seconds between SIGTERM and SIGKILL (``scancel``) when the backend is
given none (each backend has its own default)."""


class CancelLevel(enum.IntEnum):
    """How hard to stop: each press of Ctrl-C (or ``c`` in the dashboard) goes one level up."""

    GRACEFUL = 1
    """Stop dispatching; running units finish and are committed; the process exits 0."""
    FORCE = 2
    """Drop queued units; running workers get SIGTERM (SLURM: ``scancel``), then SIGKILL."""
    HARD = 3
    """Kill the process tree and the run's jobs at once, then raise ``KeyboardInterrupt`` in the
    main thread (``finally`` blocks run; exit 130 if the process lingers); staged work commits at
    the next start. A notebook's kernel is never ended."""

    def describe(self) -> str:
        """One line for the terminal: what this level does."""
        return _DESCRIPTIONS[self]

    @classmethod
    def parse(cls, value: int | str | CancelLevel) -> CancelLevel:
        """``1``/``2``/``3`` or ``graceful``/``force``/``hard``.

        Raises:
            ValueError: anything else, naming what is accepted.
        """
        if isinstance(value, CancelLevel):
            return value
        text = str(value).strip().lower()
        for level in cls:
            if text in (str(level.value), level.name.lower()):
                return level
        raise ValueError(
            f"unknown cancellation level {value!r}; use 1 (graceful), 2 (force) or 3 (hard)"
        )


_DESCRIPTIONS = {
    CancelLevel.GRACEFUL: "graceful: no new work; running units finish and are committed",
    CancelLevel.FORCE: "force: queued units dropped; running workers terminated",
    CancelLevel.HARD: "hard: everything killed now; staged work is committed on the next start",
}


def cancel_grace(explicit: float | None, default: float) -> float:
    """A backend's force-cancel grace: given, else ``$STEMMA_CANCEL_GRACE_SECONDS``, else default.

    Raises:
        ValueError: the grace (given or from the environment) is negative or not a number.
    """
    return seconds_setting(
        explicit, env=CANCEL_GRACE_ENV, default=default, what="cancel_grace_seconds"
    )
