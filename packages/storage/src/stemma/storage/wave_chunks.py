"""Committing a large sealed wave in bounded chunks, so the committer's memory stays flat.

A wave's rows are normally read whole and appended once per table (:mod:`stemma.storage.waves`).
That holds every row of the wave in memory several times over (the staged frames, their Arrow
copies, the writer's buffers): about 1.8 KB per row, so a step of 10^6 units, or one unit
making 10^6 artifacts, would need gigabytes in the orchestrator (DESIGN.md §9 asks for flat
memory, 10^6 units under 1 GB). So when a table of a wave holds more than
:func:`commit_chunk_rows` staged rows (100,000 unless ``$STEMMA_COMMIT_CHUNK_ROWS`` says
otherwise), the wave is committed a chunk at a time:

1. Each table's files are cut into pieces of at most that many rows, from the Parquet footers
   alone (:func:`chunk_plan`; a table small on disk is one piece, unread): runs of consecutive
   whole files (read together, in parallel, as a whole commit reads them), or row groups of
   one file too large for a chunk (staged files are written in row groups of 16,384 rows). A
   truncated file fails here.
2. Every piece is read through, keeping nothing, so a garbled file is found (and its bundle
   quarantined) before anything is appended, as with a whole read.
3. Each table, in commit order, is appended a piece at a time. The first piece carries the
   wave's Delta application transaction and piece ``k`` after it ``{wave transaction}-{k}``,
   so a commit interrupted between pieces and run again (by ``recover()``) skips the pieces a
   table already holds: the plan is the same every time, because the files and their order are.

Every content and index row is committed before any edge, output or execution row, as in a
whole commit; a reader may see part of a large step's executions before its final event, which
is what says whether the step completed.
"""

# (polars' signatures name numpy types and numpy is not installed, so every polars method reads
# as partially unknown; arguments and results are still checked.)

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from stemma.core.layout import RootLayout
from stemma.storage.commit import commit_frames
from stemma.storage.env_numbers import env_number
from stemma.storage.errors import StagedBundleError
from stemma.storage.schemas import ARTIFACT_INDEX, EXECUTIONS, STEP_OUTPUTS, TableSpec, commit_order
from stemma.storage.staging import read_staged_files
from stemma.storage.tables import read_table
from stemma.storage.worker_logs import fill_worker_logs

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
    files: Mapping[TableSpec, Sequence[Path]], rows: int
) -> dict[TableSpec, list[Piece]]:
    """Per table, its files cut into pieces of at most ``rows`` rows.

    Row counts come from the Parquet footers, read only for tables that are not small on disk.
    A piece is as many consecutive files as fit, or, for a file larger than ``rows``, as many of
    its row groups as fit (at least one). The plan depends only on the files, so a commit run
    again after a crash cuts the same pieces.

    Raises:
        StagedBundleError: a file's footer cannot be read (a truncated file).
    """
    plan: dict[TableSpec, list[Piece]] = {}
    for spec, found in files.items():
        small = sum(_disk_size(file) for file in found) < rows * MIN_STAGED_ROW_BYTES
        if small or _row_count(found) <= rows:
            plan[spec] = [Piece(tuple(found))] if found else []
            continue
        pieces = plan[spec] = []
        group: list[Path] = []
        held = 0
        for file in found:
            meta = _footer(file)
            if meta.num_rows > rows:
                if group:
                    pieces.append(Piece(tuple(group)))
                    group, held = [], 0
                pieces.extend(_split(file, meta, rows))
                continue
            if group and held + meta.num_rows > rows:
                pieces.append(Piece(tuple(group)))
                group, held = [], 0
            group.append(file)
            held += meta.num_rows
        if group:
            pieces.append(Piece(tuple(group)))
    return plan


def verify_readable(plan: Mapping[TableSpec, Sequence[Piece]]) -> None:
    """Read every piece through, keeping nothing.

    (Keeping the tables of one piece would save their second read, but they would all be held
    while the large tables are appended: measured, that doubled the committer's peak.)

    Raises:
        StagedBundleError: a file cannot be read whole.
    """
    for spec, pieces in plan.items():
        for piece in pieces:
            read_piece(spec, piece)


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


def commit_chunked(
    layout: RootLayout,
    plan: Mapping[TableSpec, Sequence[Piece]],
    *,
    transaction: str,
    worker_logs: Mapping[str, str],
    only_committed_outputs: bool,
) -> bool:
    """Append every table's staged rows in chunks, in commit order; return whether any landed.

    Args:
        layout: the store root.
        plan: per table, the pieces of its staged files (:func:`chunk_plan`), in order.
        transaction: the wave's application transaction; the first chunk commits as it, chunk
            ``k`` after it as ``{transaction}-{k}``.
        worker_logs: per execution run id, the worker log to fill in where none was recorded.
        only_committed_outputs: drop step outputs that name artifacts the store does not hold
            (bundles were left out of the wave).
    """
    wrote = False
    for spec in commit_order(plan):
        outputs = _OutputRoles() if spec is STEP_OUTPUTS and only_committed_outputs else None
        number = 0
        for number, piece in enumerate(plan[spec]):
            frame = read_piece(spec, piece)
            if spec is EXECUTIONS:
                frame = fill_worker_logs(frame, worker_logs)
            elif outputs is not None:
                frame = outputs.committed_only(layout, frame)
            name = _chunk_transaction(transaction, number)
            wrote = commit_frames(layout, {spec: frame}, name) or wrote
        if outputs is not None:
            emptied = outputs.emptied()
            if not emptied.is_empty():
                last = _chunk_transaction(transaction, number + 1)
                wrote = commit_frames(layout, {spec: emptied}, last) or wrote
    return wrote


def _chunk_transaction(transaction: str, number: int) -> str:
    # The first chunk is the wave's own transaction: a table that a whole commit of the same
    # wave wrote (the same bundles staged again by a rerun) is then known as written.
    return transaction if number == 0 else f"{transaction}-{number}"


class _OutputRoles:
    """Step outputs filtered chunk by chunk; a role left with no artifact at all gets a null row.

    (The whole-wave version is ``waves._committed_only``; here a role's artifacts may be spread
    over several chunks, so emptiness is known only after the last.)
    """

    def __init__(self) -> None:
        self._offered: set[tuple[str, str]] = set()
        self._kept: set[tuple[str, str]] = set()

    def committed_only(self, layout: RootLayout, offered: pl.DataFrame) -> pl.DataFrame:
        wanted = sorted(set(offered.get_column("artifact_id").drop_nulls()))
        known = read_table(
            layout, ARTIFACT_INDEX, pl.col("artifact_id").is_in(wanted), ["artifact_id"]
        )
        kept = offered.filter(
            pl.col("artifact_id").is_null()
            | pl.col("artifact_id").is_in(known.get_column("artifact_id").implode())
        )
        self._offered.update(_roles(offered))
        self._kept.update(_roles(kept))
        return kept

    def emptied(self) -> pl.DataFrame:
        missing = sorted(self._offered - self._kept)
        return pl.DataFrame(
            {
                "step_run_id": [run for run, _ in missing],
                "role": [role for _, role in missing],
                "artifact_id": [None] * len(missing),
            },
            schema=STEP_OUTPUTS.polars_schema,
        ).select(STEP_OUTPUTS.columns)


def _roles(frame: pl.DataFrame) -> set[tuple[str, str]]:
    pairs = frame.select("step_run_id", "role").unique().iter_rows()
    return {(str(run), str(role)) for run, role in pairs}


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
