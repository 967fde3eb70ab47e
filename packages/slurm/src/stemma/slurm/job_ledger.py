"""Every job id a run submits, appended to ``{root}/runs/{run_id}/slurm_jobs.jsonl`` at once.

The ledger is what ``stemma reap`` and the dashboard read when the orchestrator is gone: one JSON
line per sbatch call, written and flushed before the call's jobs can be forgotten.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from stemma.core.crash_points import crash_point

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

LEDGER_NAME = "slurm_jobs.jsonl"


@dataclass(frozen=True, kw_only=True)
class LedgerEntry:
    """One submitted array (or single job)."""

    job_id: str
    """The array's job id (``123``); its elements are ``123_0``…"""
    job_name: str
    step_number: int
    elements: int
    log_dir: str
    submitted_at: str
    """UTC, ISO 8601."""
    keys: tuple[tuple[str, ...], ...] = ()
    """Per element, in index order, the execution keys of the units it computes (empty in
    ledgers written before they were recorded, or for work that has none)."""


def store_root(log_dir: Path) -> Path | None:
    """The root of a ``{root}/logs/slurm/{run_id}`` log directory; None if not that shape."""
    if log_dir.parent.name == "slurm" and log_dir.parent.parent.name == "logs":
        return log_dir.parent.parent.parent
    return None


def ledger_path(log_dir: Path, run_id: str, name: str = LEDGER_NAME) -> Path:
    """``{root}/runs/{run_id}/{name}``; beside the logs if they are not in a store."""
    root = store_root(log_dir)
    if root is None:
        return log_dir / name
    return root / "runs" / run_id / name


class JobLedger:
    """Appends submitted jobs to a run's ledger, one flushed and synced line per array.

    (Or per ``srun`` step, to an srun ledger: ``intra_ledger``.)
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def record(self, path: Path, entry: DataclassInstance) -> None:
        """Append ``entry`` to ``path`` (created with its directories).

        ``entry``: a ``LedgerEntry``, or any dataclass of JSON fields (``intra_ledger``).
        """
        line = json.dumps(dataclasses.asdict(entry), sort_keys=True) + "\n"
        with self._lock:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8") as handle:
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())
        crash_point("slurm.ledger")


def read_ledger(path: Path) -> Iterator[LedgerEntry]:
    """The entries of a ledger; a torn last line (a crash mid-write) is ignored."""
    if not path.exists():
        return
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            fields = json.loads(line)
            keys = tuple(tuple(str(k) for k in element) for element in fields.pop("keys", ()))
            yield LedgerEntry(**fields, keys=keys)
        except (ValueError, TypeError, AttributeError):
            continue


def elements_by_key(path: Path) -> dict[str, str]:
    """Per execution key, the element (``{array}_{index}``) last submitted to compute it.

    A key submitted again (a rerun after a failure) maps to its newest element. A ledger that
    is missing or garbled gives what its readable lines say: nothing, at worst.
    """
    found: dict[str, str] = {}
    for entry in read_ledger(path):
        for index, keys in enumerate(entry.keys):
            element = entry.job_id if entry.elements == 1 else f"{entry.job_id}_{index}"
            for key in keys:
                found[key] = element
    return found


def now_iso() -> str:
    """The current UTC time, ISO 8601."""
    return dt.datetime.now(dt.UTC).isoformat()
