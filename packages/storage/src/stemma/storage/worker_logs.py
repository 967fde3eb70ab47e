"""A scheduler's worker log, noted beside a staged bundle, filled into the Delta store's rows.

The note (``worker_log.json``) is the staging protocol's, the same in every store
(:mod:`~stemma.core.store.staging.worker_logs`). Whoever reads a bundle for a commit here fills
``executions.worker_log`` from it, where the worker left it empty.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import polars as pl

from stemma.core.store.staging.worker_logs import read_worker_logs


def with_worker_logs(executions: pl.DataFrame, bundles: Sequence[Path]) -> pl.DataFrame:
    """``executions`` with ``worker_log`` filled from the bundles' notes where it is empty."""
    return fill_worker_logs(executions, read_worker_logs(bundles))


def fill_worker_logs(executions: pl.DataFrame, notes: Mapping[str, str]) -> pl.DataFrame:
    """``executions`` with ``worker_log`` filled from ``notes`` (see :func:`read_worker_logs`)."""
    if not notes or executions.is_empty():
        return executions
    noted = pl.col("execution_run_id").replace_strict(notes, default=None, return_dtype=pl.String)
    return executions.with_columns(pl.coalesce("worker_log", noted).alias("worker_log"))
