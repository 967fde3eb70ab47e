"""Every command on a root with a damaged table: one line naming it and `stemma check`, no trace."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stemma.core.exit_codes import ExitCode
from stemma.storage import DeltaStore

from .conftest import FunctionStepFactory, commit_function_step


def _root(store: DeltaStore, make_step: FunctionStepFactory) -> Path:
    for number in range(3):
        commit_function_step(store, make_step(f"step{number}", value=number))
    return store.layout.root


def _stemma(*argv: str) -> subprocess.CompletedProcess[str]:
    """The command in a process of its own: no table handle kept from the commits."""
    return subprocess.run(
        [sys.executable, "-m", "stemma.core.cli.main", *argv],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "RUST_BACKTRACE": "0"},
    )


def _garble(root: Path, table: str) -> None:
    """Every data file of the table overwritten (a read whose statistics skip none meets one)."""
    for file in (root / "delta" / table).glob("part-*.parquet"):
        file.write_bytes(b"garbage" * 300)


def _drop_commit(root: Path, table: str) -> None:
    (root / "delta" / table / "_delta_log" / f"{1:020d}.json").unlink()


@pytest.mark.parametrize("damage", [_garble, _drop_commit], ids=["garbage parquet", "log gap"])
@pytest.mark.parametrize(
    ("table", "argv"),
    [
        ("orchestration/steps", ["explain", "step1"]),
        ("artifacts/index", ["artifacts"]),
        ("orchestration/executions", ["artifacts", "--step", "step1"]),
        ("orchestration/steps", ["compact"]),
    ],
)
def test_command_on_damaged_table_says_one_line_naming_it_and_check_exit_7(
    store: DeltaStore,
    make_step: FunctionStepFactory,
    damage: object,
    table: str,
    argv: list[str],
) -> None:
    root = _root(store, make_step)
    assert callable(damage)
    damage(root, table)

    done = _stemma(*argv, "--root", str(root))

    said = [line for line in done.stderr.splitlines() if line.startswith("stemma ")]
    assert done.returncode == ExitCode.DAMAGED, done.stderr
    assert "Traceback" not in done.stderr
    assert len(said) == 1, done.stderr
    err = said[0]
    assert f"table {table} of {root} cannot be read" in err
    assert f"`stemma check {root}` names the damaged file and the fix" in err


def test_runs_on_damaged_steps_table_says_so_and_still_lists(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    root = _root(store, make_step)
    _drop_commit(root, "orchestration/steps")

    done = _stemma("runs", "--root", str(root), "--format", "csv")

    out, err = done.stdout, done.stderr
    assert done.returncode == ExitCode.OK
    assert out.startswith("run_id,")  # what can be read (runs with a state file) still listed
    assert "commit 00000000000000000001.json of its log is missing" in err
    assert "Runs with a state file are still listed." in err
    assert "Traceback" not in err
