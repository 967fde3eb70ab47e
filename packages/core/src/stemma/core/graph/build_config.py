"""``build_config(ctx)``: a step's arguments made from its context, keyed as keyword inputs are.

Called once with placeholders when the step is made (``apply``), so the arguments it gives are
keyed exactly as the same keyword inputs would be, and again with real values when the step
runs (:func:`call_arguments`), where it must give the same argument names.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from stemma.core.errors import StepConfigError
from stemma.core.graph.binding import bind_inputs
from stemma.core.graph.context import StepContext

if TYPE_CHECKING:
    from stemma.core.graph.step import ArtifactStep


def configure(
    name: str,
    build_config: Callable[[StepContext], Mapping[str, Any]],
    inputs: Mapping[str, Any],
) -> tuple[dict[str, Any], tuple[ArtifactStep, ...]]:
    """``build_config``'s arguments with placeholders, and the deps it asked ``ctx.dep`` for.

    Raises:
        TypeError: it returned no mapping of str names, or a name ``inputs`` gives too.
    """
    context = StepContext.for_fingerprint()
    configured = _call(name, build_config, context, "when the step is keyed (placeholders)")
    if twice := [key for key in configured if key in inputs]:
        raise TypeError(
            f"step {name!r}: argument {twice[0]!r} is given twice, as a keyword input and by "
            "build_config; give each argument in one place"
        )
    return configured, context.asked


def _call(
    name: str,
    build_config: Callable[[StepContext], Mapping[str, Any]],
    context: StepContext,
    when: str,
) -> dict[str, Any]:
    """``build_config(context)``, checked to be a mapping of argument names."""
    try:
        made = cast(object, build_config(context))  # a user's function: checked below
    except Exception as err:
        err.add_note(f"raised by build_config of step {name!r} {when}")
        raise
    if not isinstance(made, Mapping) or not all(
        isinstance(key, str) for key in cast(Mapping[object, Any], made)
    ):
        raise TypeError(
            f"step {name!r}: build_config must return a mapping of the function's argument "
            f"names (str) to values, got {made!r}"
        )
    return dict(cast(Mapping[str, Any], made))


def call_arguments(step: ArtifactStep, context: StepContext) -> dict[str, Any]:
    """What ``step.fn`` is called with in ``context``, ``OUT`` and deps resolved.

    ``build_config``'s values are made again, from the real context.

    Raises:
        StepConfigError: ``build_config`` failed, or gave other arguments than when keyed.
    """
    if step.build_config is None:
        return context.resolve(dict(step.inputs))
    try:
        made = _call(step.name, step.build_config, context, "at run time")
    except Exception as err:
        raise StepConfigError(
            f"step {step.name!r}: build_config failed at run time: "
            f"{builtins.type(err).__name__}: {err}"
        ) from err
    if set(made) != set(step.configured):
        raise StepConfigError(
            f"step {step.name!r}: build_config gave arguments {sorted(made)} at run time, but "
            f"{sorted(step.configured)} when the step was keyed; it must give the same "
            "arguments every time (only values pulled from the context may differ)"
        )
    arguments = bind_inputs(step.fn, {**step.keywords, **made})
    return context.resolve(arguments)
