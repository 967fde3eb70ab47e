"""Querying lineage with polars: run a small pipeline, then ask the tables where things came from.

Run it with ``uv run python examples/query_lineage.py``. Results go under ``.stemma/`` (or
``$STEMMA_ROOT``); the tutorial ``docs/tutorials/query-lineage.md`` walks through it.
"""

from __future__ import annotations

import json
import pathlib
from typing import cast

import polars as pl
from deltalake import DeltaTable

from stemma.core import Pipeline
from stemma.core.examples import DataGenerator, MetricCalculator, Transform
from stemma.core.store.locations import resolve_root
from stemma.storage import artifacts, executions, lineage, steps


def build() -> str:
    """Generate three datasets, scale them, score them; return the run id."""
    # --8<-- [start:pipeline]
    pipeline = Pipeline.create("lineage-demo", max_workers=2)
    generated = pipeline.run(DataGenerator, params={"count": 3, "rows": 5})
    scaled = pipeline.run(
        Transform, inputs={"dataset": generated.output("datasets")}, params={"scale": 10.0}
    )
    pipeline.run(MetricCalculator, inputs={"dataset": scaled.output("dataset")})
    pipeline.finalize()
    # --8<-- [end:pipeline]
    return pipeline.run_id


def read_delta(path: pathlib.Path) -> pl.DataFrame:
    """A Delta table as a DataFrame, read through deltalake.

    It also reads a root whose path has a space or non-ASCII characters, which
    ``pl.read_delta`` does not (it is handed escaped file URIs).
    """
    return cast(pl.DataFrame, pl.from_arrow(DeltaTable(str(path)).to_pyarrow_table()))


def main() -> None:
    """Build, then query the step log, the executions, the artifacts and their lineage."""
    run_id = build()
    # --8<-- [start:setup]
    root = resolve_root()  # $STEMMA_ROOT, else .stemma in the current directory
    pl.Config.set_tbl_width_chars(100)
    pl.Config.set_fmt_str_lengths(24)
    pl.Config.set_tbl_hide_dataframe_shape(True)
    pl.Config.set_tbl_hide_column_data_types(True)
    # --8<-- [end:setup]

    # --8<-- [start:steps]
    log = steps(root, run_id=run_id, status="completed")
    print(log.select("step_number", "step_name", "total_count", "failed_count", "metadata"))
    # --8<-- [end:steps]

    # --8<-- [start:executions]
    runs = executions(root, step_name="example.transform")
    print(runs.select("execution_run_id", "execution_spec_id", "success", "worker", "backend"))
    # --8<-- [end:executions]

    # --8<-- [start:artifacts]
    metrics = artifacts(root, artifact_type="metric", step_name="example.metrics")
    metrics = metrics.sort("artifact_id")  # (rows made at one time come in no fixed order)
    print(metrics.select("artifact_id", "origin_step", "content"))
    # --8<-- [end:artifacts]

    # --8<-- [start:up]
    chosen = metrics.row(0, named=True)
    print(json.loads(chosen["content"]))
    up = lineage(root, chosen["artifact_id"], direction="up")
    print(up.select("depth", "source_artifact_type", "source_role", "target_role"))
    # --8<-- [end:up]

    # --8<-- [start:names]
    tables = root / "delta" / "artifacts"
    index = pl.concat(  # every content table has artifact_id, original_name, origin_step_name
        read_delta(tables / name).select("artifact_id", "original_name", "origin_step_name")
        for name in ("data", "metrics")
    )
    named = up.join(index, left_on="source_artifact_id", right_on="artifact_id")
    print(named.select("depth", "origin_step_name", "original_name").sort("depth"))
    # --8<-- [end:names]

    # --8<-- [start:down]
    generated = index.filter(pl.col("origin_step_name") == "example.generate")
    first = generated.sort("original_name").row(0, named=True)
    down = lineage(root, first["artifact_id"], direction="down")
    made = down.join(index, left_on="target_artifact_id", right_on="artifact_id")
    print(first["original_name"], "->", sorted(made.get_column("original_name").to_list()))
    # --8<-- [end:down]

    # --8<-- [start:delta]
    table = read_delta(root / "delta" / "provenance" / "artifact_edges")
    counted = table.group_by("source_artifact_type", "target_artifact_type").len()
    print(counted.sort("len", "source_artifact_type", "target_artifact_type"))
    # --8<-- [end:delta]


if __name__ == "__main__":
    main()
