"""``ArtifactStep`` and ``apply``: cheap, immutable handles that describe how to build an artifact.

Creating a handle does no I/O and runs no user code; it binds ``fn``'s signature (so a wrong
argument fails here, naming the step), finds the dependency handles among the inputs, and
encodes the literal inputs once into a *template*, so that lowering a graph of 100,000 handles
only has to splice dependency fingerprints into precomputed strings.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from stemma.core.canonical import dumps_plain, escape_key, to_canonical
from stemma.core.errors import LoweringError
from stemma.core.graph.binding import bind_inputs, takes_argument
from stemma.core.graph.build_config import configure
from stemma.core.graph.input_files import input_file_key
from stemma.core.graph.markers import (
    DEP_TAG,
    FILE_TAG,
    FUNCTION_KIND,
    OUT,
    OUT_TAG,
    OUT_URL,
    OUT_URL_TAG,
    PLACEHOLDER_STARTS,
    Placeholder,
    StepHandle,
)
from stemma.core.graph.versions import check_name, check_version, is_mutable
from stemma.core.identity import ID_LENGTH

if TYPE_CHECKING:
    from stemma.core.graph.context import StepContext
    from stemma.core.graph.step_spec import StepSpec
    from stemma.core.operations.definition import OperationDefinition
    from stemma.core.operations.specs import Resources


@dataclass(frozen=True, eq=False, kw_only=True, slots=True)
class ArtifactStep(StepHandle):
    """A lazy handle on an artifact: what to run, with what, at which version.

    Compared and hashed by identity: two handles with equal contents are two nodes of the graph
    (and lower to the same fingerprint). Build handles with :func:`apply`.
    """

    name: str
    """Path-like name (``example/json``); also the operation name in keys and tables."""
    version: str
    """A path segment; ``dev`` or ``*-dev`` marks a mutable step that always reruns."""
    fn: Callable[..., Any]
    """The function that builds the artifact; called with the resolved inputs."""
    inputs: Mapping[str, Any]
    """Every argument of ``fn`` (defaults included), possibly holding ``OUT`` and handles."""
    deps: tuple[ArtifactStep, ...]
    """Handles found in ``inputs``, deduplicated by identity, in first-seen order."""
    expected_fingerprint: str | None = None
    """If set, lowering fails unless the step's fingerprint equals it."""
    template: str = field(repr=False)
    """Canonical JSON of ``inputs``, deps as ``{"$dep": position}``, ``OUT`` as a placeholder."""
    key_head: str = field(repr=False)
    """Canonical JSON of the fingerprint payload up to the dependency list."""
    key_tail: str = field(repr=False)
    """Canonical JSON of the fingerprint payload after the dependency list."""
    mutable: bool = False
    """Whether the version marks this step as always rerun (``dev`` / ``*-dev``)."""
    resources: Resources | None = None
    """What the step's worker asks of its machine (a SLURM node's CPUs, memory, GPUs, time);
    never part of the key. None: the operation's defaults."""
    type: str | None = None
    """The artifact's type (``"json"``, ``"model"``), recorded with its output; never keyed."""
    build_config: Callable[[StepContext], Mapping[str, Any]] | None = field(
        default=None, repr=False
    )
    """Makes ``fn``'s arguments from the step's context: called with placeholders when the step
    is keyed (by :func:`apply`) and with real values when it runs. Its result is in
    ``inputs`` as the placeholders gave it, keyed exactly as keyword inputs are."""
    keywords: Mapping[str, Any] = field(default_factory=dict[str, Any], repr=False)
    """With ``build_config``: the keyword inputs ``apply`` was given beside it (what run time
    binds again, with ``build_config``'s real values). Empty otherwise."""
    configured: tuple[str, ...] = field(default=(), repr=False)
    """The arguments ``build_config`` gave when the step was keyed, in its order."""

    def lower(self, memo: dict[ArtifactStep, StepSpec] | None = None) -> StepSpec:
        """Lower this handle and its deps to a :class:`~stemma.core.graph.step_spec.StepSpec`."""
        from stemma.core.graph.step_spec import lower

        return lower(self, memo)

    def __repr__(self) -> str:
        return f"ArtifactStep({self.name!r}, version={self.version!r}, deps={len(self.deps)})"


