"""Appending a large sealed wave a chunk at a time, after every chunk was read through once.

The second half of a chunked commit (the plan is :mod:`stemma.storage.wave_chunks`'s). Before
anything is appended, every piece of the plan is read through (:func:`read_through`), so a
garbled file is found, and its bundle quarantined, while nothing of the wave is in Delta yet.
Reading a piece of a thousand small staged files costs a quarter of a millisecond per file,
so a piece of many files is not read from them a second time: the read-through writes its rows,
already cast to the table's schema, as one Parquet file in the wave's ``chunks/`` directory,
and the append reads that back (a tenth of the time). Only one piece is ever held, so the
committer's memory stays as flat as when each piece was read twice; the spilled files take
less room than the staged files they come from, and go with the wave when it is retired.

A spilled file is only read by the process that wrote it, in the same commit: a commit run
again after a crash (by ``recover()``) reads every piece through again and writes its own. A
spill that cannot be written (a full disk) or read back is not an error: that piece is read
from its staged files instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import suppress
from pathlib import Path

import polars as pl

from stemma.core.crash_points import crash_point
from stemma.core.store.locations import RootLayout
from stemma.storage.commit import commit_frames
from stemma.storage.schemas import ARTIFACT_INDEX, EXECUTIONS, STEP_OUTPUTS, TableSpec, commit_order
from stemma.storage.tables import read_table
from stemma.storage.wave_chunks import Piece, read_piece
from stemma.storage.worker_logs import fill_worker_logs

SPILL = "chunks"
"""The directory of a wave holding the rows of its pieces read through (:func:`read_through`)."""
SPILL_FILES = 64
"""A piece of fewer staged files is read from them again rather than spilled: measured, writing
and reading back 100,000 rows costs about what reading 100 small files again does."""


def read_through(
    plan: Mapping[TableSpec, Sequence[Piece]], spill: Path
) -> dict[tuple[TableSpec, int], Path]:
    """Read every piece through, one at a time; keep the rows of pieces of many files in ``spill``.

    A piece of fewer than :data:`SPILL_FILES` files (or some row groups of one) is as cheap to
    read again as to write and read back, so it is not spilled.

    Returns:
        Where each spilled piece's rows are.

    Raises:
        StagedBundleError: a staged file cannot be read whole.
    """
    spilled: dict[tuple[TableSpec, int], Path] = {}
    for spec, pieces in plan.items():
        for number, piece in enumerate(pieces):
            frame = read_piece(spec, piece)
            if len(piece.files) >= SPILL_FILES:
                target = spill / f"{spec.name.replace('/', '.')}-{number}.parquet"
                if _spill(frame, target):
                    spilled[spec, number] = target
                    crash_point("wave.chunk_spilled")
    return spilled


def commit_chunked(
    layout: RootLayout,
    plan: Mapping[TableSpec, Sequence[Piece]],
    *,
    transaction: str,
    worker_logs: Mapping[str, str],
    only_committed_outputs: bool,
    spilled: Mapping[tuple[TableSpec, int], Path] | None = None,
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
        spilled: the pieces this commit's :func:`read_through` kept, read from there.
    """
    kept: Mapping[tuple[TableSpec, int], Path] = spilled if spilled is not None else {}
    wrote = False
    for spec in commit_order(plan):
        outputs = _OutputRoles() if spec is STEP_OUTPUTS and only_committed_outputs else None
        number = 0
        for number, piece in enumerate(plan[spec]):
            frame = _read_back(spec, kept.get((spec, number)))
            if frame is None:
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


def _spill(frame: pl.DataFrame, target: Path) -> bool:
    """Write ``frame`` at ``target``; whether it was (a failure only costs a second read)."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # lz4 without statistics: the file is read once, whole, moments later.
        frame.write_parquet(target, compression="lz4", statistics=False)
    except (OSError, pl.exceptions.PolarsError):
        with suppress(OSError):  # a part written: never read, and removed with the wave anyway
            target.unlink(missing_ok=True)
        return False
    return True


def _read_back(spec: TableSpec, spilled: Path | None) -> pl.DataFrame | None:
    """A spilled piece's rows, or ``None`` (not spilled, or no longer readable)."""
    if spilled is None:
        return None
    try:
        frame = pl.read_parquet(spilled)
    except (OSError, pl.exceptions.PolarsError):
        return None
    return frame.cast(spec.polars_schema).select(spec.columns)


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
