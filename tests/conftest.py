"""Checks for the whole suite: no test writes into the checkout.

Every test writes below its own temporary directory. The check compares what git sees in the
checkout (untracked and ignored entries) before and after the session, and fails the session,
naming what appeared, if anything did (a default ``.stemma/`` root, a tool's cache…).
Hypothesis's example database goes to a temporary directory for the same reason, removed when
the session ends.

With ``STEMMA_TEST_ROOT_NAME`` set (``check`` runs the storage suite, and a second time the
integration tests that read Delta tables, with ``"root with space é"``), every temporary
directory, and so every store root a test makes under ``tmp_path`` or ``tmp_path_factory``,
lies below a directory of that name: a root
whose path has a space or non-ASCII characters once broke every Delta read (delta-rs hands back
escaped file URIs), and this puts every test's root there without a test naming it.
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
ROOT_NAME_ENV = "STEMMA_TEST_ROOT_NAME"
"""The variable naming the directory every temporary directory (every test root) lies below."""
_ODD_PARENT = pytest.StashKey[Path]()

HYPOTHESIS_ENV = "HYPOTHESIS_STORAGE_DIRECTORY"
_HYPOTHESIS_DIR = (
    None if HYPOTHESIS_ENV in os.environ else Path(tempfile.mkdtemp(prefix="hypothesis-"))
)
"""The example database this session made (xdist workers inherit it): removed as it ends."""
if _HYPOTHESIS_DIR is not None:
    os.environ[HYPOTHESIS_ENV] = str(_HYPOTHESIS_DIR)

STATE_DIR_ENV = "STEMMA_STATE_DIR"
_STATE_DIR = None if STATE_DIR_ENV in os.environ else Path(tempfile.mkdtemp(prefix="stemma-state-"))
"""Where bucket roots' local halves go outside a test (a module-scoped fixture's root): never
``~/.local/state``. Each test has its own (``_state_dirs_in_tmp``); removed as the session ends."""
if _STATE_DIR is not None:
    os.environ[STATE_DIR_ENV] = str(_STATE_DIR)


def pytest_unconfigure(config: pytest.Config) -> None:
    if not _is_xdist_worker(config):
        for made in (_HYPOTHESIS_DIR, _STATE_DIR):
            if made is not None:
                shutil.rmtree(made, ignore_errors=True)


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


@pytest.hookimpl(tryfirst=True)  # before pytest's tmpdir plugin reads --basetemp
def pytest_configure(config: pytest.Config) -> None:
    name = os.environ.get(ROOT_NAME_ENV)
    if not name or _is_xdist_worker(config):
        return  # a worker's --basetemp is already below the controller's odd-named directory
    if name in (".", "..") or "/" in name or os.sep in name:
        raise pytest.UsageError(
            f"{ROOT_NAME_ENV} must be one directory name, such as 'root with space é'; got {name!r}"
        )
    if config.option.basetemp is not None:
        raise pytest.UsageError(f"{ROOT_NAME_ENV} chooses the temporary directory: drop --basetemp")
    parent = Path(tempfile.mkdtemp(prefix="stemma-tests-"))
    config.stash[_ODD_PARENT] = parent
    config.option.basetemp = str(parent / name)


def _is_xdist_worker(config: pytest.Config) -> bool:
    """A pytest-xdist worker: the controller chose the directories and checks the checkout."""
    return hasattr(config, "workerinput")


def _remove_odd_parent(config: pytest.Config, *, passed: bool) -> None:
    """Remove the odd-named temporary directory after a session that passed; else say where."""
    parent = config.stash.get(_ODD_PARENT, None)
    if parent is None:
        return
    if passed:
        shutil.rmtree(parent, ignore_errors=True)
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"{ROOT_NAME_ENV}: the tests' directories are kept in {parent}")


@pytest.fixture(autouse=True)
def _state_dirs_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An object root's local half goes below the test's directory, never ``~/.local/state``."""
    monkeypatch.setenv(STATE_DIR_ENV, str(tmp_path / "state"))


def pytest_sessionstart(session: pytest.Session) -> None:
    if not _is_xdist_worker(session.config):
        session.config.stash[_BEFORE] = _left_in_checkout()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _remove_odd_parent(session.config, passed=exitstatus == pytest.ExitCode.OK)
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
