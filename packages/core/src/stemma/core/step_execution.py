"""Execute one function step: lock, re-check, call ``fn``, publish ``OUT``, record the outcome.

The output is built under a temporary name beside its final place and renamed into place only
after ``fn`` returned, so a crash or a failure never leaves a half-written output where a
dependent or a later run would take it for a finished one.

The outcome is staged before it is committed. Given an :class:`OutcomeQueue`, the step only
opens its attempt there, stages its outcome and returns; the runner's thread commits what was
staged (see :mod:`stemma.core.outcome_queue`). A crash between the two loses nothing:
``recover()`` (at the next start, or by a runner waiting on the step's lock) commits what is
staged, once.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import socket
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from stemma.core.artifact import Artifact
from stemma.core.canonical import canonical_json
from stemma.core.context import StepContext, running_under
from stemma.core.errors import InputsChangedError
from stemma.core.file_lock import FileLock
from stemma.core.identity import content_id, digest_tree, file_ref_artifact_id, hash_plain
from stemma.core.outcome_queue import OutcomeQueue
from stemma.core.records import OutputRecord, StepOutcome, StepRecord, StepStarted
from stemma.core.run_ids import new_attempt_id
from stemma.core.step import encode_inputs, handles_in
from stemma.core.step_spec import StepSpec
from stemma.core.store import Store

LOCAL_THREAD_BACKEND = "local-thread"


class StepCodeError(Exception):
    """The step's own code (or its return value) failed; ``__cause__`` is the original error."""


def artifact_from_record(store: Store, record: StepRecord) -> Artifact:
    """The artifact of a step another run already built."""
    return Artifact(
        name=record.name,
        fingerprint=record.fingerprint,
        root=store.layout.root,
        relative_path=record.output_path or "",
        artifact_id=record.output_artifact_id or "",
        value=record.value,
        cached=True,
    )


def execute_step(
    spec: StepSpec,
    *,
    store: Store,
    deps: Mapping[str, Artifact],
    run_id: str,
    step_number: int,
    outcomes: OutcomeQueue | None = None,
) -> Artifact:
    """Run ``spec`` unless another runner finished it meanwhile; return its artifact.

    Args:
        spec: the step.
        store: where to record it.
        deps: the artifacts of ``spec``'s deps, by fingerprint.
        run_id: the run this attempt belongs to.
        step_number: the attempt's order within the run (recorded, never keyed).
        outcomes: where to stage the outcome for the caller to commit; committed here (before
            returning) when None.

    Raises:
        StepCodeError: ``fn`` raised, or returned a value that cannot be encoded canonically.
    """
    lock = FileLock(store.layout.locks / spec.fingerprint[:2] / f"{spec.fingerprint}.lock")
    with lock:
        # Another runner may have built it while we waited for the lock, or died after staging
        # it: commit what it staged first, so the work is never done twice. Either way its
        # output was published before its outcome was staged: without an output in place no
        # build is done, and the store need not be asked (a query and a staging scan per step).
        if not spec.mutable and store.layout.output_dir(spec.output_relpath).exists():
            store.recover(spec.name)
            done = store.completed([spec.fingerprint]).get(spec.fingerprint)
            if done is not None and store.layout.output_dir(done.output_path or "").exists():
                return artifact_from_record(store, done)
        started = StepStarted(
            step=spec.identity(),
            step_run_id=new_attempt_id(),
            run_id=run_id,
            step_number=step_number,
            backend=LOCAL_THREAD_BACKEND,
            timestamp=dt.datetime.now(dt.UTC),
        )
        if outcomes is None:
            store.record_started(started)
        else:
            outcomes.begin(started)
        return _run_and_record(spec, store, deps, started, outcomes)


