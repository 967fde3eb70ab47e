"""Run ids: readable for runs, random for attempts. Never part of any key."""

from __future__ import annotations

import datetime as dt
import re
import secrets
import uuid

_PIPELINE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,199}")


def check_pipeline_name(name: str) -> None:
    """Refuse a pipeline name that could not be one path segment of a run id.

    Raises:
        ValueError: naming the bad name and what a name may be.
    """
    if not isinstance(name, str) or not _PIPELINE_NAME.fullmatch(name):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise ValueError(
            f"pipeline name {name!r} is not allowed: use 1-128 letters, digits, '_', '.' or '-', "
            "starting with a letter or digit (for example 'training-sweep')"
        )


def check_run_id(run_id: str) -> None:
    """Refuse a run id that is not one plain path segment (it names a folder under ``runs/``).

    Raises:
        ValueError: naming the bad id.
    """
    if not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise ValueError(
            f"run id {run_id!r} is not a run id; `stemma runs` lists the runs of a root"
        )


def new_run_id(name: str) -> str:
    """``{name}_{UTC %Y%m%d_%H%M%S}_{8 hex}``, sortable by time and unique.

    Raises:
        ValueError: a name that is not allowed (see :func:`check_pipeline_name`).
    """
    check_pipeline_name(name)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d_%H%M%S")
    return f"{name}_{stamp}_{secrets.token_hex(4)}"


def new_attempt_id() -> str:
    """A fresh 32-hex id for one step or execution attempt."""
    return uuid.uuid4().hex


def run_tag(run_id: str) -> str:
    """``stemma-{8 hex}``: the tag every scheduler job of the run carries.

    ``stemma reap`` finds a crashed run's jobs by it.
    """
    return f"stemma-{run_id[-8:]}"


def job_name(run_id: str, step_number: int, label: str) -> str:
    """``stemma-{run8}-s{N}-{label}``, with anything a scheduler may reject replaced by ``_``."""
    return f"{run_tag(run_id)}-s{step_number}-{re.sub(r'[^A-Za-z0-9_.]', '_', label)}"
