"""Finding what a dead worker staged, in the Delta store: its bundles' records of a pack's units.

The search is the staging protocol's (:func:`~stemma.core.store.staging.pack_reading.
find_staged_pack`). Each complete bundle of the step's staging directory is looked at here
through its sentinel's two key columns; only a bundle holding one of the units is read further
(its executions and their input/output edges, never the artifacts' content).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

import polars as pl

from stemma.core.execution_records import ExecutionRecord
from stemma.core.store.locations import RootLayout
from stemma.core.store.staging.pack_reading import StagedUnitKey, find_staged_pack, wanted_as
from stemma.storage.execution_rows import execution_from_row
from stemma.storage.schemas import EXECUTION_EDGES, EXECUTIONS
from stemma.storage.sentinel import SENTINEL
from stemma.storage.staging import is_complete, read_staged_files

UnitKey = StagedUnitKey
"""``(step_run_id, execution_spec_id)``: a unit of one step run."""
_KEYS = ["step_run_id", "execution_spec_id"]


def staged_pack(
    layout: RootLayout, step_number: int, step_name: str, units: Collection[UnitKey]
) -> dict[UnitKey, tuple[Path, ExecutionRecord]]:
    """Per unit found staged in the step's directories: its bundle and staged record.

    The step's directories are those of ``step_name`` numbered ``step_number``; see
    :func:`~stemma.core.store.staging.pack_reading.find_staged_pack`.
    """
    prefix = f"{step_number}_"
    return find_staged_pack(
        layout, step_name, units, in_step=lambda found: found.startswith(prefix), read=_records
    )


def _records(bundle: Path, wanted: Collection[UnitKey]) -> list[ExecutionRecord]:
    """The bundle's records of ``wanted`` units; nothing read past the keys when none is.

    Raises:
        OSError: committed and retired while it was read.
        ValueError: a file cannot be read.
    """
    if not is_complete(bundle):
        return []
    try:
        return _records_if_any(bundle, wanted)
    except pl.exceptions.PolarsError as err:
        raise ValueError(f"cannot read the staged records of {bundle}: {err}") from err


def _records_if_any(bundle: Path, wanted: Collection[UnitKey]) -> list[ExecutionRecord]:
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
