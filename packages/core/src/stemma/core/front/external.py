"""Run lowered steps with a scheduler of your own, and record them like stemma's engine does.

``lower()`` hands you the :class:`~stemma.core.graph.step_spec.StepSpec` graph; an
:class:`ExternalRun` gives each step what running it needs (its arguments, with ``OUT`` and
its deps' outputs resolved to paths) and records what came back through the engine's own commit
path: the same execution key, the same artifacts, the same lineage, the same events. Steps it
records are cache hits for ``run()`` and for the next external run, and ``stemma runs``,
``stemma explain`` and lineage queries see them like any others::

    memo: dict[ArtifactStep, StepSpec] = {}
    lower(top, memo)
    with ExternalRun(root="results") as ext:
        for spec in ext.order(memo.values()):          # deps first; built ones left out
            call = ext.prepare(spec)
            value = my_scheduler.submit(spec.step.fn, **call.kwargs).result()
            ext.record(call, value)                   # or ext.record(call, error=exc)
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from stemma.core.artifact import Artifact
from stemma.core.backends.thread import ThreadBackend
from stemma.core.engine import (
    CachePolicy,
    ExternalUnit,
    RunContext,
    built_record,
    check_inputs_unchanged,
    open_external_unit,
    record_external_outcome,
)
from stemma.core.errors import StepFailedError
from stemma.core.front.lazy_door import deps_first
from stemma.core.graph.step_graph import needed
from stemma.core.graph.step_planner import artifact_from_record
from stemma.core.graph.step_spec import StepSpec
from stemma.core.live.monitor import RunMonitor
from stemma.core.provenance import capture_provenance
from stemma.core.run_ids import new_run_id
from stemma.core.store.opening import open_run_store
from stemma.core.store.protocols import RunStore


class _ExternalBackend(ThreadBackend):
    """What the records name as the backend; nothing is ever submitted to it."""

    name = "external"


@dataclass(frozen=True, kw_only=True)
class ExternalCall:
    """One step made ready for an external runner: call ``spec.step.fn(**kwargs)``."""

    spec: StepSpec
    """The step."""
    kwargs: Mapping[str, Any]
    """Its arguments: ``OUT`` is a scratch path beside the output, each dep its output's path."""
    started: float
    """When it was prepared (``time.monotonic()``)."""
    opened: ExternalUnit
    """The engine's step and unit: what a worker would have been sent."""


class ExternalRun:
    """A run whose steps another scheduler executes; stemma keys, records and caches them."""

    def __init__(
        self,
        *,
        root: str | os.PathLike[str] | None = None,
        store: RunStore | None = None,
        name: str = "external",
    ) -> None:
        """Open the store (committing what a crashed run left staged) and start a run.

        Raises:
            ValueError: ``name`` is not one plain path segment.
            NotARootError: ``root`` is a file, or lies under one.
        """
        run_id = new_run_id(name)
        self.store = store if store is not None else open_run_store(root)
        self.store.recover()
        self._ctx = RunContext(
            store=self.store,
            backend=_ExternalBackend(max_workers=1),
            monitor=RunMonitor(
                run_id=run_id, name=name, root=str(self.store.layout.root), backend="external"
            ),
            run_id=run_id,
            steps={},
            cache_policy=CachePolicy.ALL_SUCCEEDED,
            preserve_working=False,
            provenance=capture_provenance().to_dict(),
        )
        self._built: dict[str, Artifact] = {}

    @property
    def run_id(self) -> str:
        """The run's id, in every event it records."""
        return self._ctx.run_id

    def built(self, spec: StepSpec) -> Artifact | None:
        """The step's artifact if it is built already (never for a ``dev`` step)."""
        if spec.fingerprint in self._built:
            return self._built[spec.fingerprint]
        if spec.mutable:
            return None
        record = built_record(self._ctx, spec)
        return None if record is None else artifact_from_record(self.store.layout.root, record)

    def order(self, specs: Iterable[StepSpec]) -> list[StepSpec]:
        """The steps to run, deps first, leaving out those built already and what is under them."""
        wanted = {s.fingerprint: s for s in specs}
        built = {fp for fp, s in wanted.items() if self.built(s) is not None}
        under = {dep.fingerprint for s in wanted.values() for dep in s.deps}
        roots = [s for fp, s in wanted.items() if fp not in under]
        return deps_first([s for root in roots for s in needed(root, built)])

    def prepare(self, spec: StepSpec) -> ExternalCall:
        """Resolve the step's arguments and open its attempt.

        Raises:
            LookupError: a dependency is not built yet (record it first).
            InputsChangedError: an input changed since ``apply`` (or its ``build_config`` gave
                other arguments when keyed again).
            StepConfigError: its ``build_config`` failed at run time, or gave other arguments.
        """
        check_inputs_unchanged(spec)
        deps: dict[str, Artifact] = {}
        for dep in spec.deps:
            found = self.built(dep)
            if found is None:
                raise LookupError(
                    f"step {spec.name!r}: its dependency {dep.name!r} ({dep.fingerprint[:8]}) "
                    "is not built; record it before preparing this step"
                )
            deps[dep.fingerprint] = found
        opened = open_external_unit(self._ctx, spec, deps)
        return ExternalCall(
            spec=spec, kwargs=opened.kwargs, started=time.monotonic(), opened=opened
        )

    def record(
        self, call: ExternalCall, value: Any = None, *, error: BaseException | None = None
    ) -> Artifact:
        """Record the step's result: what it left at ``OUT`` and what it returned, or its error.

        Raises:
            StepFailedError: the step failed (``error`` was given, its value could not be
                encoded, or its output could not be read); the failure is recorded first.
        """
        result = record_external_outcome(
            self._ctx, call.spec, call.opened, call.started, value, error=error
        )
        if not result.success:
            failure = StepFailedError(
                f"step {call.spec.name!r} failed: {result.metadata.get('error')}",
                failed=[call.spec.name],
                skipped=[],
            )
            raise failure from error
        record = built_record(self._ctx, call.spec)
        if record is None:  # committed just now: only a vanished output gets here
            raise StepFailedError(
                f"step {call.spec.name!r}: recorded, but its output is gone",
                failed=[call.spec.name],
                skipped=[],
            )
        artifact = dataclasses.replace(
            artifact_from_record(self.store.layout.root, record), cached=False
        )
        self._built[call.spec.fingerprint] = artifact
        return artifact

    def close(self) -> None:
        """Write any deferred event; the run ends."""
        self._ctx.record([])

    def __enter__(self) -> ExternalRun:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
