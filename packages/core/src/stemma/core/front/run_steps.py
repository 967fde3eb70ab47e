"""The steps of a run read back: references to their outputs, their ids, their results.

:class:`~stemma.core.front.pipeline.Pipeline` (and the dry run's pipeline) read their steps
through these; the pipeline itself submits, cancels and finalizes.
"""

from __future__ import annotations

from collections.abc import Iterator

from stemma.core.engine import OutputReference, PlannedStep, RunContext, StepResult
from stemma.core.front.step_failures import halted_error


class RunSteps:
    """The read side of a pipeline: its steps by name, number and role, and as a sequence."""

    _ctx: RunContext

    @property
    def run_id(self) -> str:
        """``{name}_{UTC %Y%m%d_%H%M%S}_{8 hex}``."""
        return self._ctx.run_id

    def _step_numbers(self) -> dict[int, PlannedStep]:
        return dict(self._ctx.steps)

    def output(self, name: str, role: str, *, step_number: int | None = None) -> OutputReference:
        """A reference to ``role`` of the latest step called ``name`` (or of ``step_number``).

        Raises:
            ValueError: no such step or role; the message lists what there is.
            StepFailedError: a step failed under ``fail_fast``: nothing more may read from it.
        """
        self._raise_if_halted()
        candidates = [
            s
            for s in list(self._ctx.steps.values())
            if s.name == name and step_number in (None, s.number)
        ]
        if not candidates:
            known = sorted({s.name for s in list(self._ctx.steps.values())})
            raise ValueError(
                f"no step named {name!r} in run {self.run_id}; "
                f"steps: {', '.join(known) or '(none)'}"
            )
        step = candidates[-1]
        spec = step.operation.outputs.get(role)
        if spec is None:
            raise ValueError(
                f"step {name!r} has no output role {role!r}; "
                f"its roles: {', '.join(step.operation.outputs) or '(none)'}"
            )
        return OutputReference(step.number, role, spec.artifact_type)

    def artifact_ids(self, reference: OutputReference) -> tuple[str, ...]:
        """The artifact ids a step offers under a role, once that step has finished.

        Raises:
            ValueError: the reference names a step that is not in this pipeline.
        """
        step = self._ctx.steps.get(reference.source_step)
        if step is None:
            raise ValueError(f"step #{reference.source_step} is not in run {self.run_id}")
        step.future.result()
        source = step.outputs_from or ""
        return self._ctx.store.step_outputs([source]).get(source, {}).get(reference.role, ())

    def _raise_if_halted(self) -> None:
        error = halted_error(self._ctx)
        if error is not None:
            raise error

    # ------------------------------------------------------------------ sequence protocol

    def __len__(self) -> int:
        return len(self._ctx.steps)

    def __iter__(self) -> Iterator[StepResult]:
        return (step.future.result() for step in list(self._ctx.steps.values()))

    def __getitem__(self, index: int) -> StepResult:
        return self._ctx.steps[index].future.result()  # by step number

    def __contains__(self, name: object) -> bool:
        return any(step.name == name for step in list(self._ctx.steps.values()))

    def __bool__(self) -> bool:
        return bool(self._ctx.steps) and all(result.success for result in self)
