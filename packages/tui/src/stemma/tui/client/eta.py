"""A running step's ETA from earlier runs of the same step: pure, no I/O.

"The same step" is the same ``step_spec_id`` (same operation, version, params and inputs'
fingerprints), or failing that the same step name and operation: a step whose params changed
usually costs about what it cost before. The pace is the mean, over the earlier completed runs
of the step, of wall seconds per executed unit (cache hits excluded: they cost nothing), so
the ETA is that pace times the units still to finish.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from stemma.core.live import StepState


@dataclass(frozen=True, kw_only=True)
class PaceSample:
    """One earlier completed run of a step, as the steps table recorded it."""

    step_spec_id: str
    step_name: str
    operation: str
    seconds: float
    """The step's wall time, start to commit."""
    units: int
    """The units it executed (its total less its execution-level cache hits)."""


@dataclass(frozen=True, kw_only=True)
class Paces:
    """Mean seconds per executed unit, by step spec and by (step name, operation)."""

    by_spec: Mapping[str, float] = field(default_factory=dict[str, float])
    by_name: Mapping[tuple[str, str], float] = field(default_factory=dict[tuple[str, str], float])


def paces(samples: Iterable[PaceSample]) -> Paces:
    """Average the samples' seconds per unit by spec and by name (samples with no unit skipped)."""
    spec_sums: dict[str, list[float]] = {}
    name_sums: dict[tuple[str, str], list[float]] = {}
    for sample in samples:
        if sample.units <= 0 or sample.seconds < 0:
            continue
        pace = sample.seconds / sample.units
        spec_sums.setdefault(sample.step_spec_id, []).append(pace)
        name_sums.setdefault((sample.step_name, sample.operation), []).append(pace)
    return Paces(
        by_spec={key: sum(v) / len(v) for key, v in spec_sums.items()},
        by_name={key: sum(v) / len(v) for key, v in name_sums.items()},
    )


def history_eta(step: StepState, spec_id: str | None, known: Paces) -> float | None:
    """Seconds left for a running step at its earlier runs' pace; None without a precedent.

    Args:
        step: the step as the live state shows it.
        spec_id: its ``step_spec_id`` when history knows it (from its ``running`` event).
        known: the paces of earlier runs.
    """
    if step.status != "running" or step.total <= 0:
        return None
    pace = known.by_spec.get(spec_id) if spec_id is not None else None
    if pace is None:
        pace = known.by_name.get((step.name, step.operation))
    if pace is None:
        return None
    return pace * max(0, step.total - step.done)
