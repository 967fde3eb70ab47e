"""The inputs of a window of units, read once by the orchestrator instead of once per pack.

A unit's worker pack used to read its units' inputs itself: a scan of the artifact index and
of each type's table per pack (one per unit for a pack of one), and on a fresh worker the
Delta and Arrow imports first. Over a step of a thousand short units that was about a third of
the workers' time (py-spy, ``bench.noop_unit`` at N = 1,000), and a fifth of it for units that
read a small input and make one artifact (``bench.reads_input`` at N = 10,000). On SLURM each
of those reads is an element reading the root over the cluster's file system.

So the orchestrator reads them once for each window of units it dispatches, and each unit
carries its own (``ExecutionUnit.input_rows``); the worker's ``input_loading`` then asks the
store for nothing:

- every unit that loads inputs gets its inputs' rows (ids, types, sizes, names, metadata): one
  read without content for the whole window;
- a unit that hydrates a role gets the content too when each of its inputs is small
  (``SMALL_INPUT_BYTES``), while the window's shipped content stays under
  ``WINDOW_CONTENT_BYTES``: one more read, with content, of those inputs alone. Its content
  travels with the unit to the worker (pickled with its pack), which is cheaper than a worker's
  scan for a few KB, and the orchestrator's memory holds at most a window's worth.

A larger input's content is left to the worker, which gets its row (with every other input's)
and reads the content alone: a large content kept as a file, just that file, with no table
read (``input_loading.with_contents``). Every input of a larger window (a whole SLURM wave of
more than ``MAX_ROWS`` ids) is left to the worker: the orchestrator never holds a copy of a
large artifact's bytes. If a read fails, the workers read as before too, and each unit reports
its own error.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from stemma.core.engine.worker.input_loading import hydrates, read_contents
from stemma.core.engine.worker.units import ExecutionUnit
from stemma.core.operations.drafts import FinalizedArtifact
from stemma.core.store.protocols import RunStore

MAX_ROWS = 65_536
"""Input ids of one window at most for the orchestrator to read them (its memory stays flat)."""
SMALL_INPUT_BYTES = 64 * 2**10
"""The largest input whose content the orchestrator reads and ships with its unit."""
WINDOW_CONTENT_BYTES = 32 * 2**20
"""The most input content shipped with one window's units; later units' workers read theirs."""


Roles = dict[str, tuple[str, ...]]
"""A unit's input ids per role (``ExecutionUnit.inputs``), worked out once per unit here."""


def with_input_rows(store: RunStore, units: Sequence[ExecutionUnit]) -> list[ExecutionUnit]:
    """``units``, each given its inputs' rows (and small contents) when it can (two reads).

    Units that load no inputs, and units whose inputs are not all in the store, are returned as
    they were: their workers read. A hydrating unit whose inputs are not all small gets their
    rows without content: its worker reads only the contents.
    """
    roles = [unit.inputs() if unit.operation.loads_inputs else None for unit in units]
    wanted = {i for unit_roles in roles if unit_roles for ids in unit_roles.values() for i in ids}
    if not wanted or len(wanted) > MAX_ROWS:
        return list(units)
    try:
        rows = store.load_artifacts(wanted, content=False)
    except Exception:  # the workers read them, and each unit says what went wrong
        return list(units)
    hydrating = [
        unit_roles is not None and hydrates(unit, unit_roles)
        for unit, unit_roles in zip(units, roles, strict=True)
    ]
    contents = _small_contents(store, rows, [r for r, h in zip(roles, hydrating, strict=True) if h])
    shipped: list[ExecutionUnit] = []
    for unit, unit_roles, hydrated in zip(units, roles, hydrating, strict=True):
        if unit_roles is None:
            shipped.append(unit)
        elif not hydrated:
            shipped.append(dataclasses.replace(unit, input_rows=_own_rows(unit_roles, rows)))
        elif all(i in contents for ids in unit_roles.values() for i in ids):
            shipped.append(dataclasses.replace(unit, input_rows=_own_rows(unit_roles, contents)))
        elif all(i in rows for ids in unit_roles.values() for i in ids):
            # rows without the contents: the worker reads only those (a large one: its file)
            shipped.append(dataclasses.replace(unit, input_rows=_own_rows(unit_roles, rows)))
        else:
            shipped.append(unit)
    return shipped


def _small_contents(
    store: RunStore, rows: Mapping[str, FinalizedArtifact], units: Sequence[Roles | None]
) -> dict[str, FinalizedArtifact]:
    """The inputs, with content, of the first hydrating units whose inputs are all small.

    Units (their roles) are taken in order while the window's content stays under its budget;
    an input not in the store (its unit fails in its worker, which says so) or not small leaves
    its unit out.
    """
    chosen: set[str] = set()
    budget = WINDOW_CONTENT_BYTES
    for unit_roles in units:
        ids = {i for ids in (unit_roles or {}).values() for i in ids if i not in chosen}
        sizes = [rows[i].size if i in rows else None for i in ids]
        if any(size is None or size > SMALL_INPUT_BYTES for size in sizes):
            continue
        need = sum(size or 0 for size in sizes)
        if need > budget:
            break
        budget -= need
        chosen.update(ids)
    if not chosen:
        return {}
    try:
        return read_contents(store, {i: rows[i] for i in chosen})
    except Exception:  # their workers read them
        return {}


def _own_rows(roles: Roles, rows: Mapping[str, FinalizedArtifact]) -> dict[str, FinalizedArtifact]:
    """The unit's rows; an id not in the store stays missing, as the worker reports it."""
    return {i: rows[i] for ids in roles.values() for i in ids if i in rows}
