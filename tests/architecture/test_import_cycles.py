"""No import cycle anywhere in the four packages, in-function imports included.

A type-only import (under ``if TYPE_CHECKING:``) is not a cycle: it never runs. Every other
import is, wherever it sits: an import inside a function still ties the two modules together,
and it is how a cycle hides until a refactoring makes it bite at import time. Design note 0008
keeps this promise; this test is what keeps it true.
"""

from __future__ import annotations

import grimp

ALLOWED_CYCLES: frozenset[frozenset[str]] = frozenset(
    {
        # Under `stemma plan`, Pipeline.create returns a DryPipeline, a Pipeline subclass: the
        # one deliberate cycle (an import inside create, taken only in a dry run), documented
        # in docs/design/0008-one-engine.md.
        frozenset({"stemma.core.front.pipeline", "stemma.core.front.dry_pipeline"}),
    }
)
"""Deliberate cycles, each documented in docs/design/0008-one-engine.md."""


def _strongly_connected(graph: grimp.ImportGraph) -> list[set[str]]:
    """Tarjan's strongly connected components of more than one module (iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[set[str]] = []
    counter = 0
    for start in sorted(graph.modules):
        if start in index:
            continue
        work: list[tuple[str, list[str]]] = [
            (start, sorted(graph.find_modules_directly_imported_by(start)))
        ]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            if successors:
                child = successors.pop()
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, sorted(graph.find_modules_directly_imported_by(child))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def _describe(graph: grimp.ImportGraph, component: set[str]) -> str:
    edges = sorted(
        f"  {a} -> {b}"
        for a in component
        for b in graph.find_modules_directly_imported_by(a)
        if b in component
    )
    return "\n".join(edges)


def test_no_import_cycle_in_any_package_in_function_imports_included() -> None:
    # No cache: a test never writes into the checkout (tests/conftest.py checks).
    graph = grimp.build_graph("stemma", exclude_type_checking_imports=True, cache_dir=None)
    cycles = [c for c in _strongly_connected(graph) if frozenset(c) not in ALLOWED_CYCLES]
    assert not cycles, "import cycles (break each, or document it in ALLOWED_CYCLES):\n" + (
        "\n\n".join(_describe(graph, c) for c in cycles)
    )


def test_the_cycle_finder_finds_a_cycle_it_is_shown() -> None:
    # The finder itself must be able to fail: a graph with a known cycle.
    graph = grimp.ImportGraph()
    for module in ("a", "a.b", "a.c", "a.d"):
        graph.add_module(module)
    graph.add_import(importer="a.b", imported="a.c")
    graph.add_import(importer="a.c", imported="a.b")
    graph.add_import(importer="a.c", imported="a.d")
    assert _strongly_connected(graph) == [{"a.b", "a.c"}]
