"""What a submitted step hands back: ``OutputReference``, ``StepResult`` and ``StepFuture``."""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from stemma.core.artifact import Artifact


@dataclass(frozen=True)
class OutputReference:
    """A lazy pointer to one output role of one step; resolved to artifact ids at dispatch."""

    source_step: int
    """The step number that produces it."""
    role: str
    """The output role."""
    artifact_type: str
    """The role's declared type (``any`` when the operation did not say)."""


@dataclass(frozen=True, kw_only=True)
class StepResult:
    """What a finished step reports (the upstream surface, field for field)."""

    step_name: str
    step_number: int
    success: bool
    """False when any unit failed, or the step failed or was cancelled."""
    total_count: int
    """Every unit of the step: ``succeeded + failed + cancelled`` (``stemma.core.unit_counts``)."""
    succeeded_count: int
    """Units whose outputs the step has: run and succeeded, or answered by the cache."""
    failed_count: int
    """Units that ran and failed, or whose staged result could not be committed."""
    output_roles: tuple[str, ...]
    output_types: Mapping[str, str]
    duration_seconds: float
    step_run_id: str
    """This attempt's id; a step-level cache hit names the attempt it reuses in metadata."""
    metadata: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """``status``, ``cache`` (``step`` / ``execution`` hits), ``skip_reason``, ``step_spec_id``…"""
    artifact: Artifact | None = None
    """A function step's built output and return value (None for operations, and when the
    step did not complete)."""
    exception: BaseException | None = field(default=None, repr=False, compare=False)
    """A failed function step's own exception, when it could be brought back from its worker."""
    cached_count: int = 0
    """Of ``succeeded_count``, the units the execution cache (or a step-level hit) answered."""
    cancelled_count: int = 0
    """Units that never ran to an end because the step stopped (a cancel, ``fail_fast``)."""

    @property
    def has_failures(self) -> bool:
        """Whether any unit failed."""
        return self.failed_count > 0

    def output(self, role: str) -> OutputReference:
        """A reference to one of this step's output roles.

        Raises:
            ValueError: the step has no such role; the message lists the roles it has.
        """
        if role not in self.output_roles:
            raise ValueError(
                f"step {self.step_name!r} (#{self.step_number}) has no output role {role!r}; "
                f"its roles: {', '.join(self.output_roles) or '(none)'}"
            )
        return OutputReference(self.step_number, role, self.output_types.get(role, "any"))


class StepFuture:
    """A submitted step: outputs can be referenced at once, the result waited for."""

    def __init__(
        self,
        *,
        step_name: str,
        step_number: int,
        output_types: Mapping[str, str],
        future: Future[StepResult],
    ) -> None:
        self.step_name = step_name
        self.step_number = step_number
        self._output_types = dict(output_types)
        self._future = future

    def output(self, role: str) -> OutputReference:
        """A reference to an output role, without waiting for the step to run.

        Raises:
            ValueError: the operation declares no such role.
        """
        if role not in self._output_types:
            raise ValueError(
                f"step {self.step_name!r} (#{self.step_number}) has no output role {role!r}; "
                f"its roles: {', '.join(self._output_types) or '(none)'}"
            )
        return OutputReference(self.step_number, role, self._output_types[role])

    @property
    def done(self) -> bool:
        """Whether the step has finished (in any way)."""
        return self._future.done()

    @property
    def status(self) -> str:
        """``pending``, ``running``, or the final ``completed`` / ``failed`` / ``skipped``."""
        if not self._future.done():
            return "running" if self._future.running() else "pending"
        error = self._future.exception()
        if error is not None:
            return "failed"
        return str(self._future.result().metadata.get("status", "completed"))

    def result(self, timeout: float | None = None) -> StepResult:
        """Wait for the step and return its result (re-raising an orchestration error)."""
        return self._future.result(timeout)
