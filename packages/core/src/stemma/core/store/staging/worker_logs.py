"""A scheduler's worker log, noted beside a staged bundle and committed with its executions.

A SLURM element's stdout and stderr are complete only once the element has ended, after its
worker staged the bundle. So the orchestrator writes them next to the bundle
(``worker_log.json``: each log with the executions it belongs to) before it commits, and
whoever reads the bundle for a commit fills ``executions.worker_log`` from it where the worker
left it empty. The note moves with the bundle directory (wave claims and quarantine rename
whole directories), so a recovery after a crash commits the same log; a bundle committed before
its note was written simply has none. The same file in every store's bundles.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import cast

WORKER_LOG_FILE = "worker_log.json"
"""The note's name inside a bundle directory."""


def note_worker_log(bundle: Path, execution_run_ids: Sequence[str], log: str) -> None:
    """Write ``log`` as the worker log of these executions of ``bundle`` (atomically).

    A second note for the same bundle (a pack staged unit by unit shares one element) adds its
    executions; the newest text wins for an execution noted twice.

    Raises:
        OSError: the bundle directory is gone (already committed) or not writable.
    """
    notes = read_worker_logs([bundle])
    notes.update(dict.fromkeys(execution_run_ids, log))
    temporary = bundle / f".{WORKER_LOG_FILE}.{os.getpid()}.tmp"
    temporary.write_text(json.dumps(_grouped(notes)), encoding="utf-8")
    os.replace(temporary, bundle / WORKER_LOG_FILE)


def read_worker_logs(bundles: Iterable[Path]) -> dict[str, str]:
    """Per execution run id, the worker log noted beside any of ``bundles``.

    An unreadable note is ignored: a log is a diagnosis aid, never a reason to refuse a commit.
    """
    notes: dict[str, str] = {}
    for bundle in bundles:
        try:
            groups = cast(
                "list[dict[str, object]]", json.loads((bundle / WORKER_LOG_FILE).read_text())
            )
            for group in groups:
                log, ids = group["log"], group["execution_run_ids"]
                if isinstance(log, str) and isinstance(ids, list):
                    notes.update(dict.fromkeys((str(i) for i in cast("list[object]", ids)), log))
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            continue
    return notes


def _grouped(notes: dict[str, str]) -> list[dict[str, object]]:
    """One entry per distinct log, so a pack of 100 units stores its element's log once."""
    by_log: dict[str, list[str]] = {}
    for execution_run_id, log in notes.items():
        by_log.setdefault(log, []).append(execution_run_id)
    return [{"log": log, "execution_run_ids": ids} for log, ids in by_log.items()]
