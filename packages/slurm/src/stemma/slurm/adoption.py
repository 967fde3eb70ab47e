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

from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from stemma.core.backends.base import WaveRequest
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
    def submitted_at(self) -> str:
        """When its array was submitted."""
        return self.entry.submitted_at

    @property
    def result(self) -> Path:
        """Where submitit writes its outcome (see ``SlurmBackend._future``)."""
        return Path(self.entry.log_dir) / f"{self.job_id}_0_result.pkl"


class Adoptable(Protocol):
    """What the adoption rules read of a candidate: an array element, or an ``srun`` step."""

    @property
    def job_id(self) -> str:
        """The scheduler's id for it, unique among the candidates."""
        ...

    @property
    def keys(self) -> tuple[str, ...]:
        """The execution keys it computes."""
        ...

    @property
    def submitted_at(self) -> str:
        """When it was sent (UTC, ISO 8601): the newest wins a key."""
        ...

    @property
    def result(self) -> Path:
        """The file it writes its outcome to."""
        ...


_A = TypeVar("_A", bound=Adoptable)


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
    return keep_adoptable(
        candidates,
        alive=lambda o: o.job_id in live and live[o.job_id].phase is not Phase.ENDED,
        finished_since=finished_since,
    )


def keep_adoptable(
    candidates: Iterable[_A], *, alive: Callable[[_A], bool], finished_since: float
) -> list[_A]:
    """The candidates still running or finished since ``finished_since``, newest per key.

    The rules of :func:`find_orphans`, for any kind of candidate.
    """
    return _newest_per_key(
        c for c in candidates if alive(c) or _finished_since(c.result, finished_since)
    )


def computes_only(candidate: Adoptable, wanted: Collection[str], own: Collection[str]) -> bool:
    """Whether ``candidate`` is not the asking orchestrator's and computes only ``wanted`` keys."""
    keys = candidate.keys
    return candidate.job_id not in own and bool(keys) and all(key in wanted for key in keys)


CLOCK_ALLOWANCE_SECONDS = 5.0
"""How much earlier than the rerun's recovery a result file may be dated and still count as
finished after it: its mtime is the file server's or node's clock, the recovery time the login
node's. Erring early costs little (a failed unit of an element that finished just before the
recovery is adopted with its failure once); erring late leaves what the element staged
uncommitted while the rerun computes its units again."""


def recovery_time(request: WaveRequest, opened_at: float) -> float:
    """From when a dead run's finished element counts as adoptable for a run sending ``request``.

    The run's recovery time, as its waves carry it (else when the backend opened, which a run
    that does not say does after its recovery), less ``CLOCK_ALLOWANCE_SECONDS``.
    """
    return (request.recovered_at or opened_at) - CLOCK_ALLOWANCE_SECONDS


def _finished_since(result: Path, since: float) -> bool:
    try:
        return result.stat().st_mtime >= since
    except OSError:
        return False


def ledgers_to_search(root: Path, name: str, run_id: str) -> Iterator[Path]:
    """The ledgers named ``name`` of runs whose orchestrator is gone, and of ``run_id``.

    ``run_id``'s own ledger is an earlier life's, for a resumed run. In run order.
    """
    runs = root / "runs"
    try:
        folders = sorted(runs.iterdir()) if runs.is_dir() else []
    except OSError:
        return
    for folder in folders:
        ledger = folder / name
        if ledger.is_file() and (folder.name == run_id or _orchestrator_gone(root, folder)):
            yield ledger


def _candidates(
    root: Path, wanted: Collection[str], run_id: str, own: set[str]
) -> Iterator[Orphan]:
    for ledger in ledgers_to_search(root, LEDGER_NAME, run_id):
        for entry in read_ledger(ledger):
            if entry.job_id in own:
                continue
            for index, keys in enumerate(entry.keys):
                element = entry.job_id if entry.elements == 1 else f"{entry.job_id}_{index}"
                orphan = Orphan(
                    job_id=element, keys=keys, run_id=ledger.parent.name, entry=entry, index=index
                )
                if computes_only(orphan, wanted, own):
                    yield orphan


def _orchestrator_gone(root: Path, folder: Path) -> bool:
    """Whether the run of ``folder`` reads stale: its orchestrator died and nobody settled it."""
    try:
        return read_state(root, folder.name).status is RunStatus.STALE
    except (OSError, ValueError):
        return False  # no readable state: not a run we can tell is dead


def _newest_per_key(candidates: Iterable[_A]) -> list[_A]:
    """One candidate per key, the newest submitted.

    A candidate sharing a key with a newer one is dropped whole: its outcome would commit that
    key a second time.
    """
    found = sorted(candidates, key=lambda c: (c.submitted_at, c.job_id), reverse=True)
    claimed: set[str] = set()
    kept: list[_A] = []
    for candidate in found:
        if claimed.isdisjoint(candidate.keys):
            kept.append(candidate)
        claimed.update(candidate.keys)
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
