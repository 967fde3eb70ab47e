"""Finding what a dead worker staged: the complete bundles of a step holding a pack's units.

A worker stages its pack as one bundle named after an attempt id it draws itself, and reports
the bundle's path when it returns. A worker killed between the two (its sentinel written, its
result not sent) leaves a complete bundle the orchestrator does not know of. Rather than record
the pack's units as crashed (and have the next start's recovery commit the bundle as well: two
execution rows per unit), the orchestrator asks for the bundles holding its units here: each
complete bundle of the step's staging directory is read (checked against its sentinel, as a
commit would) for the units it holds.
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
from stemma.core.store.sqlite.staging import staged_bundles, step_dir_name
from stemma.core.store.staging.pack_reading import StagedUnitKey, keep_best_staged, wanted_as

UnitKey = StagedUnitKey
"""``(step_run_id, execution_spec_id)``: a unit of one step run."""


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
    step_dir = step_dir_name(step_number, step_name)
    for bundle in staged_bundles(layout, step_name):
        if bundle.parents[2].name != step_dir:
            continue
        try:
            records = _records(bundle, wanted)
        except (OSError, ValueError):
            continue  # no sentinel yet, or committed and retired while we looked
        keep_best_staged(found, bundle, records, wanted)
    return found


def _records(bundle: Path, wanted: set[UnitKey]) -> list[ExecutionRecord]:
    """The bundle's records of ``wanted`` units (none from a damaged bundle)."""
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
