"""Staging in the SQLite store: the one staging protocol, with this store's bundle format.

A worker's pack is written as one bundle (:mod:`~stemma.core.store.staging.writing`): its rows
as one JSON document, ``records.json``, then ``sentinel.json``
(:mod:`~stemma.core.store.sqlite.bundle_files`). Staging takes no lock and opens no database:
the orchestrator's commit is one transaction, which records the bundle as committed.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from contextlib import nullcontext
from pathlib import Path

from stemma.core.execution_records import ExecutionRecord
from stemma.core.store.locations import RootLayout
from stemma.core.store.sqlite.bundle_files import SHAPE, Sentinel, encode_rows
from stemma.core.store.sqlite.execution_rows import staged_rows
from stemma.core.store.staging.bundle_format import BundleFormat
from stemma.core.store.staging.tree import step_dir_name
from stemma.core.store.staging.writing import stage_bundle

__all__ = ["SQLITE_BUNDLES", "stage_executions", "step_dir_name"]


def _not_delta(names: Collection[str]) -> bool:
    return not any(name.endswith(".parquet") for name in names)


SQLITE_BUNDLES = BundleFormat[Sentinel](
    shape=SHAPE,
    step_dir=step_dir_name,
    encode=lambda records: encode_rows(staged_rows(records)),
    writing=lambda _layout, _bundle: nullcontext(),
    owns=_not_delta,
)
"""This store's bundles: ``{number}_{safe name}`` step directories, no lock while staging, every
bundle but the Delta store's (which holds Parquet files) recovered."""


def stage_executions(layout: RootLayout, records: Sequence[ExecutionRecord]) -> Path:
    """Write one bundle holding a worker's pack of units; return it.

    Raises:
        ValueError: no records.
        ArtifactTypeError: an artifact's fields or metadata are not plain JSON data.
    """
    return stage_bundle(layout, records, SQLITE_BUNDLES)
