"""A run's steps as an indented tree by their dependencies: pure, no I/O.

Each step hangs under the newest step it reads from (a step reading several hangs under the
last of them, so a diamond's join sits below its longest branch); steps reading from nothing
in the run are roots. Every step appears once, children in step-number order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from stemma.core.live import StepState

if TYPE_CHECKING:
    # An annotation only: the runs list's first frame needs no execution records.
    from stemma.core.execution_records import StepEvent


@dataclass(frozen=True, kw_only=True)
class TreeRow:
    """One step in tree order, with how deep it is drawn."""

    step: StepState
    depth: int
    """0 for a root; a child is one deeper than the step it hangs under."""
    last: bool
    """Whether it is the last child of its parent (drawn ``└`` rather than ``├``)."""


def step_tree(steps: Sequence[StepState]) -> list[TreeRow]:
    """``steps`` in depth-first tree order (cycles and unknown upstreams make roots)."""
    known = {step.number for step in steps}
    children: dict[int | None, list[StepState]] = {}
    for step in sorted(steps, key=lambda s: s.number):
        parents = [n for n in step.upstream if n in known and n < step.number]
        children.setdefault(max(parents) if parents else None, []).append(step)
    rows: list[TreeRow] = []

    def visit(parent: int | None, depth: int) -> None:
        below = children.get(parent, [])
        for index, step in enumerate(below):
            rows.append(TreeRow(step=step, depth=depth, last=index == len(below) - 1))
            visit(step.number, depth + 1)

    visit(None, 0)
    return rows


def tree_label(row: TreeRow, width: int | None = None) -> str:
    """The step's name indented by its depth: ``  └ metrics``.

    Args:
        row: the step in the tree.
        width: the room for the label, if limited: the name then loses its leading dotted
            parts first (``└ …transform``), since the last ones tell steps apart; a last part
            too long alone is cut at its end too. The indent always stays.
    """
    indent = "" if row.depth == 0 else "  " * (row.depth - 1) + ("└ " if row.last else "├ ")
    name = row.step.name
    if width is None or len(indent) + len(name) <= width:
        return indent + name
    return indent + short_name(name, max(1, width - len(indent)))


def short_name(name: str, width: int) -> str:
    """``name`` in ``width`` columns, keeping its last dotted parts: ``…slow_copy``."""
    if len(name) <= width:
        return name
    parts = name.split(".")
    while len(parts) > 1:
        parts = parts[1:]
        tail = "…" + ".".join(parts)
        if len(tail) <= width:
            return tail
    last = parts[0] if name == parts[0] else "…" + parts[0]
    return last[: max(0, width - 1)] + "…"


def upstream_from_events(events: Iterable[StepEvent]) -> dict[int, tuple[int, ...]]:
    """Per step number, the steps it read from, from the ``inputs`` its events recorded.

    A step's event metadata maps each input role to ``{"role": …, "step": N}`` when the input
    is another step's output (literal ids and files have no step).
    """
    found: dict[int, tuple[int, ...]] = {}
    for event in events:
        inputs = event.metadata.get("inputs")
        if not isinstance(inputs, Mapping):
            continue
        numbers: set[int] = set()
        for source in inputs.values():  # pyright: ignore[reportUnknownVariableType]
            if isinstance(source, Mapping) and isinstance(source.get("step"), int):  # pyright: ignore[reportUnknownMemberType]
                numbers.add(int(source["step"]))  # pyright: ignore[reportUnknownArgumentType]
        found[event.step_number] = tuple(sorted(numbers))
    return found


def with_upstream(
    steps: Iterable[StepState], upstream: Mapping[int, tuple[int, ...]]
) -> tuple[StepState, ...]:
    """``steps`` with their upstream filled from history where the state did not carry it."""
    return tuple(
        replace(step, upstream=upstream.get(step.number, ())) if not step.upstream else step
        for step in steps
    )