def _is_operation(cls: type) -> bool:
    from stemma.core.operations.definition import OperationDefinition

    return issubclass(cls, OperationDefinition)


def apply(
    name: str,
    fn: Callable[..., Any] | builtins.type[OperationDefinition],
    *,
    version: str | None = None,
    expected_fingerprint: str | None = None,
    resources: Resources | Mapping[str, Any] | None = None,
    type: str | None = None,
    build_config: Callable[[StepContext], Mapping[str, Any]] | None = None,
    **inputs: Any,
) -> ArtifactStep:
    """Describe a step: ``fn(**inputs)`` at ``version``, run lazily.

    ``fn`` may also be an operation class: ``apply("clean", Transform, params={...},
    dataset=upstream)`` makes an operation step, whose keyword arguments are the operation's
    input roles (an upstream operation step, ``output_of(step, role)``, or artifact ids) and
    ``params``; it runs as an engine step like a ``Pipeline``'s (see
    :mod:`stemma.core.graph.operation_steps`).

    Args:
        name: the step's name, one or more path segments (``example/json``).
        fn: the function to call (it may write its output at the path given for ``OUT``), or an
            operation class.
        version: any path segment; ``dev`` or ``*-dev`` always reruns. Required for functions;
            an operation step defaults to its class's ``version``.
        expected_fingerprint: pin the step's key; lowering fails on a mismatch.
        resources: what the step's worker needs (``Resources(cpus=, memory_gb=, gpus=,
            time_limit=, partition=)`` or a dict of those); never part of the key, so changing
            it never reruns a step. (A function argument called ``resources`` is given through
            ``build_config``.)
        type: the artifact's type (``"json"``, ``"parquet"``, ``"model"``): recorded with the
            step's output (its artifact's metadata and the step's final event) and shown by
            lineage; never part of the key. A function argument called ``type`` is given through
            ``build_config``; ``type=`` beside a function that takes one is refused.
        build_config: ``build_config(ctx)`` returns a mapping of ``fn``'s keyword arguments,
            made from the step's :class:`~stemma.core.graph.context.StepContext`
            (``ctx.output_path``, ``ctx.dep(handle)``, ``ctx.prefix``, ``ctx.region``). Called
            here, with placeholders, to key the step: its result is keyed exactly as keyword
            inputs are, so ``build_config=lambda ctx: {"x": 1, "out_path": ctx.output_path}``
            and ``x=1, out_path=OUT`` are one step with one key. Called again, with real values,
            when the step runs. It must be deterministic; an argument may come from it or from
            ``inputs``, never both.
        **inputs: ``fn``'s arguments. ``OUT`` becomes the step's output path; an
            :class:`ArtifactStep` anywhere inside (lists, tuples, dicts) becomes a dependency and
            is replaced by that dependency's output path at run time.

    Raises:
        TypeError: ``inputs`` (with what ``build_config`` gave) do not match ``fn``'s signature
            (the message names the step, and an argument ``fn`` does not take with the closest
            one it does: ``step 'n': f() got an unexpected argument 'xx' (did you mean 'x'?)``);
            an argument given both ways; ``build_config`` returned no mapping of names; ``type``
            is no non-empty str, or ``fn`` takes an argument called ``type`` (see above).
        LoweringError: ``name`` or ``version`` is not a valid path segment.
        OperationConfigError: ``resources`` has an unknown key or an invalid value.
        UnfingerprintableError: an input cannot be encoded canonically (names the argument).
    """
    check_name(name)
    if isinstance(fn, builtins.type) and _is_operation(fn):
        if type is not None or build_config is not None:
            raise TypeError(
                f"step {name!r}: type= and build_config= are for function steps; an operation's "
                "outputs have the types its class declares, and its params are given as params="
            )
        from stemma.core.graph.operation_steps import operation_inputs, operation_step

        version, inputs = operation_inputs(name, fn, version, inputs)
        fn = operation_step
    if version is None:
        raise LoweringError(f"step {name!r}: a function step needs a version, e.g. version='v1'")
    check_version(name, version)
    configured: Mapping[str, Any] = {}
    asked: tuple[ArtifactStep, ...] = ()
    if type is not None or build_config is not None:  # (the common step pays nothing here)
        _check_type(name, type)
        if build_config is not None:
            configured, asked = configure(name, build_config, inputs)
        _refuse_shadowed(name, fn, configured, type=type, build_config=build_config)
    try:
        arguments = bind_inputs(fn, {**inputs, **configured} if configured else inputs)
    except TypeError as err:
        raise TypeError(f"step {name!r}: {err}") from None
    if expected_fingerprint is not None and len(expected_fingerprint) != ID_LENGTH:
        raise LoweringError(f"step {name!r}: expected_fingerprint must be a 32-hex-character str")
    config_json, deps = encode_inputs(name, arguments, asked)
    return ArtifactStep(
        name=name,
        version=version,
        fn=fn,
        inputs=arguments,
        deps=tuple(deps),
        expected_fingerprint=expected_fingerprint,
        resources=None if resources is None else _resources(name, resources),
        type=type,
        build_config=build_config,
        keywords=inputs if build_config is not None else {},
        configured=tuple(configured),
        template=config_json,
        # Payload: {"config": …, "deps": [fp, …], "kind": …, "name": …, "version": …}, keys sorted,
        # exactly what the canonical encoder would produce for that dict.
        key_head='{"config":' + config_json + ',"deps":[',
        key_tail=f'],"kind":"{FUNCTION_KIND}","name":{dumps_plain(name)},"version":{dumps_plain(version)}}}',
        mutable=is_mutable(version),
    )


