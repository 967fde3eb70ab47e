"""Committing a large sealed wave in bounded chunks, so the committer's memory stays flat.

A wave's rows are normally read whole and appended once per table (:mod:`stemma.storage.waves`).
That holds every row of the wave in memory several times over (the staged frames, their Arrow
copies, the writer's buffers): about 1.8 KB per row, so a step of 10^6 units, or one unit
making 10^6 artifacts, would need gigabytes in the orchestrator (DESIGN.md §9 asks for flat
memory, 10^6 units under 1 GB). A wave of more than :func:`commit_chunk_rows` staged rows is
therefore committed a chunk at a time:

1. Every staged file is read through first, a row group at a time, so a garbled file is found (and
   its bundle quarantined) before anything is appended, as with a whole read.
2. Each table, in commit order, is read from its files in the manifest's order and appended
   ``commit_chunk_rows()`` rows at a time. The first chunk carries the wave's Delta application
   transaction and chunk ``k`` after it ``{wave transaction}-{k}``, so a commit interrupted
   between chunks and run again (by ``recover()``) skips the chunks a table already holds: the
   chunks are the same every time, because the files and their order are.

Every content and index row is committed before any edge, output or execution row, as in a
whole commit; a reader may see part of a large step's executions before its final event, which
is what says whether the step completed.
"""

# (polars' signatures name numpy types and numpy is not installed, so every polars method reads
# as partially unknown; arguments and results are still checked.)

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import cast

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from stemma.core.layout import RootLayout
from stemma.storage.commit import commit_frames
from stemma.storage.errors import StagedBundleError
from stemma.storage.schemas import ARTIFACT_INDEX, EXECUTIONS, STEP_OUTPUTS, TableSpec, commit_order
from stemma.storage.tables import read_table
from stemma.storage.worker_logs import fill_worker_logs

CHUNK_ROWS_ENV = "STEMMA_COMMIT_CHUNK_ROWS"
DEFAULT_CHUNK_ROWS = 20_000
"""About 40 MB of the committer's memory per chunk; fewer rows mean more, smaller Delta commits."""


def commit_chunk_rows() -> int:
    """The most staged rows committed at once: ``$STEMMA_COMMIT_CHUNK_ROWS``, else 20,000.

    Raises:
        ValueError: the variable is set to something other than a positive whole number.
    """
    text = os.environ.get(CHUNK_ROWS_ENV)
    if not text:
        return DEFAULT_CHUNK_ROWS
    try:
        rows = int(text)
    except ValueError:
        rows = 0
    if rows < 1:
        raise ValueError(
            f"{CHUNK_ROWS_ENV}={text!r} is not a positive number of rows; set it to e.g. "
            f"{DEFAULT_CHUNK_ROWS} (or unset it)"
        )
    return rows


def staged_rows(files: Mapping[TableSpec, Sequence[Path]]) -> int:
    """How many rows the files hold in all, from their footers (nothing else is read).

    Raises:
        StagedBundleError: a file's footer cannot be read.
    """
    total = 0
    for file in (file for found in files.values() for file in found):
        try:
            total += pq.read_metadata(file).num_rows  # pyright: ignore[reportUnknownMemberType]
        except (OSError, pa.ArrowException) as err:
            raise StagedBundleError(f"cannot read the staged file {file}: {err}") from err
    return total


def verify_readable(files: Mapping[TableSpec, Sequence[Path]]) -> None:
    """Read every file through, a row group at a time, keeping nothing.

    Raises:
        StagedBundleError: a file cannot be read whole.
    """
    for file in (file for found in files.values() for file in found):
        for _ in _row_groups(file):
            pass


def commit_chunked(
    layout: RootLayout,
    files: Mapping[TableSpec, Sequence[Path]],
    *,
    transaction: str,
    worker_logs: Mapping[str, str],
    only_committed_outputs: bool,
) -> bool:
    """Append every table's staged rows in chunks, in commit order; return whether any landed.

    Args:
        layout: the store root.
        files: per table, the staged files in the wave's order (the step outputs' included).
        transaction: the wave's application transaction; the first chunk commits as it, chunk
            ``k`` after it as ``{transaction}-{k}``.
        worker_logs: per execution run id, the worker log to fill in where none was recorded.
        only_committed_outputs: drop step outputs that name artifacts the store does not hold
            (bundles were left out of the wave).
    """
    rows = commit_chunk_rows()
    wrote = False
    for spec in commit_order(files):
        outputs = _OutputRoles() if spec is STEP_OUTPUTS and only_committed_outputs else None
        number = 0
        for number, chunk in enumerate(_chunks(spec, files[spec], rows)):
            frame = chunk
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


def _chunks(spec: TableSpec, files: Sequence[Path], rows: int) -> Iterator[pl.DataFrame]:
    """The rows of ``files``, in order, cast to the table's schema, ``rows`` at a time."""
    pending: list[pl.DataFrame] = []
    held = 0
    for file in files:
        for group in _row_groups(file):
            frame = cast(pl.DataFrame, pl.from_arrow(group))  # pyright: ignore[reportUnknownMemberType]
            pending.append(frame.cast(spec.polars_schema).select(spec.columns))
            held += group.num_rows
            while held >= rows:
                whole = pl.concat(pending, how="vertical", rechunk=False)
                yield whole.head(rows)
                rest = whole.slice(rows)
                pending, held = [rest], rest.height
    if held:
        yield pl.concat(pending, how="vertical")


def _row_groups(file: Path) -> Iterator[pa.Table]:
    """The file's row groups, one at a time (``iter_batches`` reads ahead, holding more)."""
    try:
        parquet = pq.ParquetFile(file)
        for number in range(parquet.num_row_groups):
            yield parquet.read_row_group(number)  # pyright: ignore[reportUnknownMemberType]
    except (OSError, pa.ArrowException) as err:
        raise StagedBundleError(
            f"cannot read the staged file {file}: {err}; remove the bundle directory if the "
            "execution should be rerun"
        ) from err
