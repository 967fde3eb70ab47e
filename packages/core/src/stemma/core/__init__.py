"""stemma.core: lazy step graphs over content-addressed artifacts, keyed, run and recorded.

Build a graph of cheap handles with :func:`apply`, inspect it with :func:`lower`, and build it
with :func:`run` or :func:`resolve`; results land in a store (Delta tables when stemma-storage
is installed, JSON records otherwise) under ``.stemma`` or ``$STEMMA_ROOT``.

Every name below is imported on first use (PEP 562), so importing a submodule (the dashboard
imports ``stemma.core.live``) does not load the runner, the operations and pydantic with it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stemma.core.api import plan, resolve, run
    from stemma.core.artifact import Artifact
    from stemma.core.canonical import canonical_json, to_canonical
    from stemma.core.context import OUT, StepContext
    from stemma.core.errors import (
        FingerprintMismatchError,
        InputsChangedError,
        LoweringError,
        StemmaError,
        StepCycleError,
        StepFailedError,
        StoreUnavailableError,
        UnfingerprintableError,
    )
    from stemma.core.explain import config_diff
    from stemma.core.file_lock import FileLock
    from stemma.core.file_store import FileStore
    from stemma.core.identity import content_id, hash_canonical
    from stemma.core.layout import RootLayout, resolve_root
    from stemma.core.operation_steps import output_of
    from stemma.core.records import (
        OutputRecord,
        Provenance,
        StepIdentity,
        StepOutcome,
        StepRecord,
        StepSkipped,
        StepStarted,
        StepStatus,
    )
    from stemma.core.runner import StepRunner
    from stemma.core.step import ArtifactStep, apply
    from stemma.core.step_planner import PlannedStep, StepPlanner
    from stemma.core.step_spec import StepSpec, lower
    from stemma.core.store import Store, available_stores, open_store

_EXPORTS = {
    "plan": "stemma.core.api",
    "resolve": "stemma.core.api",
    "run": "stemma.core.api",
    "Artifact": "stemma.core.artifact",
    "canonical_json": "stemma.core.canonical",
    "to_canonical": "stemma.core.canonical",
    "OUT": "stemma.core.context",
    "StepContext": "stemma.core.context",
    "FingerprintMismatchError": "stemma.core.errors",
    "InputsChangedError": "stemma.core.errors",
    "LoweringError": "stemma.core.errors",
    "StemmaError": "stemma.core.errors",
    "StepCycleError": "stemma.core.errors",
    "StepFailedError": "stemma.core.errors",
    "StoreUnavailableError": "stemma.core.errors",
    "UnfingerprintableError": "stemma.core.errors",
    "config_diff": "stemma.core.explain",
    "FileLock": "stemma.core.file_lock",
    "FileStore": "stemma.core.file_store",
    "content_id": "stemma.core.identity",
    "hash_canonical": "stemma.core.identity",
    "RootLayout": "stemma.core.layout",
    "resolve_root": "stemma.core.layout",
    "output_of": "stemma.core.operation_steps",
    "OutputRecord": "stemma.core.records",
    "Provenance": "stemma.core.records",
    "StepIdentity": "stemma.core.records",
    "StepOutcome": "stemma.core.records",
    "StepRecord": "stemma.core.records",
    "StepSkipped": "stemma.core.records",
    "StepStarted": "stemma.core.records",
    "StepStatus": "stemma.core.records",
    "StepRunner": "stemma.core.runner",
    "ArtifactStep": "stemma.core.step",
    "apply": "stemma.core.step",
    "PlannedStep": "stemma.core.step_planner",
    "StepPlanner": "stemma.core.step_planner",
    "StepSpec": "stemma.core.step_spec",
    "lower": "stemma.core.step_spec",
    "Store": "stemma.core.store",
    "available_stores": "stemma.core.store",
    "open_store": "stemma.core.store",
}
"""Each public name and the module that defines it."""


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'stemma.core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next access is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    # building graphs lazily
    "OUT",
    "ArtifactStep",
    "StepContext",
    "apply",
    "output_of",
    # lowering and running
    "Artifact",
    "PlannedStep",
    "StepPlanner",
    "StepRunner",
    "StepSpec",
    "lower",
    "plan",
    "resolve",
    "run",
    # identity
    "canonical_json",
    "config_diff",
    "content_id",
    "hash_canonical",
    "to_canonical",
    # stores and records
    "FileLock",
    "FileStore",
    "OutputRecord",
    "Provenance",
    "RootLayout",
    "StepIdentity",
    "StepOutcome",
    "StepRecord",
    "StepSkipped",
    "StepStarted",
    "StepStatus",
    "Store",
    "available_stores",
    "open_store",
    "resolve_root",
    # errors
    "FingerprintMismatchError",
    "InputsChangedError",
    "LoweringError",
    "StemmaError",
    "StepCycleError",
    "StepFailedError",
    "StoreUnavailableError",
    "UnfingerprintableError",
]
