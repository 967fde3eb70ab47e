"""Read-only queries over a store's tables, as polars DataFrames, for people and dashboards.

Every function takes the store root and returns an empty frame of the right columns when a table
does not exist yet. A root whose history stemma-core alone recorded (``core.sqlite``, not yet
imported into the Delta tables) is read from that database, converted as the import would
(:mod:`stemma.storage.sqlite_history`), so the answers are the same on either store. A damaged
table raises :class:`~stemma.storage.errors.DamagedTableError`, naming it and ``stemma check``.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from typing import Literal

import polars as pl

from stemma.core.store.locations import RootLayout, resolve_root
from stemma.storage.artifact_names import artifact_facts, declared_types, shown_names, type_of
from stemma.storage.input_file_lineage import (
    PathsNotRecordedWarning,
    file_edges_down,
    file_edges_up,
    is_input_file,
    steps_without_paths,
)
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
    ``file_count`` (null for artifacts of other types). ``type`` is the type a lazy step gave
    its output (``apply(..., type="json")``, kept in the artifact's ``metadata``), else null.

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
        index.with_columns(type_of(pl.col("metadata")))
        .join(facts, on="artifact_id", how="left")
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
    artifact_id: str | os.PathLike[str],
    direction: Literal["up", "down"] = "up",
    *,
    max_depth: int | None = None,
) -> pl.DataFrame:
    """The artifact edges reachable from one artifact (or raw file), walked transitively.

    Each edge says which execution of which step made its target from its source. The same bytes
    made by two steps are one artifact, so an edge from an artifact to itself (a step that output
    its input's very bytes) says who made it only through these columns.

    Walking up, the files a lazy step's key read (its ``Path`` arguments) end the walk: one row
    each, from the file to what the step made, with ``source_artifact_type`` ``"input_file"``,
    ``source_artifact_id`` the file's content hash (what the key holds: a file is not an
    artifact), ``source_role`` the argument it was given as (``source``, ``files[0]``) and
    ``source_name`` its path (null for a run recorded before paths were).

    Walking down from a raw file (``lineage(root, Path("/data/x.csv"), "down")``) answers what
    was made from it: at depth 1 those rows, from the file to what each step whose key read it
    made, found by the path the step's events record (absolute, as the step was given it); then
    the edges down from those. A run recorded before paths were cannot say it read the file: when
    nothing is found and the root has such runs, a :class:`PathsNotRecordedWarning` says how
    many steps could not answer (the result is still empty).

    Args:
        root: the store root.
        artifact_id: where to start: an artifact id, or a raw input file (a ``Path``, or a str
            that is not hex digits: ``/data/x.csv``; relative to the current directory).
        direction: ``"up"`` walks to what the artifact was made from, ``"down"`` to what was
            made from it.
        max_depth: stop after this many hops; unbounded when omitted.

    Returns:
        The ``provenance/artifact_edges`` columns, ``depth`` (1 for edges touching
        ``artifact_id``), the ``step_name`` and ``step_run_id`` of the edge's execution
        (``execution_run_id``), and ``source_name`` and ``target_name``: each artifact's
        original name (null for a type without one), a lazy step's output named by its step
        (``tutorial/numbers``, not ``v1-81d1ec83a63f698c``); ``source_type`` and
        ``target_type``: the type a lazy step gave its output (``apply(..., type="json")``),
        null for any other artifact; each edge once, at the depth it was first reached.

    Raises:
        ValueError: a raw file walked up (a file is where lineage starts: walk down from it).
    """
    read = table_reader(_layout(root))
    edges = read(ARTIFACT_EDGES)
    empty = edges.with_columns(pl.lit(0, dtype=pl.Int64).alias("depth")).clear()
    if is_input_file(artifact_id):
        found, depths = _from_file(read, os.path.abspath(artifact_id), direction, empty)
    else:
        found, depths = [empty], {str(artifact_id): 0}
    found.extend(_walk(edges, depths, direction, max_depth))
    if direction == "up":
        ends = {a: d + 1 for a, d in depths.items() if max_depth is None or d < max_depth}
        found.append(file_edges_up(read, ends, empty))
    walked = pl.concat(found, how="diagonal").unique(
        subset=["execution_run_id", "source_artifact_id", "target_artifact_id"],
        keep="first",
        maintain_order=True,
    )
    named = _with_types(read, _with_names(read, _with_steps(read, walked)))
    if "input_path" not in named.columns:
        return named
    path_or_name = pl.coalesce("input_path", "source_name").alias("source_name")
    return named.with_columns(path_or_name).drop("input_path")


def _from_file(
    read: TableReader, path: str, direction: str, empty: pl.DataFrame
) -> tuple[list[pl.DataFrame], dict[str, int]]:
    """The rows from a raw file to what was made from it, and where the walk down goes on."""
    if direction != "down":
        raise ValueError(
            f"{path} is a raw input file: nothing stemma recorded made it, so lineage starts "
            "there; walk down from it: lineage(root, path, 'down') (stemma lineage PATH)"
        )
    first = file_edges_down(read, path, empty)
    if first.is_empty():
        unknown = steps_without_paths(read)
        if unknown:
            warnings.warn(
                PathsNotRecordedWarning(
                    f"nothing recorded is made from {path}, but {unknown} step attempt(s) of "
                    "this root read input files and were recorded before stemma recorded their "
                    "paths: they know their files by content alone, so they cannot say whether "
                    "they read this one. Run those steps again to record it (nothing is rebuilt), "
                    "or look up from their outputs: lineage(root, artifact_id)"
                ),
                stacklevel=3,
            )
    targets = first.get_column("target_artifact_id").unique().to_list()
    return [first], dict.fromkeys((str(t) for t in targets), 1)


def _walk(
    edges: pl.DataFrame, depths: dict[str, int], direction: str, max_depth: int | None
) -> list[pl.DataFrame]:
    """The edges reachable from ``depths``' artifacts, hop by hop; ``depths`` is filled in."""
    near, far = (
        ("target_artifact_id", "source_artifact_id")
        if direction == "up"
        else ("source_artifact_id", "target_artifact_id")
    )
    found: list[pl.DataFrame] = []
    seen = set(depths)
    depth = max(depths.values(), default=0)
    frontier = sorted(depths)
    while frontier and (max_depth is None or depth < max_depth):
        depth += 1
        hop = edges.filter(pl.col(near).is_in(frontier))
        found.append(hop.with_columns(pl.lit(depth, dtype=pl.Int64).alias("depth")))
        reached = set(hop.get_column(far).to_list())
        frontier = sorted(reached - seen)
        depths.update(dict.fromkeys(frontier, depth))
        seen |= reached
    return found


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
    """``edges`` with the name of each edge's source and target artifact (see shown_names)."""
    ends = pl.concat(
        [edges.get_column("source_artifact_id"), edges.get_column("target_artifact_id")]
    )
    shown = shown_names(read, ends.unique().to_list())
    names = pl.DataFrame(
        {"artifact_id": list(shown), "name": list(shown.values())},
        schema={"artifact_id": pl.String, "name": pl.String},
    )
    for end in ("source", "target"):
        named = names.rename({"artifact_id": f"{end}_artifact_id", "name": f"{end}_name"})
        edges = edges.join(named, on=f"{end}_artifact_id", how="left", maintain_order="left")
    return edges


def _with_types(read: TableReader, edges: pl.DataFrame) -> pl.DataFrame:
    """``edges`` with the type a lazy step gave each edge's source and target (else null)."""
    ends = pl.concat(
        [edges.get_column("source_artifact_id"), edges.get_column("target_artifact_id")]
    )
    types = declared_types(read, ends.unique().to_list())
    for end in ("source", "target"):
        typed = types.rename({"artifact_id": f"{end}_artifact_id", "type": f"{end}_type"})
        edges = edges.join(typed, on=f"{end}_artifact_id", how="left", maintain_order="left")
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
    return root if isinstance(root, RootLayout) else RootLayout(resolve_root(root))


def _all_of(**equal: str | bool | None) -> pl.Expr | None:
    conditions = [pl.col(column) == value for column, value in equal.items() if value is not None]
    if not conditions:
        return None
    return pl.all_horizontal(conditions)
