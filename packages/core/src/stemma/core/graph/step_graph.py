"""Expanding specs into a graph: depth-first, deduplicated by fingerprint, with cycle detection.

Pure: it never touches a store. The runner and the planner both build on it.
"""

from __future__ import annotations

from collections.abc import Container, Iterator

from stemma.core.errors import LoweringError, StepCycleError
from stemma.core.graph.step_spec import StepSpec


def expand(root: StepSpec, seen: dict[str, StepSpec]) -> list[StepSpec]:
    """Return the specs reachable from ``root`` not yet in ``seen``, deps before dependents.

    ``seen`` (fingerprint → spec) is updated, so expanding several roots against one dict
    yields each step once. Iterative, so deep chains never hit the recursion limit.

    Raises:
        StepCycleError: a spec depends on itself, directly or not; the message lists the cycle.
    """
    if root.fingerprint in seen:
        if seen[root.fingerprint].step.fn is not root.step.fn:
            _refuse_two_functions(seen[root.fingerprint], root)
        return []
    new: list[StepSpec] = []
    on_path: dict[str, int] = {}  # fingerprint → index in `path`, for the steps being expanded
    path: list[StepSpec] = []
    iterators: list[Iterator[StepSpec]] = []

    def enter(spec: StepSpec) -> None:
        on_path[spec.fingerprint] = len(path)
        path.append(spec)
        iterators.append(iter(spec.deps))

    enter(root)
    while iterators:
        dep = next(iterators[-1], None)
        if dep is None:
            iterators.pop()
            done = path.pop()
            del on_path[done.fingerprint]
            seen[done.fingerprint] = done
            new.append(done)
        elif dep.fingerprint in on_path:
            cycle = [*path[on_path[dep.fingerprint] :], dep]
            raise StepCycleError(
                "the step graph has a cycle: "
                + " → ".join(f"{s.name}({s.fingerprint[:8]})" for s in cycle)
            )
        elif dep.fingerprint not in seen:
            enter(dep)
        elif seen[dep.fingerprint].step.fn is not dep.step.fn:
            _refuse_two_functions(seen[dep.fingerprint], dep)
    return new


def _refuse_two_functions(first: StepSpec, second: StepSpec) -> None:
    raise LoweringError(
        f"step {first.name!r} (version {first.version!r}) is given two different functions, "
        f"{_qualname(first)} and {_qualname(second)}, with the same inputs: they would share one "
        "key and one result. Give one of them another name or version"
    )


def _qualname(spec: StepSpec) -> str:
    return getattr(spec.step.fn, "__qualname__", repr(spec.step.fn))


def needed(root: StepSpec, is_built: Container[str]) -> list[StepSpec]:
    """The steps that must run for ``root``: walk deps, stopping at steps already built."""
    out: list[StepSpec] = []
    visited: set[str] = set()
    stack = [root]
    while stack:
        spec = stack.pop()
        if spec.fingerprint in visited or spec.fingerprint in is_built:
            continue
        visited.add(spec.fingerprint)
        out.append(spec)
        stack.extend(spec.deps)
    return out
