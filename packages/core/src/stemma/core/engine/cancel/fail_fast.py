"""``fail_fast``: the first failed unit stops its step, and the step's failure halts the run.

The seed's promise: "any batch failure immediately stops the step and raises an error". Three
places keep it:

- **In the workers** (:mod:`stemma.core.engine.worker.fail_fast_marks`). A unit of a
  ``fail_fast`` step carries the path of the step's *failed marker* (:func:`marker_path`, under
  the run's folder in the root, so a cluster's nodes see it too). A worker whose unit fails
  creates the marker and ends its pack; a worker about to start a unit looks for it first. So
  the units packed behind a failure never start, and neither do other workers' units of the
  step, without a round trip to the orchestrator.
- **In the orchestrator.** Once a failure comes back, nothing more of the step is dispatched
  and packs not yet started are withdrawn (``unit_dispatch``). Units that never started count
  as cancelled: nothing of them is recorded, and a rerun runs them.
- **In the run.** A step that failed under ``fail_fast`` halts the run
  (:func:`halt_if_failed`): steps that have not started are skipped, and the ``Pipeline``
  raises ``StepFailedError`` chaining the failed unit's own exception from ``run``,
  ``output``, ``submit`` and ``finalize``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stemma.core.engine.planned_step import FailurePolicy
from stemma.core.records import StepStatus

if TYPE_CHECKING:
    from stemma.core.engine.planned_step import PlannedStep
    from stemma.core.engine.references import StepResult
    from stemma.core.engine.run_context import RunContext


def marker_path(ctx: RunContext, step: PlannedStep, step_run_id: str) -> str | None:
    """The step attempt's failed marker, or None when the step does not fail fast."""
    if step.failure_policy is not FailurePolicy.FAIL_FAST:
        return None
    return str(ctx.store.layout.runs / ctx.run_id / "fail_fast" / f"{step_run_id}.failed")


def halt_if_failed(ctx: RunContext, step: PlannedStep, result: StepResult) -> StepResult:
    """Halt the run if ``step`` failed under ``fail_fast``: no later step of it starts.

    Failed, not merely unsuccessful: a step a cancel interrupted is ``cancelled``, and the run
    ends as a cancelled one, not with ``fail_fast``'s error. The inputs failing to pair count.
    """
    failed = result.metadata.get("status") == StepStatus.FAILED.value
    if failed and step.failure_policy is FailurePolicy.FAIL_FAST and ctx.halted_by is None:
        ctx.halted_by = step.number
    return result
