"""The inputs that a window of units reads without content, read once by the orchestrator.

A unit whose roles do not hydrate (``InputSpec(hydrate=False)``) needs only its inputs' rows:
ids, types, sizes, names and metadata. Each worker pack used to read them itself: a scan of the
artifact index and of each type's table per pack, one per unit for a pack of one, and on a
fresh worker the Delta and Arrow imports first. Over a step of a thousand short units that was
about a third of the workers' time (py-spy, ``bench.noop_unit`` at N = 1,000). On SLURM each
of those reads is an element reading the root over the cluster's file system.

So the orchestrator reads the rows once for each window of units it dispatches (one call, both
scans), and each unit carries its own (``ExecutionUnit.input_rows``); the worker's
``input_loading`` then asks the store for nothing. Rows are not content: a window of
``MAX_ROWS`` ids holds a few tens of MB at most, and a larger window (a whole SLURM wave) is
left to the workers, as before. If the read fails, the workers read as before too, and each
unit reports its own error.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from stemma.core.engine.worker.input_loading import hydrates
from stemma.core.engine.worker.units import ExecutionUnit
from stemma.core.operations.drafts import FinalizedArtifact
from stemma.core.store.protocols import RunStore

MAX_ROWS = 65_536
"""Input ids of one window at most for the orchestrator to read them (its memory stays flat)."""


def with_input_rows(store: RunStore, units: Sequence[ExecutionUnit]) -> list[ExecutionUnit]:
    """``units``, each unit whose roles are all dry given its inputs' rows (one store call).

    Units that hydrate a role, or that load no inputs, are returned as they were.
    """
    dry = [unit.operation.loads_inputs and not hydrates(unit) for unit in units]
    wanted = {
        artifact_id
        for unit, is_dry in zip(units, dry, strict=True)
        if is_dry
        for ids in unit.inputs().values()
        for artifact_id in ids
    }
    if not wanted or len(wanted) > MAX_ROWS:
        return list(units)
    try:
        rows = store.load_artifacts(wanted, content=False)
    except Exception:  # the workers read them, and each unit says what went wrong
        return list(units)
    return [
        dataclasses.replace(unit, input_rows=_own_rows(unit, rows)) if is_dry else unit
        for unit, is_dry in zip(units, dry, strict=True)
    ]


def _own_rows(
    unit: ExecutionUnit, rows: Mapping[str, FinalizedArtifact]
) -> dict[str, FinalizedArtifact]:
    """The unit's rows; an id not in the store stays missing, as the worker reports it."""
    return {i: rows[i] for ids in unit.inputs().values() for i in ids if i in rows}
