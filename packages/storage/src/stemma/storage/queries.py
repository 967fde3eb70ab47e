"""Read-only queries over a store's tables, as polars DataFrames, for people and dashboards.

Every function takes the store root and returns an empty frame of the right columns when a table
does not exist yet.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import polars as pl

from stemma.core.layout import RootLayout
from stemma.storage.schemas import (
    ARTIFACT_EDGES,
    ARTIFACT_INDEX,
    EXECUTIONS,
    FILE_REFS,
    METRICS,
    STEPS,
)
from stemma.storage.tables import read_table

StoreRoot = str | os.PathLike[str] | RootLayout
"""A store root: a path, or the :class:`~stemma.core.layout.RootLayout` of one."""


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
    return read_table(_layout(root), STEPS, predicate).sort("timestamp")


def executions(
    root: StoreRoot,
    *,
    step_name: str | None = None,
    step_run_id: str | None = None,
    success: bool | None = None,
) -> pl.DataFrame:
    """Execution rows, oldest first, optionally narrowed by step name, attempt or success."""
    predicate = _all_of(step_name=step_name, step_run_id=step_run_id, success=success)
    return read_table(_layout(root), EXECUTIONS, predicate).sort("started_at")


def artifacts(
    root: StoreRoot,
    *,
    artifact_type: str | None = None,
    step_name: str | None = None,
) -> pl.DataFrame:
    """The artifact index with each type's own columns joined in.

    Metrics add ``content``; file refs add ``path``, ``content_hash``, ``size`` and
    ``file_count`` (null for artifacts of other types).

    Args:
        root: the store root.
        artifact_type: only artifacts of this type (``file_ref``, ``metric``…).
        step_name: only artifacts made by steps with this name.
    """
    layout = _layout(root)
    predicate = _all_of(artifact_type=artifact_type, origin_step_name=step_name)
    index = read_table(layout, ARTIFACT_INDEX, predicate)
    ids = pl.col("artifact_id").is_in(index.get_column("artifact_id").to_list())
    metrics = read_table(layout, METRICS, ids, columns=["artifact_id", "content"])
    files = read_table(
        layout,
        FILE_REFS,
        ids,
        columns=["artifact_id", "path", "content_hash", "size", "file_count"],
    )
    return (
        index.join(metrics, on="artifact_id", how="left")
        .join(files, on="artifact_id", how="left")
        .sort("created_at")
    )


def lineage(
    root: StoreRoot,
    artifact_id: str,
    direction: Literal["up", "down"] = "up",
    *,
    max_depth: int | None = None,
) -> pl.DataFrame:
    """The artifact edges reachable from one artifact, walked transitively, with their depth.

    Args:
        root: the store root.
        artifact_id: where to start.
        direction: ``"up"`` walks to what the artifact was made from, ``"down"`` to what was
            made from it.
        max_depth: stop after this many hops; unbounded when omitted.

    Returns:
        The ``provenance/artifact_edges`` columns plus ``depth`` (1 for edges touching
        ``artifact_id``), each edge once, at the depth it was first reached.
    """
    edges = read_table(_layout(root), ARTIFACT_EDGES)
    near, far = (
        ("target_artifact_id", "source_artifact_id")
        if direction == "up"
        else ("source_artifact_id", "target_artifact_id")
    )
    found: list[pl.DataFrame] = []
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
    if not found:
        return edges.with_columns(pl.lit(0, dtype=pl.Int64).alias("depth")).clear()
    return pl.concat(found).unique(
        subset=["execution_run_id", "source_artifact_id", "target_artifact_id"],
        keep="first",
        maintain_order=True,
    )


def _layout(root: StoreRoot) -> RootLayout:
    return root if isinstance(root, RootLayout) else RootLayout(Path(root).absolute())


def _all_of(**equal: str | bool | None) -> pl.Expr | None:
    conditions = [pl.col(column) == value for column, value in equal.items() if value is not None]
    if not conditions:
        return None
    return pl.all_horizontal(conditions)
