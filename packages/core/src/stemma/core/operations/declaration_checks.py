"""The checks an operation class passes when its ``class`` statement runs.

Each failure raises :class:`~stemma.core.errors.OperationDefinitionError` naming the class, the
field and the fix, so a mistake in a declaration never waits until a pipeline runs it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NoReturn

from stemma.core.errors import ArtifactTypeError, OperationDefinitionError
from stemma.core.operations.kinds import OperationKind
from stemma.core.operations.pairing import GroupBy
from stemma.core.operations.specs import InputSpec, OutputSpec, get_artifact_type

if TYPE_CHECKING:
    from stemma.core.operations.definition import OperationDefinition

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,199}")


def refuse(cls: type[OperationDefinition], problem: str) -> NoReturn:
    """Raise the declaration error for ``cls``, naming it."""
    raise OperationDefinitionError(f"operation class {cls.__qualname__}: {problem}")


def _overrides(cls: type[OperationDefinition], method: str) -> bool:
    # The base class is the last one in the MRO that defines the method.
    base = next(c for c in reversed(cls.__mro__) if method in c.__dict__)
    return getattr(cls, method) is not getattr(base, method)


def check_declaration(cls: type[OperationDefinition]) -> None:
    """Check the name, the role specs and ``group_by``; normalize ``group_by`` to the enum."""
    if not isinstance(cls.name, str) or not _NAME.fullmatch(cls.name):
        refuse(
            cls,
            f"name {cls.name!r} must be 1-200 letters, digits, '_', '.' or '-', starting with a "
            "letter or '_' (it names paths and tables)",
        )
    for attr, spec_type in (("inputs", InputSpec), ("outputs", OutputSpec)):
        for role, spec in getattr(cls, attr).items():
            if not isinstance(role, str) or not role.isidentifier():
                refuse(cls, f"{attr} role {role!r} must be a Python identifier")
            if not isinstance(spec, spec_type):
                refuse(
                    cls,
                    f"{attr}[{role!r}] is a {type(spec).__name__}; use {spec_type.__name__}(...)",
                )
            if spec.artifact_type != "any":
                try:
                    get_artifact_type(spec.artifact_type)
                except ArtifactTypeError as err:
                    refuse(cls, f"{attr}[{role!r}]: {err}")
    if cls.group_by is not None:
        try:
            cls.group_by = GroupBy(cls.group_by)
        except ValueError:
            accepted = ", ".join(repr(g.value) for g in GroupBy)
            refuse(cls, f"group_by {cls.group_by!r} is not one of {accepted} (or None)")
    if cls.anchor_role is not None:
        _check_anchor(cls)


def _check_anchor(cls: type[OperationDefinition]) -> None:
    """An anchor is one of several declared input roles, matched by lineage (so a creator's)."""
    anchor, roles = cls.anchor_role, sorted(cls.inputs)
    if anchor not in cls.inputs:
        refuse(cls, f"anchor_role {anchor!r} is not one of its input roles {roles}")
    if len(roles) < 2:
        refuse(cls, f"anchor_role {anchor!r} needs at least one other input role to match")
    if cls.group_by not in (None, GroupBy.LINEAGE):
        refuse(
            cls,
            f"anchor_role pairs by shared ancestry and cannot be combined with group_by="
            f"{cls.group_by}; fix: drop group_by, or set it to LINEAGE",
        )
    cls.group_by = GroupBy.LINEAGE


def detect_kind(cls: type[OperationDefinition]) -> OperationKind:
    """A curator overrides ``execute_curator``; a creator ``execute``; never both, never neither."""
    creator, curator = _overrides(cls, "execute"), _overrides(cls, "execute_curator")
    if hasattr(cls, "compose"):  # a CompositeDefinition
        if creator or curator:
            refuse(cls, "is a composite but overrides execute/execute_curator; keep compose only")
        if not _overrides(cls, "compose"):
            refuse(cls, "is a composite but does not override compose(self, ctx); define it")
        return OperationKind.COMPOSITE
    if creator and curator:
        refuse(cls, "overrides both execute (creator) and execute_curator (curator); keep one")
    if not (creator or curator):
        refuse(cls, "overrides neither execute (creator) nor execute_curator (curator); add one")
    return OperationKind.CURATOR if curator else OperationKind.CREATOR


def check_creator(cls: type[OperationDefinition]) -> None:
    """A creator declares lineage for every output and the lifecycle its roles need."""
    for role, spec in cls.outputs.items():
        if spec.infer_lineage_from is None:
            refuse(
                cls,
                f"creator output {role!r} has no infer_lineage_from; set "
                'OutputSpec(infer_lineage_from={"inputs": [<input roles>]}), or '
                '{"inputs": []} for outputs generated from nothing',
            )
    if cls.inputs and not _overrides(cls, "preprocess"):
        refuse(
            cls,
            f"creator with inputs {sorted(cls.inputs)} does not override preprocess; "
            "define preprocess(self, inp) to read inp.materialized_paths",
        )
    if cls.outputs and not _overrides(cls, "postprocess"):
        refuse(
            cls,
            f"creator with outputs {sorted(cls.outputs)} does not override "
            "postprocess; define postprocess(self, inp) returning an ArtifactResult",
        )


def check_curator(cls: type[OperationDefinition]) -> None:
    """A curator sees all its inputs at once: nothing pairs them into units."""
    if cls.anchor_role is not None:
        refuse(
            cls,
            f"is a curator and declares anchor_role {cls.anchor_role!r}, which pairs a "
            "creator's inputs into units; a curator gets every input at once (one frame per "
            "role): match them in execute_curator, or make it a creator",
        )


def check_composite(cls: type[OperationDefinition]) -> None:
    """A composite declares its outputs: they are what ``compose`` binds with ``ctx.output``."""
    if not cls.outputs:
        refuse(
            cls,
            "composite declares no outputs; set outputs = {role: OutputSpec(...)} and bind "
            "each in compose with ctx.output(role, handle.output(...))",
        )


def check_lineage_roles(cls: type[OperationDefinition]) -> None:
    """``infer_lineage_from`` names only roles the class declares."""
    for role, spec in cls.outputs.items():
        source = spec.lineage_source
        if source is None or (source == "inputs" and cls.runtime_defined_inputs):
            continue
        declared = (
            cls.inputs
            if source == "inputs"
            else {o: s for o, s in cls.outputs.items() if o != role}
        )
        if unknown := [r for r in spec.lineage_roles if r not in declared]:
            refuse(
                cls,
                f"outputs[{role!r}].infer_lineage_from names {source} roles {unknown}, "
                f"which it does not declare; declared: {sorted(declared) or '(none)'}",
            )
