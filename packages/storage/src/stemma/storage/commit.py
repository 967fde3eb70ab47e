"""Committing a staged bundle to the Delta tables, idempotently, then removing it.

Recovery commits each bundle left in staging this way; the engine commits its bundles together
in waves (:mod:`stemma.storage.waves`), which append through :func:`commit_frames` too. Each
table's append carries the Delta application transaction of the bundle (keyed by its
``execution_run_id``) and is skipped when the table already holds it, so a commit interrupted
half-way and retried (by ``recover()``, in another process) writes each table exactly once. An
exclusive lock per bundle, kept outside it (:func:`~stemma.storage.locks.bundle_lock`), keeps
two committers of the same bundle from interleaving, and artifact rows already in a table are
never written again. A committed bundle is retired by an atomic rename before it is removed
(:func:`~stemma.core.store.staging.removal.retire_bundle`), so a committer finds either the
whole bundle or none of it, and a bundle that is gone was committed by someone else.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from stemma.core.crash_points import crash_point
from stemma.core.store.locations import RootLayout
from stemma.core.store.staging.removal import retire_bundle
from stemma.storage.errors import StagedBundleError
from stemma.storage.locks import bundle_lock
from stemma.storage.schemas import (
    ARTIFACT_EDGES,
    ARTIFACT_INDEX,
    EXECUTIONS,
    TableSpec,
    commit_order,
)
from stemma.storage.staging import read_bundle
from stemma.storage.tables import append_rows, read_table


def app_id(execution_run_id: str) -> str:
    """The Delta application-transaction id that makes committing one bundle idempotent."""
    return f"stemma-exec-{execution_run_id}"


def commit_staged(layout: RootLayout, bundle: Path) -> bool:
    """Commit one staged bundle to the tables under ``layout`` and delete it.

    What recovery does with each bundle left in staging, whatever wrote it: the tables a bundle
    holds are the ones its sentinel lists (a function step's bundle staged by an older stemma
    also holds its step events). Safe to call for the same bundle from several threads or
    processes at once, and again after a crash: the bundle's rows land exactly once.

    Args:
        layout: the store root the bundle belongs to.
        bundle: a bundle directory under ``layout``'s staging
            (:func:`~stemma.storage.staging.stage_executions` returns one).

    Returns:
        ``True`` if this call committed the bundle; ``False`` if it was already committed (the
        bundle is gone, or every table already held its transaction).

    Raises:
        StagedBundleError: the bundle exists but is incomplete or unreadable.
        CommitConflictError: a table kept conflicting with concurrent writers; the bundle stays.
    """
    with bundle_lock(layout, bundle):
        # Another committer may have finished (and retired the bundle) while we waited.
        if not bundle.is_dir():
            return False
        try:
            frames = read_bundle(bundle)
        except StagedBundleError:
            if bundle.is_dir():
                raise
            return False  # retired while we read it: committed by someone else
        committed = _commit_tables(layout, frames)
        retire_bundle(layout, bundle)
        return committed


def commit_frames(
    layout: RootLayout, frames: dict[TableSpec, pl.DataFrame], transaction: str
) -> bool:
    """Append each table's rows once, in commit order, as application transaction ``transaction``.

    Tables that already hold the transaction are skipped, artifact rows already present are
    dropped, and missing edge artifact types are filled from the index. Returns whether any row
    was written.
    """
    if ARTIFACT_EDGES in frames:
        frames[ARTIFACT_EDGES] = _with_artifact_types(layout, frames)
    wrote = False
    for spec in commit_order(frames):
        if not frames[spec].is_empty() and append_rows(
            layout, spec, frames[spec], app_id=transaction
        ):
            wrote = True
            crash_point(f"delta.append.{spec.name.replace('/', '.')}")
    return wrote


def _commit_tables(layout: RootLayout, frames: dict[TableSpec, pl.DataFrame]) -> bool:
    execution_run_id = str(frames[EXECUTIONS].get_column("execution_run_id")[0])
    return commit_frames(layout, frames, app_id(execution_run_id))


def _with_artifact_types(layout: RootLayout, frames: dict[TableSpec, pl.DataFrame]) -> pl.DataFrame:
    """Fill in the types of edges' artifacts from the index (the staged one's or Delta's)."""
    edges = frames[ARTIFACT_EDGES]
    missing: set[str] = set()
    for side in ("source", "target"):
        unknown = edges.filter(pl.col(f"{side}_artifact_type").is_null())
        missing.update(unknown.get_column(f"{side}_artifact_id").to_list())
    if not missing:
        return edges
    wanted = sorted(missing)
    known = (
        pl.concat(
            [
                frames.get(ARTIFACT_INDEX, ARTIFACT_INDEX.empty()),
                read_table(layout, ARTIFACT_INDEX, pl.col("artifact_id").is_in(wanted)),
            ]
        )
        .select("artifact_id", "artifact_type")
        .unique("artifact_id")
    )
    for side in ("source", "target"):
        named = known.rename(
            {"artifact_id": f"{side}_artifact_id", "artifact_type": f"_{side}_known"}
        )
        edges = edges.join(named, on=f"{side}_artifact_id", how="left").with_columns(
            pl.coalesce(f"{side}_artifact_type", f"_{side}_known").alias(f"{side}_artifact_type")
        )
    return edges.select(ARTIFACT_EDGES.columns)
