"""Run ids: readable for runs, random for attempts. Never part of any key."""

from __future__ import annotations

import datetime as dt
import secrets
import uuid


def new_run_id(name: str) -> str:
    """``{name}_{UTC %Y%m%d_%H%M%S}_{8 hex}``, sortable by time and unique."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d_%H%M%S")
    return f"{name}_{stamp}_{secrets.token_hex(4)}"


def new_attempt_id() -> str:
    """A fresh 32-hex id for one step or execution attempt."""
    return uuid.uuid4().hex
