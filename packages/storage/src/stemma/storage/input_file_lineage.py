"""Lineage at the raw files a lazy step's key read: where a walk up ends, where one down starts.

A ``Path`` argument of a lazy step is keyed by its content alone; each step event records the
files its key read beside the key (``metadata.input_files``: the argument, the absolute path,
the content hash and size). So the files are not artifacts: they appear in lineage as rows whose
``source_artifact_type`` is :data:`INPUT_FILE` and ``source_artifact_id`` the file's content
hash, from the file to what the step made. A run recorded before paths were keeps only the
content hash, in the key's config (``params``): it answers walking up, never "what was made from
this path".
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any, cast

import polars as pl

from stemma.storage.schemas import ARTIFACT_INDEX, EXECUTION_EDGES, EXECUTIONS, STEPS
from stemma.storage.sqlite_history import TableReader

INPUT_FILE = "input_file"
"""The ``source_artifact_type`` of a lineage row whose source is a file a lazy step's key read
(a ``Path`` argument): not an artifact, so its ``source_artifact_id`` is its content hash."""
_ARTIFACT_ID = re.compile(r"[0-9a-f]+")
_FILE_KEY = '"$file"'
"""How a file's key is spelled in a step's recorded config (``params``)."""


class PathsNotRecordedWarning(UserWarning):
    """Nothing was found made from a file, and some of the root's runs could not say.

    Their lazy steps read input files, but were recorded before stemma recorded a file's path
    beside its key: those files are known by their content alone.
    """


def is_input_file(start: str | os.PathLike[str]) -> bool:
    """Whether lineage starts at a raw file rather than at an artifact.

    A ``Path`` (any ``os.PathLike``) is a file; a str is an artifact id when it is hex digits
    (as every artifact id is), else a path (``/data/x.csv``, ``x.csv``; write ``./abc`` for a
    file whose name is all hex).
    """
    return not isinstance(start, str) or _ARTIFACT_ID.fullmatch(start) is None


def files_read(params: str | None, metadata: str | None) -> list[dict[str, Any]]:
    """The input files a step event records: ``metadata.input_files``, else its params' keys."""
    recorded = _recorded_files(metadata)
    if recorded is not None:
        return recorded
    config: object = json.loads(params) if params else {}
    inputs = cast(dict[str, Any], config).get("inputs") if isinstance(config, dict) else None
    found: list[dict[str, Any]] = []
    if isinstance(inputs, dict):
        for name, value in cast(dict[str, Any], inputs).items():
            _file_keys(value, name, found)
    return found


def _recorded_files(metadata: str | None) -> list[dict[str, Any]] | None:
    """``metadata.input_files`` (None for an event recorded before paths were)."""
    meta: object = json.loads(metadata) if metadata else {}
    if not isinstance(meta, dict):
        return None
    recorded = cast(dict[str, Any], meta).get("input_files")
    if not isinstance(recorded, list):
        return None
    entries = cast(list[object], recorded)
    return [
        cast(dict[str, Any], f)
        for f in entries
        if isinstance(f, dict) and "content_hash" in f and "input" in f
    ]


def _file_keys(value: object, where: str, found: list[dict[str, Any]]) -> None:
    """The ``{"$file": {"content_hash", "size"}}`` keys inside a lazy step's recorded inputs."""
    if isinstance(value, dict):
        mapping = cast(dict[str, Any], value)
        key = mapping.get("$file")
        if len(mapping) == 1 and isinstance(key, dict) and "content_hash" in key:
            found.append({"input": where, **cast(dict[str, Any], key)})
            return
        for name, item in mapping.items():
            shown = name[1:] if name.startswith("$$") else name  # a user's key, escaped
            _file_keys(item, f"{where}[{shown!r}]", found)
    elif isinstance(value, list):
        for index, item in enumerate(cast(list[object], value)):
            _file_keys(item, f"{where}[{index}]", found)


