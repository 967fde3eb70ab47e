"""What people call an artifact: its original file name, size and shape, beside its id.

Ids tell artifacts apart but say nothing to a reader; every built-in content table keeps the
name the artifact had when it was made (``data_3.csv``, ``metrics.json``) and its size, and data
artifacts their row count and columns. ``stemma artifacts``, ``stemma lineage`` and the
dashboard's artifact screen show these through :func:`artifact_facts`.
"""

from __future__ import annotations

import polars as pl

from stemma.storage.schemas import ARTIFACT_INDEX, CONFIGS, DATA, FILE_REFS, METRICS, TableSpec
from stemma.storage.sqlite_history import TableReader

FACT_COLUMNS = ("artifact_id", "original_name", "size", "row_count", "data_columns")
_NAMED = (DATA, METRICS, CONFIGS, FILE_REFS)
"""The built-in content tables; a user-registered type's table is not read (its artifacts
show without a name)."""
_SCHEMA = {
    "artifact_id": pl.String,
    "original_name": pl.String,
    "size": pl.Int64,
    "row_count": pl.Int64,
    "data_columns": pl.List(pl.String),
}


def artifact_facts(read: TableReader, artifact_ids: list[str]) -> pl.DataFrame:
    """One row per artifact of ``artifact_ids`` found in a built-in content table.

    Columns: :data:`FACT_COLUMNS`; ``row_count`` and ``data_columns`` only for data artifacts
    (null for the others).
    """
    wanted = pl.col("artifact_id").is_in(sorted(set(artifact_ids)))
    frames = [_facts(read, table, wanted) for table in _NAMED]
    return pl.concat(frames, how="vertical").unique("artifact_id", keep="first")


def shown_names(read: TableReader, artifact_ids: list[str]) -> dict[str, str]:
    """What to call each artifact of ``artifact_ids`` (those with a name): for lineage, outputs.

    Its original name (``data_3.csv``), except a lazy step's output: a file ref at
    ``outputs/{step name}/{version}-{key}``, whose original name is only that last part
    (``v1-81d1ec83a63f698c``, or none on a root recorded before names were), is called by the
    step that made it (``tutorial/numbers``).
    """
    facts = artifact_facts(read, artifact_ids)
    names = {
        str(row["artifact_id"]): str(row["original_name"])
        for row in facts.iter_rows(named=True)
        if row["original_name"]
    }
    wanted = pl.col("artifact_id").is_in(sorted(set(artifact_ids)))
    files = read(FILE_REFS, wanted, columns=["artifact_id", "path"])
    if files.is_empty():
        return names
    made = pl.col("artifact_id").is_in(files.get_column("artifact_id").to_list())
    origins = read(ARTIFACT_INDEX, made, columns=["artifact_id", "origin_step_name"])
    for row in files.join(origins, on="artifact_id", how="inner").iter_rows(named=True):
        step, path = row["origin_step_name"], row["path"]
        if step and isinstance(path, str) and path.rpartition("/")[0] == f"outputs/{step}":
            names[str(row["artifact_id"])] = str(step)
    return names


def declared_types(read: TableReader, artifact_ids: list[str]) -> pl.DataFrame:
    """``artifact_id`` and ``type``: the type a lazy step gave its output (``apply(..., type=)``).

    Read from the artifact's metadata (``{"type": "json"}``); null for an artifact without one.
    """
    wanted = pl.col("artifact_id").is_in(sorted(set(artifact_ids)))
    index = read(ARTIFACT_INDEX, wanted, columns=["artifact_id", "metadata"])
    return index.select(
        pl.col("artifact_id").cast(pl.String),
        type_of(pl.col("metadata")),
    ).unique("artifact_id", keep="first")


def type_of(metadata: pl.Expr) -> pl.Expr:
    """The ``type`` an artifact's metadata (a JSON text) names, as a column called ``type``."""
    return metadata.cast(pl.String).str.json_path_match("$.type").alias("type")


def _facts(read: TableReader, table: TableSpec, wanted: pl.Expr) -> pl.DataFrame:
    shaped = table is DATA
    columns = [
        "artifact_id",
        "original_name",
        "size",
        *(["row_count", "columns"] if shaped else []),
    ]
    frame = read(table, wanted, columns=columns)
    if shaped:
        frame = frame.rename({"columns": "data_columns"})
    else:
        frame = frame.with_columns(
            pl.lit(None, dtype=pl.Int64).alias("row_count"),
            pl.lit(None, dtype=pl.List(pl.String)).alias("data_columns"),
        )
    return frame.select(pl.col(name).cast(kind) for name, kind in _SCHEMA.items())


def detail_text(row: dict[str, object], width: int = 60) -> str:
    """A one-line summary of an artifact row of ``queries.artifacts``, for a table's detail cell.

    A file ref shows its path and size; data its name, rows, columns and size; a metric its
    content; anything else its name and size.
    """
    name = str(row.get("original_name") or "")
    size = row.get("size")
    bytes_text = f"{size:,} bytes" if isinstance(size, int) else ""
    if row.get("path") is not None:
        text = f"{row['path']} ({bytes_text or '0 bytes'})"
    elif row.get("content") is not None:
        text = str(row["content"])
    elif row.get("row_count") is not None:
        shown = _columns_text(row.get("data_columns"))
        rows = f"{row['row_count']:,} row{'' if row['row_count'] == 1 else 's'}"
        text = f"{name}: {rows} {shown}, {bytes_text}"
    else:
        text = ", ".join(part for part in (name, bytes_text) if part)
    return text if len(text) <= width else text[: width - 1] + "…"


def _columns_text(columns: object) -> str:
    if not isinstance(columns, list) or not columns:
        return "? columns"
    names = [str(c) for c in columns]  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    shown = ",".join(names[:4]) + (f",… ({len(names)})" if len(names) > 4 else "")
    return f"({shown})"
