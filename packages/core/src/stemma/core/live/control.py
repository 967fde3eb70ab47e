"""Control requests to a running pipeline from other processes (``stemma cancel``, the dashboard).

A request is a small JSON file under ``{root}/runs/{run_id}/control/``, written atomically with a
unique name so concurrent requesters never clobber each other. The orchestrator polls the folder
at least once a second and applies the highest level asked for; requests stay on disk as a record
of who asked what.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import uuid
from dataclasses import dataclass
from pathlib import Path

from stemma.core.cancel_levels import CancelLevel
from stemma.core.crash_points import crash_point
from stemma.core.live.state import run_dir, utc_now
from stemma.core.provenance import current_user

CONTROL_DIR = "control"


@dataclass(frozen=True, kw_only=True)
class CancelRequest:
    """One request to cancel a run at a level."""

    level: CancelLevel
    requested_at: str
    requested_by: str
    """``user@host (pid N)`` of the requester, for the record."""
    name: str = ""
    """The request's file name under ``control/`` (unique)."""


def request_cancel(
    root: str | os.PathLike[str], run_id: str, level: int | str | CancelLevel
) -> CancelRequest:
    """Ask the run's orchestrator to cancel at ``level``; it notices within a second.

    Raises:
        ValueError: an unknown level.
        FileNotFoundError: no such run under ``root`` (it never started, or the id is wrong).
    """
    parsed = CancelLevel.parse(level)
    directory = run_dir(root, run_id)
    if not directory.is_dir():
        raise FileNotFoundError(
            f"no run {run_id!r} under {directory.parent}; `stemma runs` lists the runs"
        )
    request = CancelRequest(
        level=parsed,
        requested_at=utc_now(),
        requested_by=f"{current_user()}@{socket.gethostname()} (pid {os.getpid()})",
    )
    control = directory / CONTROL_DIR
    control.mkdir(exist_ok=True)
    name = f"cancel-{uuid.uuid4().hex}.json"
    partial = control / f".{name}.tmp"
    partial.write_text(
        json.dumps(
            {
                "level": int(request.level),
                "requested_at": request.requested_at,
                "requested_by": request.requested_by,
            }
        )
    )
    partial.replace(control / name)
    crash_point("live.control")
    return dataclasses.replace(request, name=name)


def pending_requests(root: str | os.PathLike[str], run_id: str) -> list[CancelRequest]:
    """Every cancel request written for the run, oldest first; unreadable ones are ignored."""
    control = run_dir(root, run_id) / CONTROL_DIR
    found: list[CancelRequest] = []
    paths = list(control.glob("cancel-*.json")) if control.is_dir() else list[Path]()
    for path in paths:
        try:
            data = json.loads(path.read_text())
            found.append(
                CancelRequest(
                    level=CancelLevel.parse(data["level"]),
                    requested_at=str(data["requested_at"]),
                    requested_by=str(data.get("requested_by", "unknown")),
                    name=path.name,
                )
            )
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return sorted(found, key=lambda request: request.requested_at)
