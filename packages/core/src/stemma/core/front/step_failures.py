"""What both front doors raise for failed steps: the chained cause, and ``fail_fast``'s error.

A failed step's error chains its unit's own exception when it could be brought back from its
worker, else a ``StepCodeError`` holding its error text (:func:`failure_cause`). Once a step
failed under ``fail_fast`` (engine/cancel/fail_fast.py), a ``Pipeline``'s ``run``, ``submit``,
``output`` and ``finalize`` all raise the same ``StepFailedError`` (:func:`halted_error`).
"""

from __future__ import annotations

from stemma.core.engine import RunContext, StepResult
from stemma.core.errors import StepCodeError, StepFailedError


def failure_cause(name: str, result: StepResult | None) -> BaseException:
    """What a failed step's error chains: its own exception, else its error's text."""
    if result is not None and result.exception is not None:
        return result.exception
    reason = result.metadata.get("error") if result is not None else None
    return StepCodeError(f"step {name!r}: {reason or 'failed'}")


def halted_error(ctx: RunContext) -> StepFailedError | None:
    """The run's ``fail_fast`` error, or None while no step has failed under ``fail_fast``."""
    if ctx.halted_by is None:
        return None
    failed = ctx.steps[ctx.halted_by]
    result = failed.future.result()
    skipped = [
        step.name
        for _, step in sorted(ctx.steps.items())
        if step.future.done()
        and not step.future.exception()
        and step.future.result().metadata.get("skip_reason") == "fail_fast"
    ]
    message = (
        f"step {failed.name!r} (#{failed.number}) failed under fail_fast: "
        f"{result.failed_count} unit(s) failed, {result.cancelled_count} never started"
        + (f"; skipped after it: {', '.join(skipped)}" if skipped else "")
        + f". The failure logs are under {ctx.store.layout.logs / 'failures'}; fix the cause and "
        "rerun: what succeeded is committed and is not run again."
    )
    error = StepFailedError(message, failed=[failed.name], skipped=skipped)
    error.__cause__ = failure_cause(failed.name, result)
    return error
