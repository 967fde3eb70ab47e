"""Finding what a dead worker staged, in the SQLite store: its bundles' records of a pack's units.

The search is the staging protocol's (:func:`~stemma.core.store.staging.pack_reading.
find_staged_pack`): each complete bundle of the step's staging directory is read here, checked
against its sentinel as a commit would, for the units it holds.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path
from typing import Any, cast

from stemma.core.execution_records import ExecutionRecord
from stemma.core.store.locations import RootLayout
from stemma.core.store.record_rows import execution_from_row
from stemma.core.store.sqlite.bundle_files import read_rows, read_sentinel
from stemma.core.store.sqlite.execution_rows import EXECUTION_ROLES, EXECUTIONS, SQLITE_ROWS
from stemma.core.store.sqlite.schema import EXECUTION_COLUMNS
from stemma.core.store.staging.pack_reading import StagedUnitKey, find_staged_pack, wanted_as
from stemma.core.store.staging.tree import step_dir_name

UnitKey = StagedUnitKey
"""``(step_run_id, execution_spec_id)``: a unit of one step run."""


def staged_pack(
    layout: RootLayout, step_number: int, step_name: str, units: Collection[UnitKey]
) -> dict[UnitKey, tuple[Path, ExecutionRecord]]:
    """Per unit found staged in the step's directory: its bundle and staged record.

    The step's directory is exactly ``{step_number}_{step_name}``; see
    :func:`~stemma.core.store.staging.pack_reading.find_staged_pack`.
    """
    step_dir = step_dir_name(step_number, step_name)
    return find_staged_pack(
        layout, step_name, units, in_step=lambda found: found == step_dir, read=_records
    )


def _records(bundle: Path, wanted: Collection[UnitKey]) -> list[ExecutionRecord]:
    """The bundle's records of ``wanted`` units (none from a damaged bundle).

    Raises:
        OSError: no sentinel yet, or committed and retired while it was read.
        ValueError: its sentinel is not one of this store's.
    """
    rows = read_rows(bundle, read_sentinel(bundle))
    if not isinstance(rows, dict):  # a damaged bundle: recovery quarantines it
        return []
    by_run: dict[str, dict[str, dict[str, tuple[str, ...]]]] = {}
    for run, direction, role, ids in rows[EXECUTION_ROLES]:
        decoded = cast(list[Any], json.loads(ids))
        by_run.setdefault(run, {}).setdefault(direction, {})[role] = tuple(map(str, decoded))
    records: list[ExecutionRecord] = []
    for values in rows[EXECUTIONS]:
        row = dict(zip(EXECUTION_COLUMNS, values, strict=True))
        if wanted_as(wanted, row["step_run_id"], row["execution_spec_id"]):
            edges = by_run.get(row["execution_run_id"], {})
            records.append(execution_from_row(row, edges, SQLITE_ROWS))
    return records
