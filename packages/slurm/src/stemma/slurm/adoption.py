"""Finding the elements a dead run left on the cluster that a rerun can wait for.

When a run's orchestrator dies (SSH dropped, login node rebooted, ``kill -9``), its array
elements go on running: each computes the units whose execution keys the run's ledger lists for
it (``job_ledger``). A rerun that misses the cache for those keys waits for the elements instead
of submitting the keys again, and commits what they stage.

An element is adoptable when:

- its run's orchestrator is gone (the run reads ``stale``: not one that is alive, settled or
  reaped), or it is an earlier life of this same run (``Pipeline.resume``);
- every key it computes is one the rerun wants (a key the cache answered, or one another
  element is adopted for, would be committed twice);
- the scheduler still holds it (pending or running: one ``squeue`` call for all of them), or it
  finished and left its result file after the rerun's recovery looked (what it staged is not
  committed yet).

An element that ended without a result (it failed or was killed while nobody watched) is not
adopted: its keys are submitted again, as any miss is. A ledger that is missing or garbled
reads as nothing to adopt.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from stemma.core.live import RunStatus, read_state
from stemma.slurm import commands
from stemma.slurm.job_ledger import LEDGER_NAME, LedgerEntry, read_ledger
from stemma.slurm.job_states import Phase, array_id, parse_sacct


@dataclass(frozen=True, kw_only=True)
class Orphan:
    """One element of a dead run's array that computes only keys a rerun wants."""

    job_id: str
    """``123_4`` (or ``123`` for an array of one)."""
    keys: tuple[str, ...]
    """The execution keys of its units, in the order its result lists their outcomes."""
    run_id: str
    """The run that submitted it."""
    entry: LedgerEntry
    """Its array's ledger line."""
    index: int
    """Its index in the array."""

    @property
    def result(self) -> Path:
        """Where submitit writes its outcome (see ``SlurmBackend._future``)."""
        return Path(self.entry.log_dir) / f"{self.job_id}_0_result.pkl"


def find_orphans(
    root: Path,
    wanted: Collection[str],
    *,
    run_id: str,
    own: Collection[str] = (),
    finished_since: float = 0.0,
) -> list[Orphan]:
    """The elements under ``root`` that a run ``run_id`` missing ``wanted`` can wait for.

    Args:
        root: the store root (runs' ledgers are ``{root}/runs/{run}/slurm_jobs.jsonl``).
        wanted: the execution keys the run missed in the cache.
        run_id: the run asking; its own ledger counts only for arrays it did not submit in
            this life (``own``): those are an earlier orchestrator's of a resumed run.
        own: the arrays this orchestrator submitted itself, and the elements it adopted.
        finished_since: a finished element counts only if its result is at least this recent
            (a Unix time: the asking run's recovery). One that finished before had what it
            staged committed by that recovery: a failed unit of it is tried again, not adopted
            with its old failure.

    Raises:
        ClusterUnavailableError: squeue does not answer.
    """
    if not wanted:
        return []
    candidates = list(_candidates(root, wanted, run_id, set(own)))
    if not candidates:
        return []
    live = parse_sacct(commands.squeue_lines({array_id(o.job_id) for o in candidates}))
    return _newest_per_key(
        orphan
        for orphan in candidates
        if (orphan.job_id in live and live[orphan.job_id].phase is not Phase.ENDED)
        or _finished_since(orphan.result, finished_since)
    )


def _finished_since(result: Path, since: float) -> bool:
    try:
        return result.stat().st_mtime >= since
    except OSError:
        return False


def _candidates(
    root: Path, wanted: Collection[str], run_id: str, own: set[str]
) -> Iterator[Orphan]:
    runs = root / "runs"
    try:
        folders = sorted(runs.iterdir()) if runs.is_dir() else []
    except OSError:
        return
    for folder in folders:
        ledger = folder / LEDGER_NAME
        if not ledger.is_file() or not (folder.name == run_id or _orchestrator_gone(root, folder)):
            continue
        for entry in read_ledger(ledger):
            if entry.job_id in own:
                continue
            for index, keys in enumerate(entry.keys):
                element = entry.job_id if entry.elements == 1 else f"{entry.job_id}_{index}"
                if element not in own and keys and all(key in wanted for key in keys):
                    yield Orphan(
                        job_id=element, keys=keys, run_id=folder.name, entry=entry, index=index
                    )


def _orchestrator_gone(root: Path, folder: Path) -> bool:
    """Whether the run of ``folder`` reads stale: its orchestrator died and nobody settled it."""
    try:
        return read_state(root, folder.name).status is RunStatus.STALE
    except (OSError, ValueError):
        return False  # no readable state: not a run we can tell is dead


def _newest_per_key(orphans: Iterable[Orphan]) -> list[Orphan]:
    """One element per key, the newest submitted.

    An element sharing a key with a newer one is dropped whole: its outcome would commit that
    key a second time.
    """
    found = sorted(orphans, key=lambda o: (o.entry.submitted_at, o.job_id), reverse=True)
    claimed: set[str] = set()
    kept: list[Orphan] = []
    for orphan in found:
        if claimed.isdisjoint(orphan.keys):
            kept.append(orphan)
        claimed.update(orphan.keys)
    return kept


def adopted_entry(orphans: list[Orphan], entry: LedgerEntry) -> LedgerEntry:
    """``entry`` as the adopting run's ledger records it: only the adopted elements' keys.

    A third run then finds them under the run that waits for them now (if that one dies too).
    """
    adopted = {o.index: o.keys for o in orphans if o.entry is entry}
    keys = tuple(adopted.get(index, ()) for index in range(entry.elements))
    return LedgerEntry(
        job_id=entry.job_id,
        job_name=entry.job_name,
        step_number=entry.step_number,
        elements=entry.elements,
        log_dir=entry.log_dir,
        submitted_at=entry.submitted_at,
        keys=keys,
    )
