"""A step's identity and provenance as recorded, and a completed step read back: no behaviour.

What the engine hands a store is in :mod:`stemma.core.execution_records`.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from dataclasses import dataclass
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
