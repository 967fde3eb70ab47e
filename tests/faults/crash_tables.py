"""What a root's Delta tables must look like after a crash and a rerun: a clean run's tables.

Run ids (``execution_run_id``, ``step_run_id``, ``pipeline_run_id``) and times differ from run
to run by design, so tables are compared on what a run's work is: artifact ids, lineage by
artifact id and role, and one execution row per execution key. :func:`differences` names every
way a root falls short of the clean one, as short sentences a failing test prints.
"""

from __future__ import annotations

import json
import pathlib
from collections import Counter
from dataclasses import dataclass

import polars as pl
from deltalake import DeltaTable

INDEX = "artifacts/index"
EXECUTIONS = "orchestration/executions"
STEPS = "orchestration/steps"
STEP_OUTPUTS = "orchestration/step_outputs"
ARTIFACT_EDGES = "provenance/artifact_edges"
EXECUTION_EDGES = "provenance/execution_edges"


def delta_tables(root: pathlib.Path) -> dict[str, pl.DataFrame]:
    """Every Delta table under ``root``, by its path under ``delta/``, read with deltalake."""
    found: dict[str, pl.DataFrame] = {}
    for log in sorted((root / "delta").glob("*/*/_delta_log")):
        name = log.parent.relative_to(root / "delta").as_posix()
        found[name] = pl.DataFrame(DeltaTable(str(log.parent)).to_pyarrow_table())
    return found


def row_set(frame: pl.DataFrame) -> set[str]:
    """Each row of a table as a canonical JSON line."""
    return {json.dumps(row, sort_keys=True, default=str) for row in frame.iter_rows(named=True)}


@dataclass(frozen=True)
class Summary:
    """A root's tables reduced to what every run of the same pipeline must agree on."""

    content: dict[str, frozenset[str]]
    """Per content table (``artifacts/…`` but the index), its artifact ids."""
    index: frozenset[str]
    executions: Counter[tuple[str, bool]]
    """How many execution rows each (execution key, success) has."""
    lineage: Counter[tuple[str, str, str | None, str | None]]
    """Artifact edges as (source, target, source role, target role), counted."""
    unit_io: Counter[tuple[str, str, str]]
    """Execution edges as (direction, role, artifact id), counted."""


def summarize(tables: dict[str, pl.DataFrame]) -> Summary:
    """The run-independent content of a root's tables."""

    def frame(name: str) -> pl.DataFrame:
        return tables.get(name, pl.DataFrame())

    def column(name: str, field: str) -> list[str]:
        found = frame(name)
        return [] if found.is_empty() else [str(v) for v in found.get_column(field).to_list()]

    content = {
        name: frozenset(column(name, "artifact_id"))
        for name in tables
        if name.startswith("artifacts/") and name != INDEX
    }
    executions = frame(EXECUTIONS)
    edges = frame(ARTIFACT_EDGES)
    unit_io = frame(EXECUTION_EDGES)
    return Summary(
        content=content,
        index=frozenset(column(INDEX, "artifact_id")),
        executions=Counter(
            executions.select("execution_spec_id", "success").iter_rows()
            if not executions.is_empty()
            else []
        ),
        lineage=Counter(
            edges.select(
                "source_artifact_id", "target_artifact_id", "source_role", "target_role"
            ).iter_rows()
            if not edges.is_empty()
            else []
        ),
        unit_io=Counter(
            unit_io.select("direction", "role", "artifact_id").iter_rows()
            if not unit_io.is_empty()
            else []
        ),
    )


def differences(tables: dict[str, pl.DataFrame], clean: dict[str, pl.DataFrame]) -> list[str]:
    """Every way ``tables`` differ from a clean run's, plus duplicates and orphan rows."""
    found: list[str] = []
    ours, theirs = summarize(tables), summarize(clean)
    if ours.index != theirs.index:
        found.append(
            f"artifact ids differ: {len(ours.index - theirs.index)} extra, "
            f"{len(theirs.index - ours.index)} missing"
        )
    for name in sorted(set(ours.content) | set(theirs.content)):
        if ours.content.get(name) != theirs.content.get(name):
            found.append(f"{name} holds other artifact ids than a clean run's")
    if ours.executions != theirs.executions:
        extra = ours.executions - theirs.executions
        missing = theirs.executions - ours.executions
        found.append(f"execution rows differ: extra {dict(extra)}, missing {dict(missing)}")
    if ours.lineage != theirs.lineage:
        found.append("artifact edges differ from a clean run's (or repeat)")
    if ours.unit_io != theirs.unit_io:
        found.append("execution edges differ from a clean run's (or repeat)")
    found.extend(duplicates(tables))
    found.extend(orphans(tables))
    return found


_KEYS = {
    INDEX: ["artifact_id"],
    EXECUTIONS: ["execution_run_id"],
    STEPS: ["step_run_id", "status"],
}


def duplicates(tables: dict[str, pl.DataFrame]) -> list[str]:
    """A sentence per table holding a key (or, without one, a whole row) more than once."""
    found: list[str] = []
    for name, frame in tables.items():
        key = ["artifact_id"] if name.startswith("artifacts/") else _KEYS.get(name, frame.columns)
        repeated = frame.height - frame.select(key).unique().height
        if repeated:
            found.append(f"{name} repeats {repeated} row(s) by {key}")
    return found


def orphans(tables: dict[str, pl.DataFrame]) -> list[str]:
    """A sentence per kind of row that names an artifact or execution the tables lack."""
    empty = pl.DataFrame()
    index = (
        set(tables.get(INDEX, empty).get_column("artifact_id").to_list())
        if INDEX in tables
        else set[str]()
    )
    content = {
        str(i)
        for name, frame in tables.items()
        if name.startswith("artifacts/") and name != INDEX
        for i in frame.get_column("artifact_id").to_list()
    }
    runs = (
        set(tables[EXECUTIONS].get_column("execution_run_id").to_list())
        if EXECUTIONS in tables
        else set[str]()
    )
    found: list[str] = []
    checks = [
        ("index rows without content", index - content),
        ("content rows without an index row", content - index),
    ]
    for name, columns in (
        (ARTIFACT_EDGES, ("source_artifact_id", "target_artifact_id")),
        (EXECUTION_EDGES, ("artifact_id",)),
        (STEP_OUTPUTS, ("artifact_id",)),
    ):
        frame = tables.get(name)
        if frame is None:
            continue
        named = {str(v) for c in columns for v in frame.get_column(c).drop_nulls().to_list()}
        checks.append((f"{name} naming artifacts not indexed", named - index))
        if "execution_run_id" in frame.columns:
            ran = set(frame.get_column("execution_run_id").to_list())
            checks.append((f"{name} naming executions not recorded", ran - runs))
    found.extend(f"{what}: {sorted(ids)[:3]}" for what, ids in checks if ids)
    return found
