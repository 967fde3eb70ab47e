"""The Pipeline's lookups: batched, one filtered scan per table, free when a table is missing.

Each function answers for many keys at once (a whole step's execution keys, a whole frontier of
lineage), pushing an ``is_in`` predicate into the Delta scan so files whose statistics rule it
out are skipped. A table not created yet costs one ``stat`` and answers empty; a damaged one
raises :class:`~stemma.storage.errors.DamagedTableError`, naming it and ``stemma check``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Mapping

import polars as pl

from stemma.core.execution_records import ExecutionRecord, StepEvent
from stemma.core.operations.drafts import FinalizedArtifact
from stemma.core.records import StepStatus
from stemma.core.store import lineage_walk
from stemma.core.store.locations import RootLayout
from stemma.storage.artifact_tables import artifact_from_row, table_for_type
from stemma.storage.content_files import (
    LARGE_CONTENT_BYTES,
    may_keep_apart,
    missing_content,
    read_kept,
)
from stemma.storage.data_files import check_data_files
from stemma.storage.execution_rows import event_from_row, execution_from_row
from stemma.storage.schemas import (
    ARTIFACT_EDGES,
    ARTIFACT_INDEX,
    EXECUTION_EDGES,
    EXECUTIONS,
    STEP_OUTPUTS,
    STEPS,
    TableSpec,
)
from stemma.storage.table_damage import read_table_checked as read_table
from stemma.storage.table_damage import reading
from stemma.storage.table_handles import table_handle
from stemma.storage.table_places import table_place
from stemma.storage.tables import scan_files


def latest_step(
    layout: RootLayout, step_spec_id: str, statuses: Collection[StepStatus]
) -> StepEvent | None:
    """The newest event of fingerprint ``step_spec_id`` whose status is one of ``statuses``."""
    if not statuses:
        return None
    wanted = [StepStatus(status).value for status in statuses]
    predicate = (pl.col("step_spec_id") == step_spec_id) & pl.col("status").is_in(wanted)
    rows = read_table(layout, STEPS, predicate)
    if rows.is_empty():
        return None
    return event_from_row(rows.sort("timestamp", maintain_order=True).row(-1, named=True))


def completed_steps(layout: RootLayout) -> dict[str, StepEvent]:
    """The newest ``completed`` event of every step fingerprint, in one scan."""
    rows = read_table(layout, STEPS, pl.col("status") == StepStatus.COMPLETED.value)
    latest = rows.sort("timestamp").unique("step_spec_id", keep="last")
    return {row["step_spec_id"]: event_from_row(row) for row in latest.iter_rows(named=True)}


def step_events(layout: RootLayout, pipeline_run_id: str | None = None) -> list[StepEvent]:
    """Every step event of one run (all runs when omitted), oldest first."""
    predicate = None if pipeline_run_id is None else pl.col("pipeline_run_id") == pipeline_run_id
    rows = read_table(layout, STEPS, predicate)
    return [event_from_row(row) for row in rows.sort("timestamp").iter_rows(named=True)]


def step_outputs(
    layout: RootLayout, step_run_ids: Collection[str]
) -> dict[str, dict[str, tuple[str, ...]]]:
    """Per step run that recorded outputs, per role, its sorted artifact ids (maybe none)."""
    if not step_run_ids:
        return {}
    rows = read_table(layout, STEP_OUTPUTS, pl.col("step_run_id").is_in(list(step_run_ids)))
    grouped = rows.group_by("step_run_id", "role").agg(pl.col("artifact_id").drop_nulls())
    found: dict[str, dict[str, tuple[str, ...]]] = {}
    for run, role, ids in grouped.iter_rows():
        found.setdefault(run, {})[role] = tuple(sorted(set(ids)))
    return found


def executions_by_key(layout: RootLayout, keys: Collection[str]) -> dict[str, ExecutionRecord]:
    """The newest successful execution of each key that has one, with its input/output ids."""
    if not keys:
        return {}
    predicate = pl.col("success") & pl.col("execution_spec_id").is_in(list(keys))
    rows = read_table(layout, EXECUTIONS, predicate)
    if rows.is_empty():
        return {}
    latest = rows.sort("ended_at", nulls_last=False).unique(
        "execution_spec_id", keep="last", maintain_order=True
    )
    run_ids = latest.get_column("execution_run_id").to_list()
    edges = (
        read_table(layout, EXECUTION_EDGES, pl.col("execution_run_id").is_in(run_ids))
        .unique(["execution_run_id", "direction", "role", "artifact_id"], maintain_order=True)
        .sort("position", maintain_order=True)
        .group_by("execution_run_id", "direction", "role", maintain_order=True)
        .agg("artifact_id")
    )
    by_run: dict[str, dict[str, dict[str, tuple[str, ...]]]] = {}
    for run, direction, role, ids in edges.iter_rows():
        by_run.setdefault(run, {}).setdefault(direction, {})[role] = tuple(ids)
    return {
        row["execution_spec_id"]: execution_from_row(row, by_run.get(row["execution_run_id"], {}))
        for row in latest.iter_rows(named=True)
    }


def load_artifacts(
    layout: RootLayout, artifact_ids: Collection[str], *, content: bool = True
) -> dict[str, FinalizedArtifact]:
    """The artifacts found among ``artifact_ids``, one scan per type's table.

    With ``content=False`` the content column is projected away (Parquet never reads it): the
    artifacts come with ``content=None`` and their recorded size. Rows written without a size
    (older function steps) are read again with their content, for its length.

    Raises:
        ArtifactTypeError: an artifact's user type is not registered in this process.
    """
    if not artifact_ids:
        return {}
    wanted = list(artifact_ids)
    index = _read_ids(layout, ARTIFACT_INDEX, wanted, ["artifact_id", "artifact_type"])
    index = index.unique("artifact_id")
    found: dict[str, FinalizedArtifact] = {}
    for (artifact_type,), group in index.group_by("artifact_type"):
        kind = str(artifact_type)
        spec = table_for_type(kind)
        ids = group.get_column("artifact_id").to_list()
        found.update(_read_type(layout, spec, kind, ids, content=content))
    return found


def _read_type(
    layout: RootLayout, spec: TableSpec, kind: str, ids: list[str], *, content: bool
) -> dict[str, FinalizedArtifact]:
    columns = [c for c in spec.columns if c != "content"]
    predicate = pl.col("artifact_id").is_in(ids)
    # (content is read by polars' own Parquet reader: large values, no Python file layer)
    rows = _once(
        read_table(layout, spec, predicate) if content else _read_ids(layout, spec, ids, columns)
    )
    if not content and "content" in spec.columns:
        unsized = rows.filter(pl.col("size").is_null())
        if not unsized.is_empty():  # the length of a content not recorded: read it, then drop it
            again = unsized.get_column("artifact_id").to_list()
            sized = _read_type(layout, spec, kind, again, content=True)
            rows = rows.filter(pl.col("size").is_not_null())
            return {
                **_artifacts(spec, kind, rows),
                **{i: dataclasses.replace(a, content=None) for i, a in sized.items()},
            }
    found = _artifacts(spec, kind, rows)
    return _with_kept_contents(layout, spec, found) if content else found


def contents_of(
    layout: RootLayout, rows: Mapping[str, FinalizedArtifact]
) -> dict[str, FinalizedArtifact]:
    """``rows`` (read without content) with their contents: one scan per type's table.

    Only each table's ``artifact_id`` and ``content`` columns are read, and the index not at
    all: the rows already say each artifact's type. :func:`load_artifacts` with content read
    the index and every column again, and made each artifact twice (the orchestrator's second
    read of a window's small inputs, issue 34). A content kept in a file is read from it; an
    artifact not found in its table is left out, as :func:`load_artifacts` leaves it.
    """
    by_type: dict[str, list[str]] = {}
    for artifact_id, row in rows.items():
        by_type.setdefault(row.artifact_type, []).append(artifact_id)
    found: dict[str, FinalizedArtifact] = {}
    for kind, ids in by_type.items():
        spec = table_for_type(kind)
        if "content" not in spec.columns:  # a file reference: its row is all there is
            found.update({i: rows[i] for i in ids})
            continue
        predicate = pl.col("artifact_id").is_in(ids)
        read = _once(read_table(layout, spec, predicate, columns=["artifact_id", "content"]))
        read_ids, read_contents = read.get_column("artifact_id"), read.get_column("content")
        with_content = {
            artifact_id: dataclasses.replace(
                rows[artifact_id], content=content.encode() if isinstance(content, str) else content
            )
            for artifact_id, content in zip(read_ids, read_contents, strict=True)
        }
        found.update(_with_kept_contents(layout, spec, with_content))
    return found


def _with_kept_contents(
    layout: RootLayout, spec: TableSpec, found: dict[str, FinalizedArtifact]
) -> dict[str, FinalizedArtifact]:
    """``found`` (read with content) with each content kept in a file read from it.

    Such a row has no content in its table and the size of a large one
    (:mod:`stemma.storage.content_files`); one of them with no file is damage, said as such.
    """
    if not may_keep_apart(spec):
        return found
    kept = [i for i, a in found.items() if a.content is None and a.size >= LARGE_CONTENT_BYTES]
    if not kept:
        return found
    contents = read_kept(layout, kept)
    for artifact_id in kept:
        if artifact_id not in contents:
            raise missing_content(layout, spec, artifact_id)
        found[artifact_id] = dataclasses.replace(found[artifact_id], content=contents[artifact_id])
    return found


def _once(rows: pl.DataFrame) -> pl.DataFrame:
    """``rows`` with one row per artifact (two files may hold the same artifact).

    Only deduplicated when they hold one twice: ``unique`` copies every column, a large
    content (a 100 MB data artifact) included, and took longer than reading it.
    """
    if rows.get_column("artifact_id").is_duplicated().any():
        return rows.unique("artifact_id")
    return rows


def _read_ids(
    layout: RootLayout, spec: TableSpec, ids: list[str], columns: list[str]
) -> pl.DataFrame:
    """The rows of ``spec`` whose ``artifact_id`` is one of ``ids``: small columns only.

    On a filesystem: each data file the kept handle's log lists looked at first
    (:func:`~stemma.storage.data_files.check_data_files`: a damaged one makes polars panic),
    then polars' own Parquet scan over those files, the filter and the columns pushed down
    (:func:`~stemma.storage.tables.scan_files`). polars' Delta scan spends ~7 ms setting up each
    call; a pyarrow dataset ~2 ms on one file but 36 ms on 40 (this: 12 ms), and a process that
    used one can abort as it exits ("terminate called without an active exception",
    pola-rs/polars#24169: pyarrow's threads destroyed at shutdown). In a bucket, where no file is
    looked at, delta-rs's pyarrow dataset is read, its damage translated by
    :func:`~stemma.storage.table_damage.reading`.
    """
    place = table_place(layout, spec.name)
    if not place.exists():
        return read_table(layout, spec, columns=columns)
    with reading(layout, spec), table_handle(place) as table:
        if place.local is not None:
            check_data_files(layout, spec.name, table)
            scan = scan_files(table)
        else:
            scan = pl.scan_pyarrow_dataset(table.to_pyarrow_dataset())  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
        return scan.filter(pl.col("artifact_id").is_in(ids)).select(columns).collect()


def _artifacts(spec: TableSpec, kind: str, rows: pl.DataFrame) -> dict[str, FinalizedArtifact]:
    return {
        row["artifact_id"]: artifact_from_row(spec, kind, row) for row in rows.iter_rows(named=True)
    }


def ancestry(layout: RootLayout, artifact_ids: Collection[str]) -> dict[str, frozenset[str]]:
    """Each artifact's ancestors, itself included: one edge scan per generation walked up."""
    return lineage_walk.ancestry(_hop(layout), artifact_ids)


def descendants(
    layout: RootLayout, artifact_ids: Collection[str], artifact_type: str | None = None
) -> dict[str, frozenset[str]]:
    """Each artifact's descendants (of ``artifact_type`` when given), itself excluded.

    One edge scan per generation walked down.
    """
    return lineage_walk.descendants(_hop(layout), artifact_ids, artifact_type)


def _hop(layout: RootLayout) -> lineage_walk.Hop:
    def hop(frontier: list[str], up: bool) -> Iterable[tuple[str, str, str | None]]:
        near, far = ("target", "source") if up else ("source", "target")
        edges = read_table(
            layout,
            ARTIFACT_EDGES,
            pl.col(f"{near}_artifact_id").is_in(frontier),
            columns=[f"{near}_artifact_id", f"{far}_artifact_id", f"{far}_artifact_type"],
        )
        return edges.iter_rows()

    return hop
