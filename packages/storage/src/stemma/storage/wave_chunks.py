"""Committing a large sealed wave in bounded chunks, so the committer's memory stays flat.

A wave's rows are normally read whole and appended once per table (:mod:`stemma.storage.waves`).
That holds every row of the wave in memory several times over (the staged frames, their Arrow
copies, the writer's buffers): about 1.8 KB per row, so a step of 10^6 units, or one unit
making 10^6 artifacts, would need gigabytes in the orchestrator (benchmarks/README.md asks for flat
memory, 10^6 units under 1 GB). So when a table of a wave holds more than
:func:`commit_chunk_rows` staged rows (100,000 unless ``$STEMMA_COMMIT_CHUNK_ROWS`` says
otherwise), the wave is committed a chunk at a time:

1. Each table's files are cut into pieces of at most that many rows (:func:`chunk_plan`), from
   the row counts the bundles' sentinels record (:mod:`stemma.storage.sentinel`, read by the
   wave's claim), else from the Parquet footers (a table small on disk is one piece, unread):
   runs of consecutive whole files (read together, in parallel, as a whole commit reads them),
   or row groups of one file too large for a chunk (staged files are written in row groups of
   16,384 rows).
2. Every piece is read through, one at a time, so a garbled file is found (and its bundle
   quarantined) before anything is appended, as with a whole read; the rows of a piece of many
   files are kept on disk in the wave, not in memory (:mod:`stemma.storage.chunked_commit`).
3. Each table, in commit order, is appended a piece at a time. The first piece carries the
   wave's Delta application transaction and piece ``k`` after it ``{wave transaction}-{k}``,
   so a commit interrupted between pieces and run again (by ``recover()``) skips the pieces a
   table already holds: the plan is the same every time, because the files and their order are
   (and a file's rows are the same whether its sentinel records them or its footer says).

This module makes the plan and reads a piece; :mod:`stemma.storage.chunked_commit` does 2 and 3.

Every content and index row is committed before any edge, output or execution row, as in a
whole commit; a reader may see part of a large step's executions before its final event, which
is what says whether the step completed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from stemma.storage.env_numbers import env_number
from stemma.storage.errors import StagedBundleError
from stemma.storage.schemas import TableSpec
from stemma.storage.staging import read_staged_files

CHUNK_ROWS_ENV = "STEMMA_COMMIT_CHUNK_ROWS"
DEFAULT_CHUNK_ROWS = 100_000
"""The committer holds about 150 MB while it appends 100,000 execution rows (narrower tables'
rows cost less); fewer rows mean more, smaller Delta commits."""
MIN_STAGED_ROW_BYTES = 10
"""A staged row takes at least this much on disk (18 bytes or more measured, compressed), so a
table with less than ``rows * MIN_STAGED_ROW_BYTES`` on disk fits in one chunk: its footers are
not read (a wave of 100 packs has 600 files)."""


def commit_chunk_rows() -> int:
    """The most staged rows of a table committed at once: ``$STEMMA_COMMIT_CHUNK_ROWS``.

    Raises:
        ValueError: the variable is set to something other than a positive whole number.
    """
    return env_number(
        CHUNK_ROWS_ENV, DEFAULT_CHUNK_ROWS, minimum=1, expected="a positive number of rows"
    )


@dataclass(frozen=True)
class Piece:
    """One chunk of a table's rows: whole files, or some row groups of one large file."""

    files: tuple[Path, ...]
    row_groups: tuple[int, ...] | None = None
    """Of ``files[0]``, when that file alone holds more rows than a chunk."""


