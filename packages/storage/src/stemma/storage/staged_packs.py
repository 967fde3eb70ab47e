"""Finding what a dead worker staged: the complete bundles of a step holding a pack's units.

A worker stages its pack as one bundle named after an attempt id it draws itself, and reports
the bundle's path when it returns. A worker killed between the two (its sentinel written, its
result not sent) leaves a complete bundle the orchestrator does not know of. Rather than record
the pack's units as crashed (and have the next start's recovery commit the bundle as well: two
execution rows per unit), the orchestrator asks for the bundles holding its units here. Each
complete bundle of the step's staging directory is looked at through its sentinel's two key
columns; only a bundle holding one of the units is read further (its executions and their
input/output edges, never the artifacts' content).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

import polars as pl

from stemma.core.execution_records import ExecutionRecord
from stemma.core.store.locations import RootLayout
from stemma.core.store.staging.pack_reading import StagedUnitKey, keep_best_staged, wanted_as
from stemma.storage.execution_rows import execution_from_row
from stemma.storage.schemas import EXECUTION_EDGES, EXECUTIONS
from stemma.storage.sentinel import SENTINEL
from stemma.storage.staging import is_complete, read_staged_files, staged_bundles

UnitKey = StagedUnitKey
"""``(step_run_id, execution_spec_id)``: a unit of one step run."""
_KEYS = ["step_run_id", "execution_spec_id"]


def staged_pack(
    layout: RootLayout, step_number: int, step_name: str, units: Collection[UnitKey]
) -> dict[UnitKey, tuple[Path, ExecutionRecord]]:
    """Per unit of ``units`` found staged under ``{step_number}_{step_name}``: bundle, record.

    A unit staged in several bundles gives its newest successful record. A bundle that cannot
    be read is passed over: recovery deals with it (quarantine), and its units are recorded
    as crashed.
    """
    wanted = set(units)
    found: dict[UnitKey, tuple[Path, ExecutionRecord]] = {}
    prefix = f"{step_number}_"
    for bundle in staged_bundles(layout, step_name):
        if not bundle.parents[2].name.startswith(prefix) or not is_complete(bundle):
            continue
        try:
            records = _records_if_any(bundle, wanted)
        except (OSError, pl.exceptions.PolarsError, ValueError):
            continue  # damaged, or committed and retired while we looked
        keep_best_staged(found, bundle, records, wanted)
    return found


def _records_if_any(bundle: Path, wanted: set[UnitKey]) -> list[ExecutionRecord]:
    """The bundle's records of ``wanted`` units; nothing read past the keys when none is."""
    keys = pl.read_parquet(bundle / SENTINEL, columns=_KEYS)
    if not any(wanted_as(wanted, *key) for key in keys.iter_rows()):
        return []
    rows = [
        row
        for row in read_staged_files(EXECUTIONS, [bundle / SENTINEL]).iter_rows(named=True)
        if wanted_as(wanted, row["step_run_id"], row["execution_spec_id"])
    ]
    edges_file = bundle / EXECUTION_EDGES.staged_name
    by_run: dict[str, dict[str, dict[str, tuple[str, ...]]]] = {}
    if edges_file.is_file():
        edges = (
            read_staged_files(EXECUTION_EDGES, [edges_file])
            .sort("position", maintain_order=True)
            .group_by("execution_run_id", "direction", "role", maintain_order=True)
            .agg("artifact_id")
        )
        for run, direction, role, ids in edges.iter_rows():
            by_run.setdefault(run, {}).setdefault(direction, {})[role] = tuple(ids)
    return [execution_from_row(row, by_run.get(row["execution_run_id"], {})) for row in rows]