def file_edges_up(read: TableReader, depths: Mapping[str, int], like: pl.DataFrame) -> pl.DataFrame:
    """Rows from the files a lazy step's key read to what it made, at ``depths[made]``.

    ``like`` is an empty frame of the edges' columns.
    """
    made = read(
        EXECUTION_EDGES,
        (pl.col("direction") == "output") & pl.col("artifact_id").is_in(sorted(depths)),
        columns=["execution_run_id", "role", "artifact_id"],
    )
    runs = read(
        EXECUTIONS,
        pl.col("execution_run_id").is_in(made.get_column("execution_run_id").unique().to_list()),
        columns=["execution_run_id", "step_run_id"],
    ).unique("execution_run_id")
    events = read(
        STEPS,
        pl.col("step_run_id").is_in(runs.get_column("step_run_id").unique().to_list()),
        columns=["step_run_id", "params", "metadata"],
    ).unique("step_run_id", keep="last", maintain_order=True)
    files = {
        str(row["step_run_id"]): files_read(row["params"], row["metadata"])
        for row in events.iter_rows(named=True)
    }
    step_of = dict(runs.iter_rows())
    made_from = [
        (execution, role, target, file)
        for execution, role, target in made.iter_rows()
        for file in files.get(str(step_of.get(execution)), ())
    ]
    return _rows(read, made_from, {t: depths[t] for _, _, t, _ in made_from}, like)


def file_edges_down(read: TableReader, path: str, like: pl.DataFrame) -> pl.DataFrame:
    """Rows from the file at ``path`` (absolute) to what each step whose key read it made.

    Found by the path each step event records beside its key; at depth 1.
    """
    events = read(
        STEPS,
        pl.col("metadata").str.contains('"input_files"', literal=True),
        columns=["step_run_id", "metadata"],
    )
    files: dict[str, list[dict[str, Any]]] = {}
    for step_run_id, metadata in events.iter_rows():
        read_there = [f for f in _recorded_files(metadata) or () if f.get("path") == path]
        if read_there:
            files[str(step_run_id)] = read_there
    runs = read(
        EXECUTIONS,
        pl.col("step_run_id").is_in(sorted(files)),
        columns=["execution_run_id", "step_run_id"],
    ).unique("execution_run_id")
    step_of = dict(runs.iter_rows())
    made = read(
        EXECUTION_EDGES,
        (pl.col("direction") == "output") & pl.col("execution_run_id").is_in(sorted(step_of)),
        columns=["execution_run_id", "role", "artifact_id"],
    )
    made_from = [
        (execution, role, target, file)
        for execution, role, target in made.iter_rows()
        for file in files[str(step_of[execution])]
    ]
    return _rows(read, made_from, {t: 1 for _, _, t, _ in made_from}, like)


def steps_without_paths(read: TableReader) -> int:
    """How many step attempts read input files but were recorded before their paths were."""
    events = read(
        STEPS,
        pl.col("params").str.contains(_FILE_KEY, literal=True),
        columns=["step_run_id", "metadata"],
    )
    return len(
        {str(run) for run, metadata in events.iter_rows() if _recorded_files(metadata) is None}
    )


def _rows(
    read: TableReader,
    made_from: list[tuple[str, str, str, dict[str, Any]]],
    depths: Mapping[str, int],
    like: pl.DataFrame,
) -> pl.DataFrame:
    """Lineage rows ``file → target`` of ``(execution, role, target, file)``, with the path."""
    types = dict(
        read(
            ARTIFACT_INDEX,
            pl.col("artifact_id").is_in(sorted(depths)),
            columns=["artifact_id", "artifact_type"],
        ).iter_rows()
    )
    rows: list[dict[str, Any]] = [
        {
            "execution_run_id": execution,
            "source_artifact_id": file["content_hash"],
            "target_artifact_id": target,
            "source_artifact_type": INPUT_FILE,
            "target_artifact_type": types.get(target),
            "source_role": file["input"],
            "target_role": role,
            "group_id": None,
            "step_boundary": True,
            "depth": depths[target],
            "input_path": file.get("path"),
        }
        for execution, role, target, file in made_from
    ]
    schema = {**like.schema, "input_path": pl.String}
    return pl.DataFrame(rows, schema=schema)
