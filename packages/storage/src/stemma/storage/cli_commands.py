"""``stemma artifacts`` and ``stemma lineage``: the Delta history as tables, CSV or JSON.

Registered under the ``stemma.commands`` entry point group, so they exist exactly when
stemma-storage is installed. They read the root's history wherever it is: the Delta tables, or
``core.sqlite`` on a root stemma-core alone recorded (see :mod:`stemma.storage.queries`).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import Any

import polars as pl

from stemma.core.cli import (
    CliError,
    Command,
    ExitCode,
    OutputFormat,
    add_format_option,
    existing_root,
    print_rows,
)
from stemma.storage.artifact_names import detail_text
from stemma.storage.input_file_lineage import INPUT_FILE, PathsNotRecordedWarning, is_input_file
from stemma.storage.queries import artifacts, lineage

ARTIFACT_COLUMNS = ("artifact_id", "artifact_type", "origin_step_name", "created_at", "detail")
LINEAGE_COLUMNS = (
    "depth",
    "source_artifact_id",
    "source_artifact_type",
    "source_role",
    "target_artifact_id",
    "target_artifact_type",
    "target_role",
    "step_name",
    "execution_run_id",
    "source_name",
    "target_name",
    "source_type",
    "target_type",
)
"""An edge's artifacts, then which step's execution made it: the same bytes made by two steps
are one artifact, so an edge from an artifact to itself says only through these who made it.
The artifacts' original names, then the types lazy steps gave them, come last, so CSV readers
of the earlier columns keep theirs."""
LINEAGE_TABLE_COLUMNS = (
    "depth",
    "source",
    "source_role",
    "target",
    "target_role",
    "step",
    "execution",
)
"""What the table shows: each artifact as a short id, its name and the type its step gave it
(``3f2a… feat/count (csv)``), the step that made the target and its execution's short id (full
ids: ``--format csv`` or ``json``)."""
SHORT_ID = 12
"""Hex digits of an id in the table: what ``stemma lineage`` takes back (it accepts a prefix)."""


def resolve_artifact_id(root: Path, given: str) -> str:
    """The artifact id ``given`` names: itself, or the one id it is the start of.

    Raises:
        CliError: no artifact (NOT_FOUND) or several (USAGE) match.
    """
    index = artifacts(root).get_column("artifact_id")
    matches = sorted({str(i) for i in index.filter(index.str.starts_with(given)).to_list()})
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise CliError(
            f"no artifact {given!r} under {root}; `stemma artifacts` lists them",
            ExitCode.NOT_FOUND,
        )
    raise CliError(f"{given!r} starts {len(matches)} artifact ids; give more", ExitCode.USAGE)


def _configure_artifacts(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--type", dest="artifact_type", help="only this type (data, metric…)")
    parser.add_argument(
        "--step",
        help="only artifacts that steps with this name output (origin_step_name is the step "
        "that made the same bytes first, which may be another)",
    )
    parser.add_argument("--limit", type=int, default=None, help="only the newest N")
    add_format_option(parser)


def _artifacts(args: argparse.Namespace) -> int:
    root = existing_root(args.root)
    frame = artifacts(root, artifact_type=args.artifact_type, step_name=args.step)
    frame = frame.sort("created_at", descending=True)
    if args.limit is not None:
        frame = frame.head(args.limit)
    rows = [_artifact_row(row) for row in frame.iter_rows(named=True)]
    print_rows(rows, ARTIFACT_COLUMNS, args.format)
    return ExitCode.OK


def _artifact_row(row: dict[str, Any]) -> dict[str, object]:
    return {
        "artifact_id": row["artifact_id"],
        "artifact_type": row["artifact_type"],
        "origin_step_name": row["origin_step_name"],
        "created_at": f"{row['created_at']:%Y-%m-%d %H:%M:%S}",
        "detail": detail_text(row),
    }


def _configure_lineage(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "artifact",
        help="an artifact id, or the start of one; or a raw input file a lazy step read "
        "(/data/x.csv, ./x.csv: what was made from it)",
    )
    parser.add_argument(
        "--down",
        action="store_true",
        help="what was made from it (default: what it came from; always, from a file)",
    )
    parser.add_argument("--depth", type=int, default=None, help="stop after N hops")
    add_format_option(parser)


def _lineage(args: argparse.Namespace) -> int:
    root = existing_root(args.root)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", PathsNotRecordedWarning)
        if is_input_file(args.artifact):  # a file was made from nothing recorded: walk down
            edges = lineage(root, Path(args.artifact), "down", max_depth=args.depth)
        else:
            artifact_id = resolve_artifact_id(root, args.artifact)
            edges = lineage(root, artifact_id, "down" if args.down else "up", max_depth=args.depth)
    for warning in said:  # why an answer from a file is empty, when the root can tell
        print(f"stemma: note: {warning.message}", file=sys.stderr)
    edges = edges.sort(["depth", "source_artifact_id", "target_artifact_id"])
    rows: list[dict[str, object]] = list(
        edges.select(pl.col(LINEAGE_COLUMNS)).iter_rows(named=True)
    )
    if args.format == OutputFormat.TABLE.value:
        print_rows([_table_edge(row) for row in rows], LINEAGE_TABLE_COLUMNS, args.format)
    else:
        print_rows(rows, LINEAGE_COLUMNS, args.format)
    return ExitCode.OK


def _table_edge(row: dict[str, object]) -> dict[str, object]:
    """An edge as the table shows it: short ids beside names; an input file by its path."""
    if row["source_artifact_type"] == INPUT_FILE:
        where = row["source_name"] or "(path not recorded)"
        source = f"file {where} (content {str(row['source_artifact_id'])[:8]})"
    else:
        source = _named(row["source_artifact_id"], row["source_name"], row["source_type"])
    return {
        "depth": row["depth"],
        "source": source,
        "source_role": row["source_role"],
        "target": _named(row["target_artifact_id"], row["target_name"], row["target_type"]),
        "target_role": row["target_role"],
        "step": row["step_name"] or "?",
        "execution": str(row["execution_run_id"])[:SHORT_ID],
    }


def _named(artifact_id: object, name: object, declared: object) -> str:
    short = str(artifact_id)[:SHORT_ID]
    shown = f"{short} {name}" if name else short
    return f"{shown} ({declared})" if declared else shown


ARTIFACTS = Command(
    name="artifacts",
    help="list artifacts (filter by type or step)",
    configure=_configure_artifacts,
    run=_artifacts,
)
LINEAGE = Command(
    name="lineage",
    help="an artifact's lineage: what it came from (or --down: what was made from it); "
    "given a raw input file, what was made from it",
    configure=_configure_lineage,
    run=_lineage,
)
