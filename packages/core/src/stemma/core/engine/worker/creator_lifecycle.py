"""The creator lifecycle in a sandbox, and what every execution ends with: settling its result.

:func:`run_creator` materializes the inputs, runs ``preprocess`` / ``execute`` /
``postprocess`` with the process's output captured, validates the result and settles it before
the sandbox goes. :func:`settle_result` (used by curators too) finalizes drafts into
content-addressed artifacts and captures their lineage: explicit ``result.lineage`` first, else
stem matching as each role's ``infer_lineage_from`` says, with co-input edges for paired groups.
"""

from __future__ import annotations

import pickle
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from stemma.core.canonical import to_canonical
from stemma.core.engine.worker.materialize import Loader, MaterializePlan, plan_inputs
from stemma.core.engine.worker.on_demand_inputs import (
    OnDemandExecuteInput,
    OnDemandPostprocessInput,
    OnDemandPreprocessInput,
)
from stemma.core.engine.worker.output_capture import capture_output
from stemma.core.engine.worker.sandbox import UnitSandbox
from stemma.core.engine.worker.units import ExecutionUnit
from stemma.core.errors import LineageError
from stemma.core.execution_records import LineageEdge
from stemma.core.operations.drafts import FinalizedArtifact
from stemma.core.operations.results import ArtifactResult, OperationResult, validate_result
from stemma.core.operations.stem_matching import NamedArtifact, filename_stem, infer_lineage
from stemma.core.store.failure_logs import tail_lines
from stemma.core.store.locations import RootLayout

_SUMMARY_CHARS = 2000


@dataclass(frozen=True, kw_only=True)
class LifecycleOutcome:
    """What one execution produced, or why it failed: everything its record needs."""

    success: bool
    outputs: Mapping[str, tuple[str, ...]] = field(default_factory=dict[str, tuple[str, ...]])
    """Per output role, the artifact ids (new or passed through), deduplicated in order."""
    artifacts: tuple[FinalizedArtifact, ...] = ()
    """New artifacts, deduplicated by id."""
    edges: tuple[LineageEdge, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict[str, Any])
    error: str | None = None
    """The full traceback, or a failed result's own message."""
    summary: str | None = None
    """One line saying what went wrong."""
    tool_output: str | None = None
    """The last lines the lifecycle printed."""
    reply: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """What the orchestrator is told beyond the record and never committed (a function
    step's return value, which its caller gets back without reading the store)."""


EXCEPTION = "exception"
"""The key of a failed unit's own exception in its reply."""


def failure_outcome(
    error: BaseException, tool_output: str | None, *, prefix: str = ""
) -> LifecycleOutcome:
    """The outcome of an execution that raised ``error``."""
    summary = f"{prefix}{type(error).__name__}: {error}"[:_SUMMARY_CHARS]
    text = "".join(traceback.format_exception(error))
    return LifecycleOutcome(
        success=False,
        error=text,
        summary=summary,
        tool_output=tool_output,
        reply=exception_reply(error),
    )


def exception_reply(error: BaseException) -> dict[str, Any]:
    """The unit's own exception, for the caller to chain, when it survives a pickle trip."""
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:  # an exception holding a lock, a socket…: the traceback text must do
        return {}
    return {EXCEPTION: error}


