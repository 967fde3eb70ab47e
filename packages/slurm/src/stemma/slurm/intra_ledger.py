"""The ``srun`` steps a ``slurm-intra`` run starts, by execution key, and those a rerun can adopt.

Each step's keys go to ``{root}/runs/{run_id}/srun_steps.jsonl`` (one flushed and synced line
per step, written once its ``srun`` runs and before the run waits on it): a ledger of its own,
so ``stemma reap`` and the dashboard, which scancel the job ids of ``slurm_jobs.jsonl``, never
take a step for a job.

When only the orchestrator process dies (``kill -9`` of its pid, the OOM killer), its ``srun``
clients live on and their steps run to the end. A rerun inside the same allocation adopts them
by the rules of ``adoption`` (a dead run's or its own earlier life's; every key wanted; newest
per key), alive when ``squeue -s`` still lists the step's name (one call for all of them) or
its result file was written after the rerun's recovery. A step of another allocation is never
adopted: it cannot be watched nor cancelled from here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

from stemma.slurm import commands
from stemma.slurm.adoption import computes_only, keep_adoptable, ledgers_to_search

STEPS_LEDGER = "srun_steps.jsonl"


@dataclass(frozen=True, kw_only=True)
class StepEntry:
    """One ``srun`` step: where it runs, what it computes, where its outcome goes."""

    allocation: str
    """The job id of the allocation it is a step of (``SLURM_JOB_ID``)."""
    step_name: str
    """Its ``--job-name``, unique (``stemma-{run8}-s{N}-{op}-{hex}``): squeue lists it by it."""
    step_number: int
    """The pipeline step its units belong to."""
    result: str
    """The file ``intra_step`` writes its outcome to."""
    log: str
    """Its stdout and stderr."""
    submitted_at: str
    """UTC, ISO 8601."""
    keys: tuple[str, ...]
    """The execution keys of its units, in the order its result lists their outcomes."""


@dataclass(frozen=True, kw_only=True)
class OrphanStep:
    """A step of a dead run that computes only keys a rerun wants."""

    entry: StepEntry
    run_id: str
    """The run whose ledger lists it."""

    @property
    def job_id(self) -> str:
        """Its step name (unique in the allocation)."""
        return self.entry.step_name

    @property
    def keys(self) -> tuple[str, ...]:
        """The execution keys it computes."""
        return self.entry.keys

    @property
    def submitted_at(self) -> str:
        """When its ``srun`` started."""
        return self.entry.submitted_at

    @property
    def result(self) -> Path:
        """Its result file."""
        return Path(self.entry.result)


def read_steps(path: Path) -> Iterator[StepEntry]:
    """The entries of an srun ledger; a missing file, or a garbled or torn line, gives nothing."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return
    for line in text.splitlines():
        try:
            fields = json.loads(line)
            keys = tuple(str(key) for key in fields.pop("keys"))
            yield StepEntry(**fields, keys=keys)
        except (ValueError, TypeError, AttributeError, KeyError):
            continue


def find_orphan_steps(
    root: Path,
    wanted: Collection[str],
    *,
    run_id: str,
    allocation: str,
    own: Collection[str] = (),
    finished_since: float = 0.0,
    listed: Callable[[str], Collection[str]] | None = None,
) -> list[OrphanStep]:
    """The steps of ``allocation`` that a run ``run_id`` missing ``wanted`` can wait for.

    The rules of ``adoption.find_orphans``, read from the srun ledgers under ``root``.

    Args:
        root: the store root.
        wanted: the execution keys the run missed in the cache.
        run_id: the run asking (its own ledger counts for steps not in ``own``).
        allocation: the allocation the asking run is in: only its steps are adopted.
        own: the step names this orchestrator started or adopted itself.
        finished_since: a finished step counts only if its result is at least this recent.
        listed: the step names squeue lists for an allocation (default: ask squeue).

    Raises:
        ClusterUnavailableError: squeue does not answer.
    """
    if not wanted or not allocation:
        return []
    candidates = [
        orphan
        for ledger in ledgers_to_search(root, STEPS_LEDGER, run_id)
        for entry in read_steps(ledger)
        if entry.allocation == allocation
        for orphan in [OrphanStep(entry=entry, run_id=ledger.parent.name)]
        if computes_only(orphan, wanted, own)
    ]
    if not candidates:
        return []
    names = set((listed or listed_steps)(allocation))
    return keep_adoptable(
        candidates, alive=lambda step: step.job_id in names, finished_since=finished_since
    )


def listed_steps(allocation: str) -> set[str]:
    """The names of the steps squeue lists in ``allocation`` (pending steps included).

    Raises:
        ClusterUnavailableError: squeue does not answer.
    """
    out = commands.run_slurm(["squeue", "-h", "-s", "-j", allocation, "-o", "%j"])
    return {line.strip() for line in out.splitlines() if line.strip()}
