"""What the runner tells a store, and what a store tells back: frozen records, no behaviour."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class StepStatus(StrEnum):
    """A step's state in the steps event log: ``running`` then one final state."""

    RUNNING = "running"
    COMPLETED = "completed"
    SKIPPED = "skipped"
    CANCELLED = "cancelled"
    FAILED = "failed"


@dataclass(frozen=True, kw_only=True)
class Provenance:
    """Who lowered a graph, where and when: captured once per ``lower()`` and shared."""

    git_commit: str | None
    """The commit of the repository the command ran in, if it ran in one."""
    user: str
    """The login name of the user."""
    host: str
    """The host name."""
    created_at: dt.datetime
    """When the graph was lowered (UTC)."""
    command_line: tuple[str, ...]
    """``sys.argv`` of the lowering process."""

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data, for records and tables."""
        return {
            "git_commit": self.git_commit,
            "user": self.user,
            "host": self.host,
            "created_at": self.created_at.isoformat(),
            "command_line": list(self.command_line),
        }


@dataclass(frozen=True, kw_only=True)
class StepIdentity:
    """What identifies a step, as recorded: enough to explain a later cache miss."""

    fingerprint: str
    """The Merkle step key (``step_spec_id``)."""
    name: str
    """The step's name (its operation name, for function steps)."""
    version: str
    """The step's version segment."""
    config: Mapping[str, Any]
    """The canonical fingerprint-time config (deps by fingerprint, ``OUT`` as a placeholder)."""
    dep_fingerprints: tuple[str, ...]
    """Fingerprints of the step's direct deps, in first-seen order."""


@dataclass(frozen=True, kw_only=True)
class StepStarted:
    """The ``running`` event, written before a step's code runs."""

    step: StepIdentity
    step_run_id: str
    """Unique per attempt of a step."""
    run_id: str
    """The run (``pipeline_run_id``) the attempt belongs to."""
    step_number: int
    """Order of the step within its run; recorded, never part of a key."""
    backend: str
    """Where the step runs (``local-thread`` for in-process function steps)."""
    timestamp: dt.datetime
    """When the attempt started (UTC)."""


@dataclass(frozen=True, kw_only=True)
class StepSkipped:
    """The ``skipped`` event of a step that was not run, and why."""

    step: StepIdentity
    step_run_id: str
    """Unique per attempt, as for a started step."""
    run_id: str
    """The run the step belonged to."""
    timestamp: dt.datetime
    """When the runner gave up on the step (UTC)."""
    reason: str
    """A short machine-readable reason, such as ``dependency_failed``."""
    detail: str
    """What a person needs to know: which dependency failed."""


@dataclass(frozen=True, kw_only=True)
class OutputRecord:
    """A function step's ``OUT`` as a file-ref artifact."""

    relative_path: str
    """The output path relative to the store root (``outputs/{name}/{version}-{fp16}``)."""
    artifact_id: str
    """The file-ref artifact id: content hash with path and size."""
    content_hash: str
    """xxh3_128 of the file or of the tree's sorted entry list."""
    size: int
    """Total bytes."""
    file_count: int
    """Number of regular files."""


@dataclass(frozen=True, kw_only=True)
class StepOutcome:
    """One finished function-step execution: staged, then committed as one unit.

    A successful outcome carries the output file-ref and the return value (a metric artifact);
    a failed one carries the error. Either way the store records an execution row and the final
    step event, atomically from a reader's point of view.
    """

    started: StepStarted
    """The event that opened the attempt."""
    execution_run_id: str
    """Unique per execution attempt."""
    execution_spec_id: str
    """The role-aware execution key (name, version, params, sorted input artifact ids per role)."""
    worker: str
    """``host:pid`` of the process that ran the code."""
    ended_at: dt.datetime
    """When the code finished (UTC)."""
    error: str | None
    """``None`` on success; else the formatted traceback."""
    output: OutputRecord | None
    """The ``OUT`` artifact, on success."""
    value_json: str | None
    """The canonical JSON of what ``fn`` returned, on success."""
    value_artifact_id: str | None
    """The metric artifact id of ``value_json``."""
    input_artifact_ids: Mapping[str, tuple[str, ...]] = field(
        default_factory=dict[str, tuple[str, ...]]
    )
    """Per input role (argument name), the artifact ids of the deps' outputs it received."""
    provenance: Provenance
    """Captured when the graph was lowered."""
    carries_start: bool = False
    """The staged bundle also holds the attempt's ``running`` event (not recorded when it began)."""

    @property
    def success(self) -> bool:
        """Whether the step's code returned normally and its output was recorded."""
        return self.error is None


@dataclass(frozen=True, kw_only=True)
class StepRecord:
    """A step event read back from a store."""

    fingerprint: str
    name: str
    version: str
    status: StepStatus
    step_run_id: str
    run_id: str
    timestamp: dt.datetime
    config: Mapping[str, Any]
    """The fingerprint-time config recorded with the step."""
    output_path: str | None = None
    """Relative to the store root; set on completed function steps."""
    output_artifact_id: str | None = None
    value_json: str | None = None
    """Canonical JSON of the return value; set on completed function steps."""
    error: str | None = None

    @property
    def value(self) -> Any:
        """The step's return value, decoded."""
        return None if self.value_json is None else json.loads(self.value_json)
