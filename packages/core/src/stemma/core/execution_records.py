"""What the engine's workers and orchestrator hand a store: executions, step events, outputs.

Every step is recorded in these terms, a lazy function step as one unit whose completed event
names its output and value (``output_path``, ``output_artifact_id``, ``value_artifact_id``).
Frozen and plain, so they pickle from a worker process and stage as rows without interpretation.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from stemma.core.records import StepStatus

if TYPE_CHECKING:  # annotations only: reading records must not load the operations (pydantic)
    from stemma.core.operations.drafts import FinalizedArtifact


@dataclass(frozen=True, kw_only=True)
class LineageEdge:
    """One provenance edge: this input artifact produced that output artifact."""

    source_artifact_id: str
    target_artifact_id: str
    source_role: str
    target_role: str
    source_artifact_type: str | None = None
    """Filled from the index at commit time when the worker does not know it."""
    target_artifact_type: str | None = None
    group_id: str | None = None
    """Shared by the co-input edges of one paired group."""
    step_boundary: bool = True
    """False for a collapsed composite's internal edges under PERSIST."""


@dataclass(frozen=True, kw_only=True)
class ExecutionRecord:
    """One execution unit's result: staged by the worker, committed by the orchestrator."""

    execution_run_id: str
    """Unique per attempt of the unit."""
    execution_spec_id: str
    """The unit's execution key (cache level 2)."""
    step_run_id: str
    step_spec_id: str
    step_name: str
    step_number: int
    operation: str
    version: str
    params: Mapping[str, Any]
    """The key params (canonical)."""
    overrides: Mapping[str, Any]
    """Environment and tool overrides (canonical)."""
    started_at: dt.datetime
    ended_at: dt.datetime
    worker: str
    """``host:pid`` of the worker."""
    backend: str
    success: bool
    error: str | None = None
    """The formatted traceback of a failure."""
    tool_output: str | None = None
    """The last lines the tool printed (captured stdout/stderr)."""
    worker_log: str | None = None
    """The scheduler's log of the worker, patched in before commit when there is one."""
    inputs: Mapping[str, tuple[str, ...]] = field(default_factory=dict[str, tuple[str, ...]])
    """Per input role, the artifact ids the unit consumed."""
    outputs: Mapping[str, tuple[str, ...]] = field(default_factory=dict[str, tuple[str, ...]])
    """Per output role, the artifact ids the unit produced (new or passed through)."""
    artifacts: tuple[FinalizedArtifact, ...] = ()
    """New artifacts with their content; deduplicated by id at commit."""
    edges: tuple[LineageEdge, ...] = ()
    """Lineage from inputs to outputs."""
    metadata: Mapping[str, Any] = field(default_factory=dict[str, Any])
    provenance: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """Who ran it, where and when (git commit, user, host, time, command line); empty when
    the worker was not told."""


@dataclass(frozen=True, kw_only=True)
class StepEvent:
    """One row of the steps event log: ``running``, then a final status."""

    step_run_id: str
    step_spec_id: str
    """The step fingerprint (cache level 1)."""
    pipeline_run_id: str
    step_number: int
    step_name: str
    status: StepStatus
    operation: str
    version: str
    params: Mapping[str, Any]
    backend: str
    timestamp: dt.datetime
    dep_fingerprints: tuple[str, ...] = ()
    output_roles: tuple[str, ...] = ()
    total_count: int = 0
    succeeded_count: int = 0
    failed_count: int = 0
    duration_seconds: float | None = None
    error: str | None = None
    dispatch_error: str | None = None
    commit_error: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """Input references, output types, the skip reason, the cache source…"""


@dataclass(frozen=True, kw_only=True)
class StepOutputs:
    """The artifacts a step run offers downstream, per role: fresh and cached alike.

    Written once when the step completes, so that resolving an ``OutputReference`` is one
    filtered read, and execution-level cache hits are as visible downstream as fresh work.
    """

    step_run_id: str
    outputs: Mapping[str, tuple[str, ...]]
    """Per output role, sorted and deduplicated artifact ids."""
