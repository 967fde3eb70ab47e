"""Printing rows as an aligned table, CSV or JSON; rich styling only on a terminal, if installed.

Core must not require rich, so it is imported lazily and only when stdout is a TTY.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import io
import json
import os
import sys
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any, TextIO

Row = Mapping[str, Any]


class OutputFormat(StrEnum):
    """What ``--format`` accepts."""

    TABLE = "table"
    CSV = "csv"
    JSON = "json"


def add_format_option(parser: argparse.ArgumentParser) -> None:
    """``--format table|csv|json`` (a table by default)."""
    parser.add_argument(
        "--format",
        choices=[f.value for f in OutputFormat],
        default=OutputFormat.TABLE.value,
        help="table (aligned text), csv or json (one array of objects); default: table",
    )


def is_terminal(stream: TextIO) -> bool:
    """True when ``stream`` is an interactive terminal (and ``TERM`` is not ``dumb``)."""
    if os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def rich_available() -> bool:
    """True when rich can be imported (it is optional for stemma-core)."""
    return importlib.util.find_spec("rich") is not None


def print_rows(
    rows: Sequence[Row],
    columns: Sequence[str],
    fmt: str = OutputFormat.TABLE.value,
    *,
    stream: TextIO | None = None,
    title: str | None = None,
) -> None:
    """Print ``rows`` (only ``columns``, in that order) in the chosen format."""
    out = stream or sys.stdout
    chosen = OutputFormat(fmt)
    if chosen is OutputFormat.JSON:
        data = [{c: _jsonable(row.get(c)) for c in columns} for row in rows]
        out.write(json.dumps(data, indent=1) + "\n")
    elif chosen is OutputFormat.CSV:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([_text(row.get(c)) for c in columns] for row in rows)
    elif is_terminal(out) and rich_available() and "NO_COLOR" not in os.environ:
        _print_rich(rows, columns, out, title)
    else:
        out.write(format_table(rows, columns))


def format_table(rows: Sequence[Row], columns: Sequence[str]) -> str:
    """Rows as space-aligned text with a header line; numbers right-aligned."""
    cells = [[_text(row.get(c)) for c in columns] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]
    numeric = [bool(rows) and all(_is_number(row.get(c)) for row in rows) for c in columns]
    buffer = io.StringIO()
    for line in [list(columns), *cells]:
        padded = [
            cell.rjust(widths[i]) if numeric[i] else cell.ljust(widths[i])
            for i, cell in enumerate(line)
        ]
        buffer.write("  ".join(padded).rstrip() + "\n")
    return buffer.getvalue()


def _print_rich(
    rows: Sequence[Row], columns: Sequence[str], out: TextIO, title: str | None
) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, box=None, header_style="bold", padding=(0, 2, 0, 0), pad_edge=False)
    for index, column in enumerate(columns):
        numeric = bool(rows) and all(_is_number(row.get(column)) for row in rows)
        # The first column is an id people copy: never shortened. Others fold, never "…".
        widest = max((len(_text(row.get(column))) for row in rows), default=0)
        table.add_column(
            column,
            justify="right" if numeric else "left",
            overflow="fold",
            min_width=widest if index == 0 else None,
        )
    for row in rows:
        table.add_row(*(_text(row.get(c)) for c in columns))
    Console(file=out).print(table)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def _jsonable(value: object) -> object:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)
