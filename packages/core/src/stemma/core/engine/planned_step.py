"""A step as the orchestrator holds it between ``submit`` and its result."""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeVar

from stemma.core.engine.references import OutputReference, StepResult
from stemma.core.operations.definition import OperationDefinition
from stemma.core.operations.drafts import FinalizedArtifact


class FailurePolicy(StrEnum):
    """What a failed unit does to its step (docs/concepts/execution-flow.md)."""

    CONTINUE = "continue"
    """Record the failure; the step offers its successes downstream."""
    FAIL_FAST = "fail_fast"
    """Stop dispatching at the first failure; commit what finished; the step fails."""


_Policy = TypeVar("_Policy", bound=StrEnum)


def parse_policy(kind: type[_Policy], value: str, field: str) -> _Policy:
    """``kind(value)``, or a ValueError naming the field and the accepted values."""
    try:
        return kind(value)
    except ValueError:
        accepted = ", ".join(repr(member.value) for member in kind)
        raise ValueError(f"unknown {field} {value!r}; use one of {accepted}") from None


class CachePolicy(StrEnum):
    """Which earlier step counts as a step-level cache hit."""

    ALL_SUCCEEDED = "all_succeeded"
    """Only a completed step none of whose units failed."""
    STEP_COMPLETED = "step_completed"
    """Any completed step, even with failed units (they are not retried)."""


@dataclass(frozen=True)
class FileInputs:
    """Raw files given to a curator: promoted to file-ref artifacts, keyed by their content."""

    artifacts: tuple[FinalizedArtifact, ...]
    """The file refs, finalized (content hashed) when the step was submitted."""

    def content_hashes(self) -> list[str]:
        """What the step key holds for them: content, never the path."""
        return sorted(str(a.fields["content_hash"]) for a in self.artifacts)

    def ids(self) -> tuple[str, ...]:
        """The file-ref artifact ids, sorted."""
        return tuple(sorted({a.artifact_id for a in self.artifacts}))


StepInput = OutputReference | tuple[str, ...] | FileInputs
"""One role's input: another step's output, artifact ids given literally, or raw files."""


@dataclass(kw_only=True)
class PlannedStep:
    """One submitted step; mutable book-keeping owned by the orchestrator."""

    number: int
    name: str
    operation: OperationDefinition
    inputs: Mapping[str, StepInput]
    failure_policy: FailurePolicy
    skip_cache: bool
    future: Future[StepResult] = field(default_factory=Future[StepResult])
    fingerprint: str | None = None
    """Set when the step is keyed, before it dispatches (set at once when its front door keyed
    it: a lazy step's spec)."""
    after: tuple[int, ...] = ()
    """More step numbers to wait for, beyond those its inputs reference (a lazy step's deps)."""
    depends_on: tuple[str, ...] | None = None
    """The fingerprints of every step it depends on, when its front door knows them (a lazy
    step's deps include steps built before the run, which are not steps of the run)."""
    outputs_from: str | None = None
    """The step run whose outputs this step offers (its own, or the one it reuses)."""

    def upstream_steps(self) -> list[int]:
        """Step numbers this step reads from, in role order."""
        return sorted(
            {ref.source_step for ref in self.inputs.values() if isinstance(ref, OutputReference)}
            | set(self.after)
        )
