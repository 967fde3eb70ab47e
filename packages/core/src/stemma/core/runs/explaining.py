"""Why a step ran or hit, from history: its newest attempt's key against the one before.

Every step keeps its params and upstream keys in the steps event log; the field-level diff is
:func:`stemma.core.graph.explain.config_diff`, the same one the lazy runner uses. Upstream steps
are matched by name between the two attempts, and an upstream whose key changed is explained in
turn, from its own recorded attempts under those two keys.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from stemma.core.execution_records import StepEvent
from stemma.core.graph.explain import field_changes, key_components, step_names, upstream_changes
from stemma.core.records import StepStatus

UPSTREAM_DEPTH = 4
"""Upstream levels explained under a step (deeper ones are only named)."""
MAX_LINES = 40
"""Lines of changes said at most, the rest counted."""
_INDENT = "  "


def explain_step(events: Sequence[StepEvent], step: str, run_id: str | None = None) -> list[str]:
    """Lines saying why the newest attempt of ``step`` (in ``run_id``) ran or hit.

    ``step`` is a step's name, or its number in ``run_id`` (numbers are per run). ``events`` is
    the history the answer comes from: the step's events, and those of its upstream steps to say
    what changed in them.

    Raises:
        LookupError: no finished attempt of that step, or no step of that number in the run.
        ValueError: a step number without a run.
    """
    name = _step_name(events, step, run_id)
    finished = [
        e
        for e in sorted(events, key=lambda e: e.timestamp)
        if e.step_name == name and e.status is not StepStatus.RUNNING
    ]
    candidates = [e for e in finished if run_id is None or e.pipeline_run_id == run_id]
    if not candidates:
        raise LookupError(f"no finished attempt of step {name!r}")
    this = candidates[-1]
    head = (
        f"step {name} in {this.pipeline_run_id} ({this.status.value}, "
        f"fingerprint {this.step_spec_id[:8]})"
    )
    if this.metadata.get("cache") == "step":
        source = str(this.metadata.get("outputs_from", ""))[:8]
        return [head, f"hit: same key as an earlier completed attempt (step run {source})"]
    earlier = [
        e
        for e in finished
        if e.timestamp < this.timestamp and e.status is StepStatus.COMPLETED and e is not this
    ]
    if not earlier:
        return [head, "ran: new, no earlier completed attempt of this step"]
    same = [e for e in earlier if e.step_spec_id == this.step_spec_id]
    if same:
        last = same[-1]
        why = (
            "the earlier attempt had failures (the all_succeeded cache policy reruns it)"
            if last.failed_count
            else "the cache was skipped, or its upstream steps ran again"
        )
        return [head, f"ran with the same key as {last.pipeline_run_id}: {why}"]
    previous = earlier[-1]
    changes = _Explainer(events).changes(previous, this)
    if len(changes) > MAX_LINES:
        hidden = len(changes) - MAX_LINES
        changes = [*changes[:MAX_LINES], f"… and {hidden} more line{'s' if hidden > 1 else ''}"]
    when = f"{previous.timestamp:%Y-%m-%d %H:%M:%S}"
    return [
        head,
        f"ran: key changed since {previous.pipeline_run_id} ({when}, {previous.step_spec_id[:8]}):",
        *(_INDENT + line for line in changes or ["(identical components: the upstream changed)"]),
    ]


def _step_name(events: Sequence[StepEvent], step: str, run_id: str | None) -> str:
    """The name of the step ``step`` says: itself, or the name of that step number in the run."""
    if not step.isdigit() or any(e.step_name == step for e in events):
        return step
    if run_id is None:
        raise ValueError(
            f"{step} is a step number: give the run too (--run RUN: numbers are per run), "
            "or the step's name"
        )
    steps = {e.step_number: e.step_name for e in events if e.pipeline_run_id == run_id}
    if int(step) not in steps:
        listed = ", ".join(f"{n} {steps[n]}" for n in sorted(steps)) or "none recorded"
        raise LookupError(f"run {run_id} has no step {step} (its steps: {listed})")
    return steps[int(step)]


def _by_key(events: Sequence[StepEvent]) -> dict[str, list[StepEvent]]:
    keyed: dict[str, list[StepEvent]] = {}
    for event in events:
        keyed.setdefault(event.step_spec_id, []).append(event)
    return keyed


@dataclass
class _Explainer:
    """Says what changed between two attempts, and in their upstream steps, recursively."""

    events: Sequence[StepEvent]
    names: Mapping[str, str] = field(init=False)
    by_key: Mapping[str, list[StepEvent]] = field(init=False)
    said: set[tuple[str, str]] = field(init=False, default_factory=set[tuple[str, str]])
    """The upstream key changes explained already (said once, then referred to)."""

    def __post_init__(self) -> None:
        self.names = step_names(self.events)
        self.by_key = _by_key(self.events)

    def changes(self, old: StepEvent, new: StepEvent, depth: int = 0) -> list[str]:
        before, after = key_components(old, self.names), key_components(new, self.names)
        lines = field_changes(before, after)
        for change in upstream_changes(before, after):
            if change.before is None or change.after is None:
                lines.append(change.line)
                continue
            pair = (change.before, change.after)
            if pair in self.said:
                lines.append(f"{change.line}: as above")
                continue
            self.said.add(pair)
            was, now = self._attempt(change.before), self._attempt(change.after)
            if was is None or now is None:
                lines.append(f"{change.line}: its attempts are not in the history")
            elif depth + 1 >= UPSTREAM_DEPTH:
                lines.append(f"{change.line}: `stemma explain {change.name}` says why")
            else:
                inner = self.changes(was, now, depth + 1)
                lines.append(f"{change.line}:" if inner else change.line)
                lines.extend(_INDENT + line for line in inner)
        return lines

    def _attempt(self, key: str) -> StepEvent | None:
        """The newest finished attempt recorded under ``key`` (a completed one if any)."""
        finished = [e for e in self.by_key.get(key, ()) if e.status is not StepStatus.RUNNING]
        completed = [e for e in finished if e.status is StepStatus.COMPLETED]
        newest = sorted(completed or finished, key=lambda e: e.timestamp)
        return newest[-1] if newest else None