def run_creator(
    unit: ExecutionUnit,
    inputs: Mapping[str, Sequence[FinalizedArtifact]],
    *,
    run_id: str,
    load: Loader,
    associated: Mapping[str, Mapping[str, Mapping[str, list[FinalizedArtifact]]]] | None = None,
) -> LifecycleOutcome:
    """Run a creator's lifecycle in its sandbox; never raises (a failure is an outcome).

    Args:
        unit: the unit; its operation is a creator.
        inputs: ``{role: [artifacts]}`` of the unit (with content unless the role does not
            hydrate).
        run_id: the execution run id, which names the sandbox.
        load: fetches artifacts that configs refer to but that are not inputs.
        associated: per role, per input id, the artifacts its ``with_associated`` asked for.
    """
    op = unit.operation
    root = Path(unit.root)
    keep = unit.preserve_working
    try:
        sandbox = UnitSandbox.open(
            RootLayout(root).working, unit.step_number, str(op.name), run_id, keep=keep
        )
    except OSError as err:
        return failure_outcome(err, None, prefix="could not create the sandbox: ")
    try:
        # Planned (and checked) now; written, with the sandbox in place, only when the
        # operation reads inp.materialized_paths: a unit that reads its inputs' content never
        # pays for a file per input and a sandbox to hold them (or, kept, shows them).
        plan = plan_inputs(
            op, inputs, sandbox.final.root / "materialized_inputs", root=root, load=load
        )
        materialize = _materializer(plan, sandbox)
        if keep:
            materialize()
        artifacts = {role: list(items) for role, items in inputs.items()}
        with capture_output(sandbox.log_path, keep_open=sandbox.reused) as captured:
            prepared: Any = op.preprocess(
                OnDemandPreprocessInput(
                    sandbox=sandbox,
                    materialize=materialize,
                    input_artifacts=artifacts,
                    associated=associated or {},
                )
            )
            if not isinstance(prepared, Mapping):
                raise TypeError(
                    f"operation {op.name!r}: preprocess returned {type(prepared).__name__}; "
                    "return a dict (it is handed to execute as inp.prepared)"
                )
            returned = op.execute(
                OnDemandExecuteInput(sandbox=sandbox, prepared=cast("Mapping[str, Any]", prepared))
            )
            result = op.postprocess(
                OnDemandPostprocessInput(
                    sandbox=sandbox, execute_result=returned, step_number=unit.step_number
                )
            )
        sandbox.stop_placing()
        return settle_result(unit, validate_result(op, result), inputs, tool_output=captured.tail)
    except (Exception, SystemExit) as err:
        sandbox.stop_placing()
        return failure_outcome(err, tail_lines(sandbox.log_path))
    finally:
        sandbox.release(keep=keep)


def _materializer(
    plan: MaterializePlan, sandbox: UnitSandbox
) -> Callable[[], dict[str, list[Path]]]:
    """Writes the planned input files once (placing the sandbox first when any is written)."""

    def materialize() -> dict[str, list[Path]]:
        if plan.writes and not plan.written:
            sandbox.place()
            plan.write()
        return plan.paths

    return materialize


def settle_result(
    unit: ExecutionUnit,
    result: OperationResult,
    inputs: Mapping[str, Sequence[FinalizedArtifact]],
    *,
    tool_output: str | None,
) -> LifecycleOutcome:
    """Turn a validated result into an outcome: finalize drafts and capture lineage.

    Raises:
        LineageError: lineage is incomplete, ambiguous or names an unknown artifact.
        ArtifactTypeError: a draft cannot be finalized.
        UnfingerprintableError: the result's metadata is not plain JSON data.
    """
    where = f"operation {unit.operation.name!r}.metadata"
    metadata = to_canonical(dict(result.metadata), where)
    if isinstance(result, ArtifactResult) and not result.success:
        message = result.error or "the operation reported a failure"
        return LifecycleOutcome(
            success=False,
            error=message,
            summary=message[:_SUMMARY_CHARS],
            metadata=metadata,
            tool_output=tool_output,
        )
    if not isinstance(result, ArtifactResult):
        outputs = {role: tuple(dict.fromkeys(ids)) for role, ids in result.passthrough.items()}
        return LifecycleOutcome(
            success=True, outputs=outputs, metadata=metadata, tool_output=tool_output
        )
    finalized = {
        role: [draft.finalize() for draft in drafts] for role, drafts in result.artifacts.items()
    }
    edges = capture_lineage(unit, result, finalized, inputs)
    unique = {a.artifact_id: a for items in finalized.values() for a in items}
    return LifecycleOutcome(
        success=True,
        outputs={
            role: tuple(dict.fromkeys(a.artifact_id for a in items))
            for role, items in finalized.items()
        },
        artifacts=tuple(unique.values()),
        edges=edges,
        metadata=metadata,
        tool_output=tool_output,
    )


