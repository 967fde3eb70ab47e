"""Lineage over the SQLite store's edges: one indexed query per generation (``lineage_walk``)."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable

from stemma.core.store import lineage_walk
from stemma.core.store.sqlite.connections import Connections


def ancestry(connections: Connections, artifact_ids: Collection[str]) -> dict[str, frozenset[str]]:
    """Each artifact's ancestors, itself included."""
    return lineage_walk.ancestry(_hop(connections), artifact_ids)


def descendants(
    connections: Connections, artifact_ids: Collection[str], artifact_type: str | None = None
) -> dict[str, frozenset[str]]:
    """Each artifact's descendants (of ``artifact_type`` when given), itself excluded."""
    return lineage_walk.descendants(_hop(connections), artifact_ids, artifact_type)


def _hop(connections: Connections) -> lineage_walk.Hop:
    def hop(frontier: list[str], up: bool) -> Iterable[tuple[str, str, str | None]]:
        near, far = ("target", "source") if up else ("source", "target")
        rows = connections.query(
            f"SELECT {near}_artifact_id AS near, {far}_artifact_id AS far, "
            f"{far}_artifact_type AS far_type FROM artifact_edges "
            f"WHERE {near}_artifact_id IN (SELECT value FROM json_each(?)) ORDER BY rowid",
            (json.dumps(frontier),),
        )
        return [(row["near"], row["far"], row["far_type"]) for row in rows]

    return hop
