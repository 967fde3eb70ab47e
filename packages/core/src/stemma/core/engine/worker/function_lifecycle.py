"""What a worker does for a function step's unit: call ``fn``, publish ``OUT``, settle the result.

The output is built under a scratch name beside its final place and renamed into place only
after ``fn`` returned, so a crash or a failure never leaves a half-written output where a
dependent or a later run would take it for a finished one. The outcome is staged like any
unit's; the orchestrator commits it.

The return value is recorded as plain data: numpy scalars and arrays are made Python scalars and
lists first (:func:`~stemma.core.canonical.as_plain_data`). A value that still has no canonical
form fails the step, but never throws its finished work away: the output is published (not
recorded, so the step runs again) and the error names where it is.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from stemma.core.canonical import as_plain_data, canonical_json, without_config_advice
from stemma.core.crash_points import crash_point
from stemma.core.engine.worker.creator_lifecycle import (
    LifecycleOutcome,
    failure_outcome,
)
from stemma.core.engine.worker.function_operation import (
    OUTPUT_ROLE,
    TYPE_KEY,
    VALUE_ROLE,
    FunctionOperation,
)
from stemma.core.engine.worker.units import ExecutionUnit
from stemma.core.errors import UnfingerprintableError
from stemma.core.execution_records import LineageEdge
from stemma.core.graph.context import running_under
from stemma.core.identity import content_id, digest_tree, file_ref_artifact_id
from stemma.core.operations.drafts import FinalizedArtifact
from stemma.core.run_ids import new_attempt_id

VALUE_JSON = "value_json"
"""The key of the return value's canonical JSON in the unit's reply to the orchestrator."""


def run_function(unit: ExecutionUnit, store: object = None) -> LifecycleOutcome:
    """Run a function step's unit; never raises (a failure is an outcome).

    A step given ``OUT_URL`` on a root in a bucket (``call.write_url``) starts from an empty
    prefix there, and what it put under it is brought into its scratch output once it returns,
    by ``store`` (stemma-storage's ``clear_written`` and ``take_written``); an attempt that
    fails leaves its objects for ``stemma vacuum``, where they can be looked at.
    """
    call = cast(FunctionOperation, unit.operation).call
    if call is None:
        return failure_outcome(ValueError("a function unit without its call"), None)
    root = Path(unit.root)
    try:
        (root / call.output_relpath).parent.mkdir(parents=True, exist_ok=True)
        if call.write_url is not None:  # a retry of this very unit finds nothing of the first
            _store_call(store, "clear_written")(call.write_url)
        with running_under(root):
            value = call.fn(**call.kwargs)
        bring_written(unit, store)
    except Exception as err:
        return function_failed(unit, err)
    return settle_function(unit, value)


def bring_written(unit: ExecutionUnit, store: object) -> None:
    """Bring what the function put under ``OUT_URL`` into its scratch output, if it was told one.

    Called once the function returned, before :func:`settle_function` (by a worker, and for an
    external runner's step): from there the output is what ``OUT`` would have made.
    """
    call = cast(FunctionOperation, unit.operation).call
    if call is not None and call.write_url is not None:
        _store_call(store, "take_written")(call.write_url, call.scratch)


def _store_call(store: object, name: str) -> Callable[..., None]:
    found = getattr(store, name, None)
    if found is None:
        raise TypeError(
            f"OUT_URL names a prefix in an object store, but this unit's store "
            f"({type(store).__name__}) cannot read one: install stemma-storage"
        )
    return cast(Callable[..., None], found)


def keep_in_store(
    unit: ExecutionUnit, store: object, outcome: LifecycleOutcome
) -> LifecycleOutcome:
    """``outcome``, once the store has kept the output where the root keeps what lasts.

    A store whose root is in an object store copies the output directory there
    (``keep_output``, stemma-storage); any other has no ``keep_output`` and nothing to do. A
    copy that fails fails the unit: a record of an output another machine cannot fetch would
    make it built there and missing.
    """
    call = cast(FunctionOperation, unit.operation).call
    keep = getattr(store, "keep_output", None)
    if not outcome.success or keep is None or call is None:
        return outcome
    try:
        # (with OUT_URL's prefix, what came from the bucket is copied inside it, then cleared)
        keep(call.output_relpath, call.write_url)
    except Exception as err:
        return failure_outcome(err, None, prefix="could not keep the output in the root's store: ")
    return outcome


def function_failed(unit: ExecutionUnit, error: Exception) -> LifecycleOutcome:
    """The outcome of a function that raised: its scratch output removed, its error kept."""
    call = cast(FunctionOperation, unit.operation).call
    if call is not None:
        remove(Path(call.scratch))
    return failure_outcome(error, None)


def settle_function(unit: ExecutionUnit, value: Any) -> LifecycleOutcome:
    """Publish what the function left at its scratch path, and make its two artifacts.

    Also what an external runner calls after running the function itself
    (:mod:`stemma.core.front.external`). Never raises: an unreadable output is a failed outcome,
    and nothing is published. A value that cannot be recorded, even as plain data (numpy scalars
    and arrays are converted), is a failed outcome too, but the output, finished, is published
    (not recorded: the step runs again) and the error says where it is.
    """
    op = cast(FunctionOperation, unit.operation)
    call = op.call
    if call is None:
        return failure_outcome(ValueError("a function unit without its call"), None)
    final = Path(unit.root) / call.output_relpath
    scratch = Path(call.scratch)
    try:
        if not scratch.exists():
            scratch.mkdir()  # fn wrote nothing: the output is an empty directory
        digest = digest_tree(scratch)
    except Exception as err:
        return function_failed(unit, err)
    try:
        value_json = canonical_json(as_plain_data(value), "value")
    except Exception as err:
        return _unrecordable(unit, op.step_name, err, scratch, final)
    try:
        publish(scratch, final)
    except Exception as err:
        return function_failed(unit, err)
    output = FinalizedArtifact(
        artifact_id=file_ref_artifact_id(digest, call.output_relpath),
        artifact_type="file_ref",
        content=None,
        original_name=final.name,
        extension="",
        size=digest.size,
        fields={
            "path": call.output_relpath,
            "content_hash": digest.content_hash,
            "file_count": digest.file_count,
        },
        metadata={} if call.output_type is None else {TYPE_KEY: call.output_type},
        origin_step=None,
    )
    data = value_json.encode()
    returned = FinalizedArtifact(
        artifact_id=content_id(data),
        artifact_type="metric",
        content=data,
        original_name="value.json",
        extension=".json",
        size=len(data),
        fields={},
        metadata={},
        origin_step=None,
    )
    return LifecycleOutcome(
        success=True,
        outputs={OUTPUT_ROLE: (output.artifact_id,), VALUE_ROLE: (returned.artifact_id,)},
        artifacts=(output, returned),
        edges=_edges(unit, (output, returned)),
        reply={VALUE_JSON: value_json},
    )


def _unrecordable(
    unit: ExecutionUnit, step_name: str, error: Exception, scratch: Path, final: Path
) -> LifecycleOutcome:
    """A step whose value cannot be recorded: failed, its finished output published all the same.

    The output is not recorded, so no run takes it for built; it is where the step's output
    always is, for the user to use or move, until the step runs again.
    """
    try:
        publish(scratch, final)
    except Exception as err:  # (the output cannot be published: nothing is kept after all)
        return function_failed(unit, err)
    what = (
        without_config_advice(str(error))
        if isinstance(error, UnfingerprintableError)
        else f"{type(error).__name__}: {error}"
    )
    return failure_outcome(
        UnfingerprintableError(
            f"the value returned by step {step_name!r} cannot be recorded: {what}. Return plain "
            f"data instead (str, int, float, bool, None, and lists, tuples and dicts with str "
            f"keys of those; numpy scalars and arrays are converted), or write the value into "
            f"the step's output and return its name. The step finished: its output is kept at "
            f"{final}, but not recorded, so the step runs again next time"
        ),
        None,
    )


def _edges(unit: ExecutionUnit, made: tuple[FinalizedArtifact, ...]) -> tuple[LineageEdge, ...]:
    """Every input artifact (a dep's output) is a parent of both outputs."""
    roles = {made[0].artifact_id: OUTPUT_ROLE, made[1].artifact_id: VALUE_ROLE}
    return tuple(
        LineageEdge(
            source_artifact_id=source,
            target_artifact_id=target.artifact_id,
            source_role=role,
            target_role=roles[target.artifact_id],
            target_artifact_type=target.artifact_type,
        )
        for role, sources in unit.inputs().items()
        for source in sources
        for target in made
    )


def publish(scratch: Path, final: Path) -> None:
    """Move the finished output into place, replacing an older build (a ``dev`` rerun)."""
    if final.exists() or final.is_symlink():
        retired = final.with_name(f".{final.name}.retired.{new_attempt_id()}")
        final.rename(retired)
        crash_point("out.replaced")
        remove(retired)
    scratch.rename(final)
    crash_point("out.published")


def remove(path: Path) -> None:
    """Remove a file or a tree, if it is there."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        path.unlink(missing_ok=True)


def scratch_for(root: Path, call_output: str) -> str:
    """A fresh scratch path beside the output ``call_output`` (relative to ``root``)."""
    final = root / call_output
    return str(final.with_name(f".{final.name}.{new_attempt_id()}"))
