"""Why a step ran or hit, from history: its newest attempt's key against the one before.

The Pipeline's steps keep their params and upstream fingerprints in the steps event log; the
field-level diff is :func:`stemma.core.graph.explain.config_diff`, the same one the lazy runner
uses.
"""

from __future__ import annotations

from collections.abc import Sequence

from stemma.core.execution_records import StepEvent
from stemma.core.graph.explain import config_diff, key_components, said_upstream, step_labels
from stemma.core.records import StepStatus


def explain_step(events: Sequence[StepEvent], name: str, run_id: str | None = None) -> list[str]:
    """Lines saying why the newest attempt of step ``name`` (in ``run_id``) ran or hit.

    Raises:
        LookupError: no finished attempt of that step.
    """
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
    labels = step_labels(events)
    changes = [
        said_upstream(line)
        for line in config_diff(key_components(previous, labels), key_components(this, labels))
    ]
    when = f"{previous.timestamp:%Y-%m-%d %H:%M:%S}"
    return [
        head,
        f"ran: key changed since {previous.pipeline_run_id} ({when}, {previous.step_spec_id[:8]}):",
        *(f"  {line}" for line in changes or ["(identical components: the upstream changed)"]),
    ]