def capture_lineage(
    unit: ExecutionUnit,
    result: ArtifactResult,
    finalized: Mapping[str, Sequence[FinalizedArtifact]],
    inputs: Mapping[str, Sequence[FinalizedArtifact]],
) -> tuple[LineageEdge, ...]:
    """The lineage edges of one execution's new artifacts, deduplicated in order.

    Raises:
        LineageError: an output matches no source or several, or explicit lineage names an
            artifact that is neither an input nor an output of this execution.
    """
    op = type(unit.operation)
    by_role = {role: {a.artifact_id: a for a in items} for role, items in inputs.items()}
    produced = {role: {a.artifact_id: a for a in items} for role, items in finalized.items()}
    edges: dict[LineageEdge, None] = {}
    for role, outs in finalized.items():
        where = f"step {unit.step_number} {op.name!r}, output role {role!r}"
        explicit = (result.lineage or {}).get(role)
        if explicit is not None:
            for out, parents in zip(outs, explicit, strict=True):
                for parent in parents:
                    src_role, src = _locate(parent, by_role, produced, out, where)
                    edges[_edge(src, src_role, out, role, None)] = None
            continue
        spec = op.outputs[role]
        if spec.infer_lineage_from is None or not outs:
            continue
        pool = by_role if spec.lineage_source == "inputs" else produced
        candidates = [(r, a) for r in spec.lineage_roles for a in pool.get(r, {}).values()]
        matched = infer_lineage(
            [_named(a) for a in outs],
            [_named(a) for _, a in candidates],
            generated=not spec.lineage_roles,
            context=where,
        )
        role_of = {a.artifact_id: (r, a) for r, a in reversed(candidates)}  # first role wins
        for out in outs:
            if (source := matched.get(out.artifact_id)) is None:
                continue
            src_role, src = role_of[source]
            if spec.lineage_source == "outputs":
                edges[_edge(src, src_role, out, role, None)] = None
                continue
            for member_role, member, group_id in _co_inputs(unit, src_role, src, out, by_role):
                edges[_edge(member, member_role, out, role, group_id)] = None
    return tuple(edges)


def _co_inputs(
    unit: ExecutionUnit,
    src_role: str,
    src: FinalizedArtifact,
    out: FinalizedArtifact,
    by_role: Mapping[str, Mapping[str, FinalizedArtifact]],
) -> list[tuple[str, FinalizedArtifact, str | None]]:
    """The matched input, or every member of its paired group, each with the group id."""
    groups = [
        g
        for g in unit.groups
        if g.group_id is not None and src.artifact_id in g.inputs.get(src_role, ())
    ]
    if len(groups) > 1:  # e.g. a cross product: keep the groups whose members all name the output
        stem = filename_stem(out.original_name)
        groups = [
            g
            for g in groups
            if all(
                filename_stem(by_role[r][i].original_name) in stem
                for r, ids in g.inputs.items()
                for i in ids
            )
        ]
        if len(groups) != 1:
            raise LineageError(
                f"output {out.original_name!r} matched input {src.original_name!r}, which is in "
                f"{'several' if groups else 'no'} paired groups whose every member's stem is in "
                "the output's name; name outputs after all the inputs of their group, or record "
                "the lineage explicitly",
                output_name=out.original_name,
                candidate_names=[src.original_name],
            )
    if not groups:
        return [(src_role, src, None)]
    (group,) = groups
    return [(r, by_role[r][i], group.group_id) for r, ids in group.inputs.items() for i in ids]


def _locate(
    artifact_id: str,
    by_role: Mapping[str, Mapping[str, FinalizedArtifact]],
    produced: Mapping[str, Mapping[str, FinalizedArtifact]],
    out: FinalizedArtifact,
    where: str,
) -> tuple[str, FinalizedArtifact]:
    for pool in (by_role, produced):
        for role, artifacts in pool.items():
            if artifact_id in artifacts:
                return role, artifacts[artifact_id]
    raise LineageError(
        f"{where}: the explicit lineage of {out.original_name!r} names {artifact_id}, which is "
        "neither an input nor an output of this execution",
        output_name=out.original_name,
        candidate_names=[a.original_name for items in by_role.values() for a in items.values()],
    )


def _edge(
    src: FinalizedArtifact, src_role: str, out: FinalizedArtifact, role: str, group_id: str | None
) -> LineageEdge:
    return LineageEdge(
        source_artifact_id=src.artifact_id,
        target_artifact_id=out.artifact_id,
        source_role=src_role,
        target_role=role,
        source_artifact_type=src.artifact_type,
        target_artifact_type=out.artifact_type,
        group_id=group_id,
    )


def _named(artifact: FinalizedArtifact) -> NamedArtifact:
    return NamedArtifact(artifact_id=artifact.artifact_id, original_name=artifact.original_name)
