"""Walking lineage edges up (ancestry) and down (descendants), a generation per read.

Every store walks the same way; only how it reads one generation of edges differs (a Delta
scan, an SQL query), so a store hands :func:`ancestry` and :func:`descendants` its ``hop``: one
read of the edges leaving a whole frontier, then an in-memory walk per start. A thousand
artifacts three generations deep cost three reads, not three thousand.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable

Hop = Callable[[list[str], bool], Iterable[tuple[str, str, str | None]]]
"""``hop(frontier, up)``: every edge leaving ``frontier`` (upward: to its sources; downward: to
its targets), as ``(near id, far id, far artifact type)``."""


def ancestry(hop: Hop, artifact_ids: Collection[str]) -> dict[str, frozenset[str]]:
    """Each artifact's ancestors, itself included."""
    reached, _ = _walk(hop, artifact_ids, up=True)
    return {i: reached[i] | {i} for i in artifact_ids}


def descendants(
    hop: Hop, artifact_ids: Collection[str], artifact_type: str | None = None
) -> dict[str, frozenset[str]]:
    """Each artifact's descendants, itself excluded.

    With ``artifact_type``, only descendants of that type are returned, but the walk still goes
    through every type (a metric computed from a transformed dataset is found from the raw one).
    """
    reached, types = _walk(hop, artifact_ids, up=False)
    if artifact_type is None:
        return reached
    return {
        i: frozenset(d for d in found if types.get(d) == artifact_type)
        for i, found in reached.items()
    }


def _walk(
    hop: Hop, artifact_ids: Collection[str], *, up: bool
) -> tuple[dict[str, frozenset[str]], dict[str, str | None]]:
    """Everything reachable from each artifact along lineage edges (itself excluded).

    Also the type of every reached artifact, as its edges record it.
    """
    links: dict[str, set[str]] = {}
    types: dict[str, str | None] = {}
    seen: set[str] = set(artifact_ids)
    frontier = sorted(seen)
    while frontier:
        reached: set[str] = set()
        for near, far, far_type in hop(frontier, up):
            links.setdefault(near, set()).add(far)
            types[far] = far_type
            reached.add(far)
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
