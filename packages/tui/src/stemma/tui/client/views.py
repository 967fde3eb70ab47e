"""What the dashboard shows, as plain frozen data: built by the client, drawn by the screens."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stemma.core.cli.run_rows import RunRow
from stemma.core.live import RunState, StepState


@dataclass(frozen=True, kw_only=True)
class RunView:
    """One run: its row, its live state when it has one, and its steps (``upstream`` filled)."""

    row: RunRow
    state: RunState | None
    steps: tuple[StepState, ...]
    step_run_ids: dict[int, str] = field(default_factory=dict[int, str])
    """Per step number, the step run of its newest event in history (none while running)."""
    etas: dict[int, float] = field(default_factory=dict[int, float])
    """Per running step with a precedent, seconds left at its earlier runs' pace."""


@dataclass(frozen=True, kw_only=True)
class ExecutionRow:
    """One execution of a step."""

    execution_run_id: str
    success: bool
    started_at: str
    duration_s: float | None
    worker: str
    error: str
    failure_log: Path | None
    """The failure log written for it, when it failed and the log is there."""
    worker_log: str
    """What the worker printed (stdout/stderr), as recorded with the execution."""


@dataclass(frozen=True, kw_only=True)
class StepView:
    """One step of one run: its history, executions, params and outputs."""

    run_id: str
    number: int
    name: str
    operation: str
    status: str
    params: dict[str, Any]
    executions: tuple[ExecutionRow, ...]
    outputs: dict[str, tuple[str, ...]]
    """Per output role, the artifact ids the step offers downstream."""
    note: str = ""
    """Why something is missing (a step-level cache hit shows the executions it reused)."""
    why: tuple[str, ...] = ()
    """Why it ran or hit: ``stemma explain``'s lines."""


@dataclass(frozen=True, kw_only=True)
class LineageEdge:
    """One hop of lineage, as seen from the artifact being shown."""

    depth: int
    artifact_id: str
    """The artifact at the far end of the hop."""
    artifact_type: str
    role: str


@dataclass(frozen=True, kw_only=True)
class ArtifactView:
    """One artifact: what it is, a preview of its content, and its lineage both ways."""

    artifact_id: str
    artifact_type: str
    origin: str
    size: int
    preview_kind: str
    """``table``, ``json``, ``text`` or ``none``."""
    preview_text: str
    preview_rows: tuple[tuple[str, ...], ...] = ()
    """For ``table``: the header, then up to a page of rows."""
    up: tuple[LineageEdge, ...] = ()
    down: tuple[LineageEdge, ...] = ()
