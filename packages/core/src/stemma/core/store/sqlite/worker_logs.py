"""A scheduler's worker log, noted beside a staged bundle and committed with its executions.

A SLURM element's stdout and stderr are complete only once the element has ended, after its
worker staged the bundle, so the orchestrator writes them next to the bundle
(``worker_log.json``: each log with the executions it belongs to, the Delta store's format)
before it commits, and the commit fills ``executions.worker_log`` from it where the worker left
it empty. The note moves with the bundle (quarantine renames the whole directory).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import cast

WORKER_LOG_FILE = "worker_log.json"
"""The note's name inside a bundle directory."""


def note_worker_log(bundle: Path, execution_run_ids: Sequence[str], log: str) -> None:
    """Write ``log`` as the worker log of these executions of ``bundle`` (atomically).

    A second note for the same bundle adds its executions; the newest text wins for an
    execution noted twice.

    Raises:
        OSError: the bundle directory is gone (already committed) or not writable.
    """
    notes = read_worker_logs(bundle)
    notes.update(dict.fromkeys(execution_run_ids, log))
    by_log: dict[str, list[str]] = {}
    for execution_run_id, text in notes.items():
        by_log.setdefault(text, []).append(execution_run_id)
    grouped = [{"log": text, "execution_run_ids": ids} for text, ids in by_log.items()]
    temporary = bundle / f".{WORKER_LOG_FILE}.{os.getpid()}.tmp"
    temporary.write_text(json.dumps(grouped), encoding="utf-8")
    os.replace(temporary, bundle / WORKER_LOG_FILE)


def read_worker_logs(bundle: Path) -> dict[str, str]:
    """Per execution run id, the worker log noted beside ``bundle``.

    An unreadable note is ignored: a log is a diagnosis aid, never a reason to refuse a commit.
    """
    notes: dict[str, str] = {}
    try:
        groups = cast("list[dict[str, object]]", json.loads((bundle / WORKER_LOG_FILE).read_text()))
        for group in groups:
            log, ids = group["log"], group["execution_run_ids"]
            if isinstance(log, str) and isinstance(ids, list):
                notes.update(dict.fromkeys((str(i) for i in cast("list[object]", ids)), log))
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return notes
    return notes
