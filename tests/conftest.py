"""Checks for the whole suite: no test writes into the checkout.

Every test writes below its own temporary directory. The check compares what git sees in the
checkout (untracked and ignored entries) before and after the session, and fails the session,
naming what appeared, if anything did (a default ``.stemma/`` root, a tool's cache…).
Hypothesis's example database goes to a temporary directory for the same reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[1]
_CACHES = ("__pycache__", ".pytest_cache", ".import_linter_cache")
"""What running Python and pytest themselves leave (not a test's doing)."""

_BEFORE = pytest.StashKey[set[str] | None]()

os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", tempfile.mkdtemp(prefix="hypothesis-"))


def _left_in_checkout() -> set[str] | None:
    """Untracked and ignored entries of the checkout, as git names them (None: no git here)."""
    git = shutil.which("git")
    if git is None or not (CHECKOUT / ".git").exists():
        return None
    done = subprocess.run(
        [git, "-C", str(CHECKOUT), "status", "--porcelain", "--ignored"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        return None
    entries = {line[3:] for line in done.stdout.splitlines() if line[:2] in ("??", "!!")}
    return {e for e in entries if not any(part in _CACHES for part in Path(e).parts)}


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_BEFORE] = _left_in_checkout()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    before = session.config.stash.get(_BEFORE, None)
    after = _left_in_checkout()
    if before is None or after is None:
        return
    new = sorted(after - before)
    if new:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = f"the tests wrote into the checkout {CHECKOUT}: {', '.join(new)}"
        if reporter is not None:
            reporter.write_line(message, red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