def _check_type(name: str, given: object) -> None:
    if given is not None and (not isinstance(given, str) or not given):
        raise TypeError(
            f"step {name!r}: type must be a non-empty str such as 'json', got {given!r}"
        )


def _refuse_shadowed(
    name: str,
    fn: Callable[..., Any],
    configured: Mapping[str, Any],
    **given: object,
) -> None:
    """``type=`` (or ``build_config=``) beside a function with an argument of that name."""
    for word, value in given.items():
        if value is not None and word not in configured and takes_argument(fn, word):
            qualname = getattr(fn, "__qualname__", builtins.type(fn).__qualname__)
            raise TypeError(
                f"step {name!r}: {qualname}() takes an argument named {word!r}, but apply()'s "
                f"{word}= is the step's own, never the function's; give the function's "
                f"{word!r} through build_config (build_config=lambda ctx: {{{word!r}: …}}), "
                "which keys it exactly as a keyword input"
            )


def current_template(step: ArtifactStep) -> str:
    """The canonical template of ``step``'s inputs as they are now (see ``check_inputs_unchanged``).

    With ``build_config``, it is keyed again: a result other than the one the step was keyed
    with means it is not deterministic.
    """
    if step.build_config is None:
        return encode_inputs(step.name, step.inputs)[0]
    configured, asked = configure(step.name, step.build_config, step.keywords)
    arguments = bind_inputs(step.fn, {**step.keywords, **configured})
    template, deps = encode_inputs(step.name, arguments, asked)
    if tuple(deps) != step.deps:
        return ""  # other deps: never equal to a template
    return template


def _resources(name: str, given: Resources | Mapping[str, Any]) -> Resources:
    from stemma.core.operations.specs import Resources  # pydantic: only when resources are given

    if isinstance(given, Resources):
        return given
    from pydantic import ValidationError

    from stemma.core.errors import OperationConfigError

    try:
        return Resources.model_validate(dict(given))
    except ValidationError as err:
        accepted = ", ".join(sorted(Resources.model_fields))
        problems = [
            f"unknown resources key {'.'.join(map(str, e['loc']))!r}; accepted: {accepted}"
            if e["type"] == "extra_forbidden"
            else f"resources.{'.'.join(map(str, e['loc']))}: {e['msg']} (got {e['input']!r})"
            for e in err.errors()
        ]
        raise OperationConfigError(f"step {name!r}: {'; '.join(problems)}") from None


def encode_inputs(
    name: str, arguments: Mapping[str, Any], asked: tuple[ArtifactStep, ...] = ()
) -> tuple[str, list[ArtifactStep]]:
    """The canonical template of a step's inputs, and the handles found in them, in order.

    ``asked``: the handles ``build_config`` asked ``ctx.dep`` for; those not found in the
    arguments themselves (used only in a path made from one) come last among the deps.
    """
    positions: dict[int, int] = {}
    deps: list[ArtifactStep] = []
    template = {
        key: _template(value, positions, deps, f"{name}.inputs.{key}")
        for key, value in arguments.items()
    }
    for handle in asked:
        if id(handle) not in positions:
            positions[id(handle)] = len(deps)
            deps.append(handle)
    return dumps_plain(template), deps


