"""Staging in the SQLite store: the one staging protocol, with this store's bundle format.

A worker's pack is written as one bundle of files (:mod:`~stemma.core.store.staging.writing`)
under ``staging/{step number}_{step name}/{ab}/{cd}/{execution_run_id}/``: the pack's rows as
one JSON document, ``records.json``, and ``sentinel.json`` last
(:mod:`~stemma.core.store.sqlite.bundle_files`). Staging takes no lock and opens no database:
the orchestrator's commit is one transaction, and a bundle is recorded as committed in it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

from stemma.core.execution_records import ExecutionRecord
from stemma.core.store.locations import RootLayout
from stemma.core.store.sqlite.bundle_files import SHAPE, Sentinel, encode_rows
from stemma.core.store.sqlite.execution_rows import staged_rows
from stemma.core.store.staging.bundle_format import BundleFiles
from stemma.core.store.staging.tree import step_dir_name
from stemma.core.store.staging.visibility import BundleShape
from stemma.core.store.staging.writing import stage_bundle

__all__ = ["SQLITE_BUNDLES", "SqliteBundles", "stage_executions", "step_dir_name"]


class SqliteBundles:
    """The SQLite store's bundle format: ``records.json``, then ``sentinel.json``."""

    @property
    def shape(self) -> BundleShape[Sentinel]:
        """``sentinel.json``, which records the records file's size and digest."""
        return SHAPE

    def step_dir(self, step_number: int, step_name: str) -> str:
        """``{number}_{name}``, the name made path-safe."""
        return step_dir_name(step_number, step_name)

    def encode(self, records: Sequence[ExecutionRecord]) -> BundleFiles:
        """The pack's rows of every table, as one JSON document and its sentinel.

        Raises:
            ArtifactTypeError: an artifact's fields or metadata are not plain JSON data.
        """
        return encode_rows(staged_rows(records))

    def writing(self, layout: RootLayout, bundle: Path) -> AbstractContextManager[object]:
        """Nothing: no committer reads a bundle before its sentinel is there."""
        return nullcontext()

    def owns(self, names: Collection[str]) -> bool:
        """Any bundle but the Delta store's (which holds Parquet files)."""
        return not any(name.endswith(".parquet") for name in names)


SQLITE_BUNDLES = SqliteBundles()


def stage_executions(layout: RootLayout, records: Sequence[ExecutionRecord]) -> Path:
    """Write one bundle holding a worker's pack of units; return it.

    Raises:
        ValueError: no records.
        ArtifactTypeError: an artifact's fields or metadata are not plain JSON data.
    """
    return stage_bundle(layout, records, SQLITE_BUNDLES)
