"""stemma.core: lazy step graphs and pipelines over content-addressed artifacts, on one engine.

Build a graph of cheap handles with :func:`apply`, inspect it with :func:`lower`, and build it
with :func:`run` or :func:`resolve`; or drive a :class:`Pipeline` of operations step by step.
Both run on the same engine and land in the same store (Delta tables when stemma-storage is
installed, SQLite otherwise) under ``.stemma`` or ``$STEMMA_ROOT``.

Every name below is imported on first use (PEP 562), so importing a submodule (the dashboard
imports ``stemma.core.live``) does not load the engine, the operations and pydantic with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stemma.core.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from stemma.core.artifact import Artifact
    from stemma.core.canonical import canonical_json
    from stemma.core.engine.references import OutputReference, StepFuture, StepResult
    from stemma.core.errors import (
        BackendUnavailableError,
        FingerprintMismatchError,
        InputsChangedError,
        LoweringError,
        NotARootError,
        OperationConfigError,
        ReadOnlyRootError,
        RootURLError,
        RunCancelledError,
        StemmaError,
        StepCodeError,
        StepConfigError,
        StepCycleError,
        StepFailedError,
        StoreUnavailableError,
        UnfingerprintableError,
        UnpicklableStepError,
    )
    from stemma.core.front.api import plan, resolve, run
    from stemma.core.front.external import ExternalCall, ExternalRun
    from stemma.core.front.pipeline import Pipeline
    from stemma.core.graph.context import StepContext
    from stemma.core.graph.explain import config_diff
    from stemma.core.graph.markers import OUT, OUT_URL
    from stemma.core.graph.operation_steps import output_of
    from stemma.core.graph.step import ArtifactStep, apply
    from stemma.core.graph.step_spec import StepSpec, lower
    from stemma.core.identity import content_id, hash_canonical
    from stemma.core.operations.specs import Resources
    from stemma.core.store.opening import open_store

_EXPORTS = {
    "plan": "stemma.core.front.api",
    "resolve": "stemma.core.front.api",
    "run": "stemma.core.front.api",
    "Artifact": "stemma.core.artifact",
    "canonical_json": "stemma.core.canonical",
    "OUT": "stemma.core.graph.context",
    "OUT_URL": "stemma.core.graph.markers",
    "BackendUnavailableError": "stemma.core.errors",
    "FingerprintMismatchError": "stemma.core.errors",
    "InputsChangedError": "stemma.core.errors",
    "LoweringError": "stemma.core.errors",
    "NotARootError": "stemma.core.errors",
    "OperationConfigError": "stemma.core.errors",
    "ReadOnlyRootError": "stemma.core.errors",
    "RootURLError": "stemma.core.errors",
    "RunCancelledError": "stemma.core.errors",
    "StemmaError": "stemma.core.errors",
    "StepCodeError": "stemma.core.errors",
    "StepConfigError": "stemma.core.errors",
    "StepCycleError": "stemma.core.errors",
    "StepFailedError": "stemma.core.errors",
    "StoreUnavailableError": "stemma.core.errors",
    "UnfingerprintableError": "stemma.core.errors",
    "UnpicklableStepError": "stemma.core.errors",
    "config_diff": "stemma.core.graph.explain",
    "ExternalCall": "stemma.core.front.external",
    "ExternalRun": "stemma.core.front.external",
    "content_id": "stemma.core.identity",
    "hash_canonical": "stemma.core.identity",
    "output_of": "stemma.core.graph.operation_steps",
    "Resources": "stemma.core.operations.specs",
    "Pipeline": "stemma.core.front.pipeline",
    "OutputReference": "stemma.core.engine.references",
    "StepFuture": "stemma.core.engine.references",
    "StepResult": "stemma.core.engine.references",
    "ArtifactStep": "stemma.core.graph.step",
    "StepContext": "stemma.core.graph.context",
    "apply": "stemma.core.graph.step",
    "StepSpec": "stemma.core.graph.step_spec",
    "lower": "stemma.core.graph.step_spec",
    "open_store": "stemma.core.store.opening",
}
"""Each public name and the module that defines it."""


__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    # building graphs lazily
    "OUT",
    "OUT_URL",
    "ArtifactStep",
    "StepContext",
    "StepSpec",
    "apply",
    "lower",
    "output_of",
    # running them: every run is a run (id, live state, cancel), on any backend
    "Artifact",
    "Resources",
    "plan",
    "resolve",
    "run",
    # running them with a scheduler of your own
    "ExternalCall",
    "ExternalRun",
    # pipelines of operations, step by step
    "OutputReference",
    "Pipeline",
    "StepFuture",
    "StepResult",
    # identity
    "canonical_json",
    "config_diff",
    "content_id",
    "hash_canonical",
    # the store
    "open_store",
    # errors
    "BackendUnavailableError",
    "FingerprintMismatchError",
    "InputsChangedError",
    "LoweringError",
    "NotARootError",
    "OperationConfigError",
    "ReadOnlyRootError",
    "RootURLError",
    "RunCancelledError",
    "StemmaError",
    "StepCodeError",
    "StepConfigError",
    "StepCycleError",
    "StepFailedError",
    "StoreUnavailableError",
    "UnfingerprintableError",
    "UnpicklableStepError",
]