def _template(value: Any, positions: dict[int, int], deps: list[ArtifactStep], path: str) -> Any:
    """Encode an input canonically: handles as ``{"$dep": position}``, ``OUT`` as ``{"$out": 0}``.

    Tags cannot be forged: :func:`~stemma.core.canonical.escape_key` doubles a user key's
    leading ``$``. A ``Path`` is keyed by the content of the file or tree it names.
    """
    marker = value.stands_for if isinstance(value, Placeholder) else value  # (build_config's)
    if marker is OUT or marker is OUT_URL:
        return {OUT_TAG if marker is OUT else OUT_URL_TAG: 0}
    if isinstance(value, ArtifactStep):
        position = positions.get(id(value))
        if position is None:
            position = positions[id(value)] = len(deps)
            deps.append(value)
        return {DEP_TAG: position}
    if isinstance(value, dict):
        items: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        if all(isinstance(key, str) for key in items):
            return {
                escape_key(key): _template(item, positions, deps, f"{path}[{key!r}]")
                for key, item in items.items()
            }
    if isinstance(value, list | tuple):
        seq: list[Any] | tuple[Any, ...] = value  # pyright: ignore[reportUnknownVariableType]
        return [_template(item, positions, deps, f"{path}[{i}]") for i, item in enumerate(seq)]
    if isinstance(value, Placeholder):  # from build_config: keyed as the handle is
        return _template(value.stands_for, positions, deps, path)
    if isinstance(value, PurePath):
        if str(value).startswith(PLACEHOLDER_STARTS):  # made from a placeholder: no file
            return to_canonical(str(value), path)
        return {FILE_TAG: input_file_key(Path(value), path)}
    return to_canonical(value, path)


def handles_in(value: Any) -> list[ArtifactStep]:
    """The handles inside an input value (lists, tuples, dicts), in first-seen order.

    A dependency ``build_config`` got from ``ctx.dep`` counts as its handle.
    """
    found: list[ArtifactStep] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, ArtifactStep):
            found.append(item)
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))  # pyright: ignore[reportUnknownArgumentType]
        elif isinstance(item, list | tuple):
            stack.extend(reversed(item))  # pyright: ignore[reportUnknownArgumentType]
        elif isinstance(item, Placeholder) and isinstance(item.stands_for, ArtifactStep):
            found.append(item.stands_for)
    return found


CONFIG_ROLE = "build_config"
"""Where a dependency ``build_config`` asked for but put in no argument is an input."""


def deps_by_argument(step: ArtifactStep) -> dict[str, list[ArtifactStep]]:
    """Per argument of ``step``, the dependencies it holds, in first-seen order.

    A dep ``build_config`` used only in a path made from it (``f"{ctx.dep(d)}/a.json"``) is an
    input of each argument whose value reads its stand-in, or else of :data:`CONFIG_ROLE`.
    """
    found = {role: deps for role, value in step.inputs.items() if (deps := handles_in(value))}
    if step.build_config is None:
        return found
    placed = {id(dep) for deps in found.values() for dep in deps}
    for dep in step.deps:
        if id(dep) in placed:
            continue
        text = f"<dep:{dep.name}@{dep.version}>"
        roles = [role for role, value in step.inputs.items() if _reads(value, text)]
        for role in roles or [CONFIG_ROLE]:
            found.setdefault(role, []).append(dep)
    return found


def _reads(value: Any, text: str) -> bool:
    """Whether a str inside ``value`` contains ``text``."""
    if isinstance(value, str):
        return text in value
    if isinstance(value, PurePath):
        return text in str(value)
    if isinstance(value, dict):
        items: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return any(_reads(item, text) for item in items.values())
    if isinstance(value, list | tuple):
        seq: list[Any] | tuple[Any, ...] = value  # pyright: ignore[reportUnknownVariableType]
        return any(_reads(item, text) for item in seq)
    return False