def _run_and_record(
    spec: StepSpec,
    store: Store,
    deps: Mapping[str, Artifact],
    started: StepStarted,
    outcomes: OutcomeQueue | None,
) -> Artifact:
    final = store.layout.output_dir(spec.output_relpath)
    final.parent.mkdir(parents=True, exist_ok=True)
    inputs = _input_artifact_ids(spec, deps)
    attempt = _Attempt(spec=spec, started=started, inputs=inputs)
    scratch = final.with_name(f".{final.name}.{attempt.execution_run_id}")
    try:
        _check_inputs_unchanged(spec)
        context = StepContext.for_run(
            scratch, {dep.step: deps[dep.fingerprint].path() for dep in spec.deps}
        )
        with running_under(store.layout.root):
            value = spec.step.fn(**context.resolve(dict(spec.step.inputs)))
        value_json = canonical_json(value, f"the value returned by step {spec.name!r}")
        if not scratch.exists():
            scratch.mkdir()  # fn wrote nothing: the output is an empty directory
        digest = digest_tree(scratch)
        _publish(scratch, final)
    except Exception as err:
        _remove(scratch)
        _record(store, outcomes, attempt.outcome(error=traceback.format_exc()))
        raise StepCodeError(f"step {spec.name!r} ({spec.fingerprint[:8]}) failed: {err}") from err
    output = OutputRecord(
        relative_path=spec.output_relpath,
        artifact_id=file_ref_artifact_id(digest, spec.output_relpath),
        content_hash=digest.content_hash,
        size=digest.size,
        file_count=digest.file_count,
    )
    _record(store, outcomes, attempt.outcome(output=output, value_json=value_json))
    return Artifact(
        name=spec.name,
        fingerprint=spec.fingerprint,
        root=store.layout.root,
        relative_path=spec.output_relpath,
        artifact_id=output.artifact_id,
        # The decoded record, not the raw object: a fresh run and a cached one look the same.
        value=json.loads(value_json),
        cached=False,
    )


def _record(store: Store, outcomes: OutcomeQueue | None, outcome: StepOutcome) -> None:
    if outcomes is None:
        store.record_outcome(outcome)
    else:
        outcomes.stage(outcome.started.step.fingerprint, outcome)


@dataclass(kw_only=True)
class _Attempt:
    """What every outcome of one execution attempt shares."""

    spec: StepSpec
    started: StepStarted
    inputs: dict[str, tuple[str, ...]]
    execution_run_id: str = field(default_factory=new_attempt_id)

    def outcome(
        self,
        *,
        error: str | None = None,
        output: OutputRecord | None = None,
        value_json: str | None = None,
    ) -> StepOutcome:
        return StepOutcome(
            started=self.started,
            execution_run_id=self.execution_run_id,
            execution_spec_id=execution_key(self.spec, self.inputs),
            worker=f"{socket.gethostname()}:{os.getpid()}",
            ended_at=dt.datetime.now(dt.UTC),
            error=error,
            output=output,
            value_json=value_json,
            value_artifact_id=None if value_json is None else content_id(value_json.encode()),
            input_artifact_ids=self.inputs,
            provenance=self.spec.provenance,
        )


def _check_inputs_unchanged(spec: StepSpec) -> None:
    """Refuse to run on inputs that changed since ``apply``: the key would describe other data.

    A mutable input object edited after ``apply``, or an input file rewritten since, would
    otherwise be recorded under a fingerprint that promises the old content.
    """
    now, _ = encode_inputs(spec.name, spec.step.inputs)
    if now != spec.step.template:
        raise InputsChangedError(
            f"step {spec.name!r}: its inputs changed after apply() (an input object was mutated "
            "or an input file rewritten), so its fingerprint no longer describes them; build "
            "the step again with apply() after the change"
        )


def execution_key(spec: StepSpec, inputs: Mapping[str, tuple[str, ...]]) -> str:
    """The role-aware execution key: name, version, params, sorted artifact ids per role.

    Params are the inputs with each dep as its position; the deps appear per role, by the
    artifacts they delivered. So swapping two roles' inputs is a different execution, while the
    order in which one role's artifacts arrived is not. Never in it: paths of this step's own
    output, run ids, resources or the backend.
    """
    return hash_plain(
        {
            "name": spec.name,
            "version": spec.version,
            "params": spec.step.template,
            "overrides": {},
            "inputs": {role: sorted(ids) for role, ids in inputs.items()},
        }
    )


def _input_artifact_ids(spec: StepSpec, deps: Mapping[str, Artifact]) -> dict[str, tuple[str, ...]]:
    by_handle = {id(dep.step): deps[dep.fingerprint].artifact_id for dep in spec.deps}
    found: dict[str, tuple[str, ...]] = {}
    for role, value in spec.step.inputs.items():
        ids = tuple(by_handle[id(handle)] for handle in handles_in(value))
        if ids:
            found[role] = ids
    return found


def _publish(scratch: Path, final: Path) -> None:
    """Move the finished output into place, replacing an older build (a ``dev`` rerun)."""
    if final.exists() or final.is_symlink():
        retired = final.with_name(f".{final.name}.retired.{new_attempt_id()}")
        final.rename(retired)
        _remove(retired)
    scratch.rename(final)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        path.unlink(missing_ok=True)
