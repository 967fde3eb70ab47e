"""The Delta store as a worker opens it: staging without deltalake or pyarrow.

Staging writes polars frames as Parquet and never touches a Delta table (see
:mod:`stemma.storage.staging`), so a worker that only runs and stages its units needs neither
deltalake nor pyarrow: together a quarter of its start-up imports. Reads (a unit's inputs, a
curator's lineage walk) open the full :class:`~stemma.storage.delta_store.DeltaStore` on first
use, importing them then.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stemma.core.execution_records import ExecutionRecord
from stemma.core.store.locations import RootLayout, resolve_root
from stemma.storage import output_mirror
from stemma.storage.staging import stage_executions

if TYPE_CHECKING:
    from stemma.core.operations.drafts import FinalizedArtifact
    from stemma.storage.delta_store import DeltaStore


class DeltaWorkerStore(output_mirror.KeepsOutputs):
    """What a worker opens for ``delta`` (``stemma.worker_stores``): it stages, it never commits.

    Every read of :class:`~stemma.storage.delta_store.DeltaStore` is answered, by that store
    opened on the same root the first time one is asked (a curator's ``store``).
    """

    kind = "delta"

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self._layout = RootLayout(resolve_root(root))

    def __repr__(self) -> str:
        return f"DeltaWorkerStore({str(self._layout.root)!r})"

    @property
    def layout(self) -> RootLayout:
        """The directories under this store's root."""
        return self._layout

    def stage_execution(self, record: ExecutionRecord) -> Path:
        """Write one unit's bundle under ``staging/`` and return it."""
        return stage_executions(self._layout, [record])

    def stage_executions(self, records: Sequence[ExecutionRecord]) -> Path:
        """Write one bundle for a worker's pack of units of one step, and return it."""
        return stage_executions(self._layout, records)

    def load_artifacts(
        self, artifact_ids: Collection[str], *, content: bool = True
    ) -> dict[str, FinalizedArtifact]:
        """Artifacts from each type's table (content column unread if not ``content``)."""
        return self._full.load_artifacts(artifact_ids, content=content)

    def load_contents(self, rows: Mapping[str, FinalizedArtifact]) -> dict[str, FinalizedArtifact]:
        """``rows`` (read without content) with their contents: a large one's from its file alone.

        A unit's worker is given its inputs' rows by the orchestrator; the contents kept as
        files (:mod:`stemma.storage.content_files`) are read from them with no table opened (no
        deltalake, no pyarrow), the others (and a large one an older stemma kept in its table)
        from their tables' content columns alone.
        """
        from stemma.storage.content_files import LARGE_CONTENT_BYTES, read_kept

        large = [i for i, row in rows.items() if row.size >= LARGE_CONTENT_BYTES and _kept(row)]
        found = {
            i: dataclasses.replace(rows[i], content=content)
            for i, content in read_kept(self._layout, large).items()
        }
        rest = {i: row for i, row in rows.items() if i not in found}
        return {**found, **(self._full.load_contents(rest) if rest else {})}

    def descendants(
        self, artifact_ids: Collection[str], artifact_type: str | None = None
    ) -> dict[str, frozenset[str]]:
        """Each artifact's descendants (itself excluded), walking lineage down, of one type."""
        return self._full.descendants(artifact_ids, artifact_type)

    def __getattr__(self, name: str) -> Any:
        # Only for names not defined above: the full store's other reads, for user curators.
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._full, name)

    @functools.cached_property
    def _full(self) -> DeltaStore:
        from stemma.storage.delta_store import DeltaStore

        return DeltaStore(self._layout.root)


def _kept(row: FinalizedArtifact) -> bool:
    """Whether ``row``'s type may keep its content in a file (its table known here)."""
    from stemma.core.errors import ArtifactTypeError
    from stemma.storage.artifact_tables import table_for_type
    from stemma.storage.content_files import may_keep_apart

    try:
        return may_keep_apart(table_for_type(row.artifact_type))
    except ArtifactTypeError:  # a user type not registered here: read as any other
        return False
