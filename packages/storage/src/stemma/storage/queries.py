"""Read-only queries over a store's tables, as polars DataFrames, for people and dashboards.

Every function takes the store root and returns an empty frame of the right columns when a table
does not exist yet. A root whose history stemma-core alone recorded (``core.sqlite``, not yet
imported into the Delta tables) is read from that database, converted as the import would
(:mod:`stemma.storage.sqlite_history`), so the answers are the same on either store. A damaged
table raises :class:`~stemma.storage.errors.DamagedTableError`, naming it and ``stemma check``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import polars as pl

from stemma.core.store.locations import RootLayout
from stemma.storage.artifact_names import artifact_facts
from stemma.storage.schemas import (
    ARTIFACT_EDGES,
    ARTIFACT_INDEX,
    EXECUTION_EDGES,
    EXECUTIONS,
    FILE_REFS,
    METRICS,
    STEP_OUTPUTS,
    STEPS,
    TableSpec,
)
from stemma.storage.sqlite_history import TableReader
from stemma.storage.sqlite_history import table_reader as any_reader
from stemma.storage.table_damage import reading

StoreRoot = str | os.PathLike[str] | RootLayout
"""A store root: a path, or the :class:`~stemma.core.store.locations.RootLayout` of one."""


def steps(
    root: StoreRoot,
    *,
    name: str | None = None,
    run_id: str | None = None,
    status: str | None = None,
) -> pl.DataFrame:
    """The steps event log, oldest first, optionally narrowed.

    Args:
        root: the store root.
        name: only events of steps with this name.
        run_id: only events of this pipeline run.
        status: only events with this status (``running``, ``completed``…).
    """
    predicate = _all_of(step_name=name, pipeline_run_id=run_id, status=status)
    return table_reader(_layout(root))(STEPS, predicate).sort("timestamp")


def executions(
    root: StoreRoot,
    *,
    step_name: str | None = None,
    step_run_id: str | None = None,
    success: bool | None = None,
) -> pl.DataFrame:
    """Execution rows, oldest first, optionally narrowed by step name, attempt or success."""
    predicate = _all_of(step_name=step_name, step_run_id=step_run_id, success=success)
    return table_reader(_layout(root))(EXECUTIONS, predicate).sort("started_at")


def artifacts(
    root: StoreRoot,
    *,
    artifact_type: str | None = None,
    step_name: str | None = None,
) -> pl.DataFrame:
    """The artifact index with each type's own columns joined in.

    Every built-in type adds ``original_name`` and ``size``; data adds ``row_count`` and
    ``data_columns``; metrics add ``content``; file refs add ``path``, ``content_hash`` and
    ``file_count`` (null for artifacts of other types).

    An artifact is its content, so the same bytes made by two steps are one artifact, and its
    index row names only the step that made them first (``origin_step_name``). ``step_name``
    therefore asks what the steps' own records say: an artifact is a step's when an execution of
    a step with that name output it, or one of its runs offered it downstream (an execution
    cache hit), whichever step made the bytes first.

    Args:
        root: the store root.
        artifact_type: only artifacts of this type (``file_ref``, ``metric``…).
        step_name: only artifacts that steps with this name output.
    """
    read = table_reader(_layout(root))
    predicate = _all_of(artifact_type=artifact_type)
    if step_name is not None:
        of_step = pl.col("artifact_id").is_in(sorted(_step_artifact_ids(read, step_name)))
        predicate = of_step if predicate is None else predicate & of_step
    index = read(ARTIFACT_INDEX, predicate)
    ids = pl.col("artifact_id").is_in(index.get_column("artifact_id").to_list())
    metrics = read(METRICS, ids, columns=["artifact_id", "content"])
    files = read(FILE_REFS, ids, columns=["artifact_id", "path", "content_hash", "file_count"])
    facts = artifact_facts(read, index.get_column("artifact_id").to_list())
    return (
        index.join(facts, on="artifact_id", how="left")
        .join(metrics, on="artifact_id", how="left")
        .join(files, on="artifact_id", how="left")
        .sort("created_at")
    )


def _step_artifact_ids(read: TableReader, step_name: str) -> set[str]:
    """Every artifact steps called ``step_name`` output, made first by them or not.

    The union of three records: the executions' output edges (what each unit wrote), the step
    runs' outputs (what each offered downstream, execution cache hits included), and the index's
    first maker.
    """
    runs = read(
        EXECUTIONS, pl.col("step_name") == step_name, columns=["execution_run_id"]
    ).get_column("execution_run_id")
    written = read(
        EXECUTION_EDGES,
        (pl.col("direction") == "output") & pl.col("execution_run_id").is_in(runs.to_list()),
        columns=["artifact_id"],
    )
    step_runs = read(STEPS, pl.col("step_name") == step_name, columns=["step_run_id"]).get_column(
        "step_run_id"
    )
    offered = read(
        STEP_OUTPUTS,
        pl.col("step_run_id").is_in(step_runs.unique().to_list()),
        columns=["artifact_id"],
    )
    first = read(ARTIFACT_INDEX, pl.col("origin_step_name") == step_name, columns=["artifact_id"])
    found = pl.concat([written, offered, first]).get_column("artifact_id").drop_nulls()
    return set(found.to_list())


def lineage(
    root: StoreRoot,
    artifact_id: str,
    direction: Literal["up", "down"] = "up",
    *,
    max_depth: int | None = None,
) -> pl.DataFrame:
    """The artifact edges reachable from one artifact, walked transitively, with their depth.

    Each edge says which execution of which step made its target from its source. The same bytes
    made by two steps are one artifact, so an edge from an artifact to itself (a step that output
    its input's very bytes) says who made it only through these columns.

    Args:
        root: the store root.
        artifact_id: where to start.
        direction: ``"up"`` walks to what the artifact was made from, ``"down"`` to what was
            made from it.
        max_depth: stop after this many hops; unbounded when omitted.

    Returns:
        The ``provenance/artifact_edges`` columns, ``depth`` (1 for edges touching
        ``artifact_id``), the ``step_name`` and ``step_run_id`` of the edge's execution
        (``execution_run_id``), and ``source_name`` and ``target_name``: each artifact's
        original name (null for a type without one); each edge once, at the depth it was first
        reached.
    """
    read = table_reader(_layout(root))
    edges = read(ARTIFACT_EDGES)
    near, far = (
        ("target_artifact_id", "source_artifact_id")
        if direction == "up"
        else ("source_artifact_id", "target_artifact_id")
    )
    found: list[pl.DataFrame] = [
        edges.with_columns(pl.lit(0, dtype=pl.Int64).alias("depth")).clear()
    ]
    seen: set[str] = {artifact_id}
    frontier = [artifact_id]
    depth = 0
    while frontier and (max_depth is None or depth < max_depth):
        depth += 1
        hop = edges.filter(pl.col(near).is_in(frontier))
        found.append(hop.with_columns(pl.lit(depth, dtype=pl.Int64).alias("depth")))
        reached = set(hop.get_column(far).to_list())
        frontier = sorted(reached - seen)
        seen |= reached
    walked = pl.concat(found).unique(
        subset=["execution_run_id", "source_artifact_id", "target_artifact_id"],
        keep="first",
        maintain_order=True,
    )
    return _with_names(read, _with_steps(read, walked))


def _with_steps(read: TableReader, edges: pl.DataFrame) -> pl.DataFrame:
    """``edges`` with the step name and step run of each edge's execution (null if unknown)."""
    runs = edges.get_column("execution_run_id").unique().to_list()
    made_by = read(
        EXECUTIONS,
        pl.col("execution_run_id").is_in(runs),
        columns=["execution_run_id", "step_name", "step_run_id"],
    ).unique("execution_run_id")
    return edges.join(made_by, on="execution_run_id", how="left", maintain_order="left")


def _with_names(read: TableReader, edges: pl.DataFrame) -> pl.DataFrame:
    """``edges`` with the original name of each edge's source and target artifact."""
    ends = pl.concat(
        [edges.get_column("source_artifact_id"), edges.get_column("target_artifact_id")]
    )
    names = artifact_facts(read, ends.unique().to_list()).select("artifact_id", "original_name")
    for end in ("source", "target"):
        named = names.rename({"artifact_id": f"{end}_artifact_id", "original_name": f"{end}_name"})
        edges = edges.join(named, on=f"{end}_artifact_id", how="left", maintain_order="left")
    return edges


def table_reader(layout: RootLayout) -> TableReader:
    """The root's table reader (Delta or ``core.sqlite``), a damaged table said as one error."""
    read = any_reader(layout)

    def checked(
        spec: TableSpec, predicate: pl.Expr | None = None, columns: Sequence[str] | None = None
    ) -> pl.DataFrame:
        with reading(layout, spec):
            return read(spec, predicate, columns)

    return checked


def _layout(root: StoreRoot) -> RootLayout:
    return root if isinstance(root, RootLayout) else RootLayout(Path(root).absolute())


def _all_of(**equal: str | bool | None) -> pl.Expr | None:
    conditions = [pl.col(column) == value for column, value in equal.items() if value is not None]
    if not conditions:
        return None
    return pl.all_horizontal(conditions)
