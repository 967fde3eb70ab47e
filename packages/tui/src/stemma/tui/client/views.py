"""What the dashboard shows, as plain frozen data: built by the client, drawn by the screens."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from stemma.core.live import RunState, StepState
from stemma.core.runs.run_rows import RunRow


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
    """One execution of a step: committed, or live (running, or finished and staged)."""

    execution_run_id: str
    success: bool | None
    """None while it runs."""
    started_at: str
    duration_s: float | None
    worker: str
    error: str
    failure_log: Path | None
    """The failure log written for it, when it failed and the log is there."""
    worker_log: str
    """What the worker printed (stdout/stderr), as recorded with the execution."""
    stage: Literal["running", "staged", "committed"] = "committed"
    """Where it is: running now, finished and staged (committed when its step ends), or in
    history."""
    started_unix: float = 0.0
    """When it started, as a UNIX time (0 when unknown)."""


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
    output_names: dict[str, str] = field(default_factory=dict[str, str])
    """Per output artifact id, its original name (``data_3.csv``); none for a nameless type."""
    output_types: dict[str, str] = field(default_factory=dict[str, str])
    """Per output artifact id, the type recorded with it (``apply(..., type="json")``); none for
    an artifact given no type."""
    note: str = ""
    """Why something is missing (a step-level cache hit shows the executions it reused)."""
    why: tuple[str, ...] = ()
    """Why it ran or hit: ``stemma explain``'s lines."""
    running_units: int = 0
    """Units running now by the live state: some run where no sandbox shows them (a lazy
    step's functions), so the rows can list fewer."""


INPUT_FILE = "input_file"
"""The type lineage gives a file a lazy step's key read
(``stemma.storage.input_file_lineage.INPUT_FILE``)."""
SHORT_ID = 8
"""Hex digits of an execution id the dashboard shows (a uuid4: 8 tell a step's units apart)."""


@dataclass(frozen=True, kw_only=True)
class LineageEdge:
    """One hop of lineage, as seen from the artifact being shown: what, and which execution.

    Two edges to the same artifact are two rows when different steps or executions made them;
    identical bytes from two steps are one artifact, so the far end can be the artifact itself.
    """

    depth: int
    artifact_id: str
    """The artifact at the far end of the hop."""
    artifact_type: str
    role: str
    """The far artifact's role in the execution (its input role up, its output role down)."""
    step_name: str = ""
    """The step whose execution made the edge; empty when history has no such execution."""
    step_run_id: str = ""
    execution_run_id: str = ""
    itself: bool = False
    """The far end is the artifact shown: a step output its input's very bytes."""
    name: str = ""
    """The far artifact's original name (``data_3.csv``); empty for a type without one."""

    @property
    def input_file(self) -> bool:
        """The far end is a file a lazy step's key read: not an artifact (its id is its hash)."""
        return self.artifact_type == INPUT_FILE

    @property
    def short_execution(self) -> str:
        """The execution id's first :data:`SHORT_ID` hex digits."""
        return self.execution_run_id[:SHORT_ID]

    def sentence(self, direction: Literal["up", "down"]) -> str:
        """The edge in words, e.g. ``made from itself by step s, execution abcd1234``.

        Args:
            direction: ``up`` (made from) or ``down`` (made into).
        """
        verb = "made from" if direction == "up" else "made into"
        far = "itself" if self.itself else " ".join(filter(None, (self.artifact_id, self.name)))
        if self.input_file:
            far = (
                f"input file {self.name or '(path not recorded)'} (content {self.artifact_id[:8]})"
            )
        step = f"step {self.step_name}" if self.step_name else "a step not in history"
        return f"{verb} {far} by {step}, execution {self.short_execution}"


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