def chunk_plan(
    files: Mapping[TableSpec, Sequence[Path]],
    rows: int,
    counts: Mapping[Path, int] | None = None,
) -> dict[TableSpec, list[Piece]]:
    """Per table, its files cut into pieces of at most ``rows`` rows.

    A file's rows are taken from ``counts`` (what its bundle's sentinel records), else from its
    Parquet footer; the footers of a table with a file missing from ``counts`` are read only if
    the table is not small on disk. A piece is as many consecutive files as fit, or, for a file
    larger than ``rows``, as many of its row groups as fit (at least one; the footer of such a
    file is always read). The plan depends only on the files, so a commit run again after a
    crash cuts the same pieces.

    Raises:
        StagedBundleError: a footer that had to be read cannot be (a truncated file).
    """
    known: Mapping[Path, int] = counts if counts is not None else {}
    plan: dict[TableSpec, list[Piece]] = {}
    for spec, found in files.items():
        if _fits(found, known, rows):
            plan[spec] = [Piece(tuple(found))] if found else []
            continue
        pieces = plan[spec] = []
        group: list[Path] = []
        held = 0
        for file in found:
            size = known.get(file)
            if size is None:
                size = _footer(file).num_rows
            if size > rows:
                if group:
                    pieces.append(Piece(tuple(group)))
                    group, held = [], 0
                pieces.extend(_split(file, _footer(file), rows))
                continue
            if group and held + size > rows:
                pieces.append(Piece(tuple(group)))
                group, held = [], 0
            group.append(file)
            held += size
        if group:
            pieces.append(Piece(tuple(group)))
    return plan


def _fits(files: Sequence[Path], counts: Mapping[Path, int], rows: int) -> bool:
    """Whether ``files`` hold at most ``rows`` rows, reading no footer if it can be helped."""
    if all(file in counts for file in files):
        return sum(counts[file] for file in files) <= rows
    if sum(_disk_size(file) for file in files) < rows * MIN_STAGED_ROW_BYTES:
        return True
    return _row_count(files) <= rows


def read_piece(spec: TableSpec, piece: Piece) -> pl.DataFrame:
    """The rows of one piece, cast to the table's schema.

    Raises:
        StagedBundleError: a file cannot be read.
    """
    if piece.row_groups is None:
        return read_staged_files(spec, list(piece.files))
    (file,) = piece.files
    try:
        table = pq.ParquetFile(file).read_row_groups(list(piece.row_groups))  # pyright: ignore[reportUnknownMemberType]
    except (OSError, pa.ArrowException) as err:
        raise StagedBundleError(f"cannot read staged {spec.name} rows from {file}: {err}") from err
    frame = cast(pl.DataFrame, pl.from_arrow(table))  # pyright: ignore[reportUnknownMemberType]
    return frame.cast(spec.polars_schema).select(spec.columns)


def _footer(file: Path) -> pq.FileMetaData:
    try:
        return pq.read_metadata(file)  # pyright: ignore[reportUnknownMemberType]
    except (OSError, pa.ArrowException) as err:
        raise StagedBundleError(
            f"cannot read the staged file {file}: {err}; remove the bundle directory if the "
            "execution should be rerun"
        ) from err


def _row_count(files: Sequence[Path]) -> int:
    """All the files' rows, from their footers read in parallel (one file at a time is slower)."""
    try:
        return int(pl.scan_parquet(list(files)).select(pl.len()).collect().item())
    except (OSError, pl.exceptions.PolarsError) as err:
        raise StagedBundleError(f"cannot read the staged files' footers: {err}") from err


def _disk_size(file: Path) -> int:
    try:
        return file.stat().st_size
    except OSError as err:
        raise StagedBundleError(f"cannot read the staged file {file}: {err}") from err


def _split(file: Path, meta: pq.FileMetaData, rows: int) -> Iterator[Piece]:
    """A large file's row groups, as many per piece as fit in ``rows`` (at least one)."""
    numbers: list[int] = []
    held = 0
    for number in range(meta.num_row_groups):
        size = meta.row_group(number).num_rows
        if numbers and held + size > rows:
            yield Piece((file,), tuple(numbers))
            numbers, held = [], 0
        numbers.append(number)
        held += size
    if numbers:
        yield Piece((file,), tuple(numbers))
