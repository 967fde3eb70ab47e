"""Staging a pack: its bundle's files written durably, the sentinel last, whatever the store.

A worker, possibly on another node, stages what its units made; only the orchestrator commits.
So staging needs no connection and never touches a table: it writes the bundle's files under
``staging/{step dir}/{ab}/{cd}/{execution_run_id}/`` (:mod:`~stemma.core.store.staging.tree`)
and returns the directory. Every file is fsynced before the sentinel appears (written under a
temporary name, fsynced, then renamed), and the directory is fsynced after it, so a bundle
holding its sentinel is complete, and one without it was left by a writer that has not finished
or died. Staging the same pack again rewrites the same bundle: its sentinel is removed first, so
it is incomplete while it is rewritten.

The crash points, in order: ``staging.sentinel_removed`` (restaging only), ``staging.tables``
(one for all the files before the sentinel: without it a bundle is incomplete however many were
written, and recovery treats every such bundle alike), ``staging.sentinel``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from stemma.core.crash_points import crash_point
from stemma.core.store.staging.tree import bundle_dir

if TYPE_CHECKING:
    from stemma.core.execution_records import ExecutionRecord
    from stemma.core.store.locations import RootLayout
    from stemma.core.store.staging.bundle_format import BundleFiles, BundleFormat

S = TypeVar("S")


def stage_bundle(
    layout: RootLayout, records: Sequence[ExecutionRecord], fmt: BundleFormat[S]
) -> Path:
    """Write one bundle holding a worker's pack of units in ``fmt``; return its directory.

    A pack is units of one step run, or of several function steps packed together (the
    engine's ``function_packs``). The bundle is named after the first unit, under the first
    unit's step, and is committed or recovered whole.

    Raises:
        ValueError: no records.
        ArtifactTypeError: an artifact cannot be encoded in ``fmt``.
    """
    if not records:
        raise ValueError("stage_executions needs at least one record")
    first = records[0]
    files = fmt.encode(records)
    step_dir = fmt.step_dir(first.step_number, first.step_name)
    bundle = bundle_dir(layout, step_dir, first.execution_run_id)
    with fmt.writing(layout, bundle):
        write_bundle(bundle, fmt.shape.sentinel, files)
    return bundle


def write_bundle(bundle: Path, sentinel: str, files: BundleFiles) -> None:
    """Write ``files`` as the bundle at ``bundle``, durably, the file ``sentinel`` last."""
    bundle.mkdir(parents=True, exist_ok=True)
    if (bundle / sentinel).exists():  # restaging: incomplete until the sentinel is back
        (bundle / sentinel).unlink()
        fsync_directory(bundle)
        crash_point("staging.sentinel_removed")
    files.write_tables(bundle)
    crash_point("staging.tables")
    files.write_sentinel(bundle)
    fsync_directory(bundle)
    crash_point("staging.sentinel")


def fsync_directory(path: Path) -> None:
    """Make the entries of directory ``path`` (names made, renamed or removed) durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
