"""Walking lineage edges up (ancestry) and down (descendants), a generation per query.

One indexed query of ``artifact_edges`` per generation, for the whole frontier at once, then an
in-memory walk per start, as the Delta store does: a thousand artifacts three generations deep
cost three queries, not three thousand.
"""

from __future__ import annotations

import json
from collections.abc import Collection

from stemma.core.sqlite_store.connections import Connections


def ancestry(connections: Connections, artifact_ids: Collection[str]) -> dict[str, frozenset[str]]:
    """Each artifact's ancestors, itself included."""
    reached, _ = _walk(connections, artifact_ids, up=True)
    return {i: reached[i] | {i} for i in artifact_ids}


def descendants(
    connections: Connections, artifact_ids: Collection[str], artifact_type: str | None = None
) -> dict[str, frozenset[str]]:
    """Each artifact's descendants, itself excluded.

    With ``artifact_type``, only descendants of that type are returned, but the walk still goes
    through every type (a metric computed from a transformed dataset is found from the raw one).
    """
    reached, types = _walk(connections, artifact_ids, up=False)
    if artifact_type is None:
        return reached
    return {
        i: frozenset(d for d in found if types.get(d) == artifact_type)
        for i, found in reached.items()
    }


def _walk(
    connections: Connections, artifact_ids: Collection[str], *, up: bool
) -> tuple[dict[str, frozenset[str]], dict[str, str | None]]:
    """Everything reachable from each artifact along lineage edges (itself excluded).

    Returns the reached sets and the type of every reached artifact, as its edges record it.
    """
    near, far = ("target", "source") if up else ("source", "target")
    links: dict[str, set[str]] = {}
    types: dict[str, str | None] = {}
    seen: set[str] = set(artifact_ids)
    frontier = sorted(seen)
    while frontier:
        hop = connections.query(
            f"SELECT {near}_artifact_id AS near, {far}_artifact_id AS far, "
            f"{far}_artifact_type AS far_type FROM artifact_edges "
            f"WHERE {near}_artifact_id IN (SELECT value FROM json_each(?)) ORDER BY rowid",
            (json.dumps(frontier),),
        )
        reached: set[str] = set()
        for edge in hop:
            links.setdefault(edge["near"], set()).add(edge["far"])
            types[edge["far"]] = edge["far_type"]
            reached.add(edge["far"])
        frontier = sorted(reached - seen)
        seen |= reached
    result: dict[str, frozenset[str]] = {}
    for artifact_id in artifact_ids:
        found: set[str] = set()
        stack = [artifact_id]
        while stack:
            for nxt in links.get(stack.pop(), ()):
                if nxt not in found and nxt != artifact_id:
                    found.add(nxt)
                    stack.append(nxt)
        result[artifact_id] = frozenset(found)
    return result, types
