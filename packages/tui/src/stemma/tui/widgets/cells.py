"""How values look in the dashboard's tables: status colours, progress bars, short times."""

from __future__ import annotations

import datetime as dt

from rich.text import Text

from stemma.core.live import StepState

STATUS_STYLES = {
    "running": "bold cyan",
    "completed": "green",
    "failed": "bold red",
    "cancelled": "yellow",
    "stale": "bold magenta",
    "skipped": "dim",
    "pending": "dim",
}
_FULL, _EMPTY = "█", "░"


def status_text(status: str) -> Text:
    """The status word in its colour."""
    return Text(status, style=STATUS_STYLES.get(status, ""))


def progress_bar(step: StepState, width: int = 12) -> Text:
    """``████░░░░`` for done / total units.

    Cached dim, the rest of succeeded green, failed red, cancelled yellow (the counts of
    ``stemma.core.unit_counts``: cached is part of succeeded).
    """
    if step.total <= 0:
        return Text(" " * width if step.status == "pending" else "…".ljust(width), style="dim")
    cells = [
        (round(width * step.cached / step.total), "dim green"),
        (round(width * (step.succeeded - step.cached) / step.total), "green"),
        (round(width * step.failed / step.total), "red"),
        (round(width * step.cancelled / step.total), "yellow"),
    ]
    bar = Text()
    used = 0
    for count, style in cells:
        count = min(count, width - used)
        bar.append(_FULL * count, style=style)
        used += count
    bar.append(_EMPTY * (width - used), style="dim")
    return bar


def duration_text(seconds: float | None) -> str:
    """``45s``, ``12m05s``, ``3h02m``; empty when unknown."""
    if seconds is None:
        return ""
    whole = int(seconds)
    if whole < 60:
        return f"{seconds:.0f}s" if seconds >= 1 else f"{seconds:.1f}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def time_text(when: dt.datetime) -> str:
    """``11-29 13:38`` in local time: enough to tell runs apart at 80 columns."""
    return when.astimezone().strftime("%m-%d %H:%M")


def step_elapsed(step: StepState, now: dt.datetime) -> float | None:
    """Seconds the step has run (to its end when it ended)."""
    if step.started_at is None:
        return None
    start = dt.datetime.fromisoformat(step.started_at)
    end = dt.datetime.fromisoformat(step.ended_at) if step.ended_at else now
    return max(0.0, (end - start).total_seconds())


def jobs_text(step: StepState) -> str:
    """Scheduler job states, short: ``R3 PD5 F1``."""
    short = {"RUNNING": "R", "PENDING": "PD", "COMPLETED": "CD", "FAILED": "F", "CANCELLED": "CA"}
    return " ".join(f"{short.get(k, k)}{v}" for k, v in sorted(step.jobs.items()) if v)


def eta_seconds(step: StepState, now: dt.datetime) -> float | None:
    """Seconds left for a running step at the pace of its executed units (cached ones are free).

    None until a unit has run, or when the step is not running (a ``stale`` step never ends).
    """
    executed = step.counts.executed
    left = step.total - step.done
    elapsed = step_elapsed(step, now)
    if step.status != "running" or executed == 0 or left <= 0 or elapsed is None:
        return None
    return elapsed / executed * left


def time_cell(step: StepState, now: dt.datetime) -> str:
    """``~30s`` left while running (once the pace is known), else the time it took."""
    eta = eta_seconds(step, now)
    if eta is not None:
        return f"~{duration_text(eta)}"
    return duration_text(step_elapsed(step, now))
