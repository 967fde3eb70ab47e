"""Run ids: readable for runs, random for attempts. Never part of any key."""

from __future__ import annotations

import datetime as dt
import re
import secrets
import uuid


def new_run_id(name: str) -> str:
    """``{name}_{UTC %Y%m%d_%H%M%S}_{8 hex}``, sortable by time and unique."""
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
