"""The dashboard's reads of a damaged table print no native panic (issue 33).

One Parquet file of the steps table (or of the executions table) overwritten: polars took the
file's size from the table's log, read past its end and panicked, printing ``thread '…' panicked
at crates/polars-io/…`` on stderr (a backtrace with ``RUST_BACKTRACE=1``) over the screen. The
client's reads run here in-process with the file descriptors captured (a panic writes to fd 2
from native code), and ``stemma tui --once`` in a process of its own, with and without
``RUST_BACKTRACE``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stemma.core.errors import DamagedStoreError
from stemma.core.exit_codes import ExitCode
from stemma.tui.client import DashboardClient

from .conftest import FilledStore

NATIVE_WORDS = ("panicked", "thread '", "RUST_BACKTRACE", "stack backtrace", "Traceback")
"""What a Rust panic (or a Python traceback) prints; none of it may reach a user."""
STEPS = Path("delta") / "orchestration" / "steps"
EXECUTIONS = Path("delta") / "orchestration" / "executions"


def _damaged(filled: FilledStore, tmp_path: Path, table: Path) -> tuple[Path, Path]:
    """A copy of the filled root with the table's first data file overwritten, and that file."""
    root = tmp_path / "store"
    shutil.copytree(filled.root, root)
    damaged = sorted((root / table).glob("*.parquet"))[0]
    damaged.write_bytes(b"garbage" * 300)
    return root, damaged


def _nothing_native(text: str) -> None:
    for words in NATIVE_WORDS:
        assert words not in text, text


def test_the_clients_reads_of_a_damaged_root_print_nothing_native(
    filled: FilledStore, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    root, damaged = _damaged(filled, tmp_path, STEPS)
    client = DashboardClient(root)

    assert [row.run_id for row in client.runs()] == [filled.run_id]  # from its state file
    assert client.damage is not None
    assert f"{damaged.name} is not Parquet" in client.damage
    assert client.run(filled.run_id).steps  # the run, from its state file
    with pytest.raises(DamagedStoreError) as failure:
        client.step(filled.run_id, 1)
    said = client.explain_failure(failure.value)
    assert f"damaged table delta/orchestration/steps: {damaged.name} is not Parquet" in said

    out, err = capfd.readouterr()
    _nothing_native(out + err)


def test_a_step_whose_executions_are_damaged_prints_nothing_native(
    filled: FilledStore, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    root, damaged = _damaged(filled, tmp_path, EXECUTIONS)
    client = DashboardClient(root)

    with pytest.raises(DamagedStoreError) as failure:
        client.step(filled.run_id, 1)
    said = client.explain_failure(failure.value)
    assert f"damaged table delta/orchestration/executions: {damaged.name}" in said

    out, err = capfd.readouterr()
    _nothing_native(out + err)


def _tui_once(
    root: Path, argv: list[str], backtrace: str | None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "RUST_BACKTRACE"}
    if backtrace is not None:
        env["RUST_BACKTRACE"] = backtrace
    command = ["tui", "--once", "--size", "160x20", "--root", str(root), *argv]
    return subprocess.run(
        [sys.executable, "-m", "stemma.core.cli.main", *command],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=120,
    )


@pytest.mark.parametrize("backtrace", [None, "1"], ids=["no RUST_BACKTRACE", "RUST_BACKTRACE=1"])
@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["{short}"], ExitCode.OK),  # the run screen, its short id found among state files
        (["{run}", "--step", "1"], ExitCode.DAMAGED),  # the step screen: its history is the table
    ],
    ids=["run by its short id", "a step"],
)
def test_tui_once_on_a_damaged_steps_table_says_one_line_and_nothing_native(
    filled: FilledStore,
    tmp_path: Path,
    argv: list[str],
    code: ExitCode,
    backtrace: str | None,
) -> None:
    root, damaged = _damaged(filled, tmp_path, STEPS)
    given = [a.format(short=filled.run_id[-8:], run=filled.run_id) for a in argv]

    done = _tui_once(root, given, backtrace)

    assert done.returncode == code, done.stderr
    _nothing_native(done.stderr)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("stemma")
    assert f"table orchestration/steps of {root} cannot be read" in lines[0]
    assert damaged.name in lines[0]


@pytest.mark.parametrize("backtrace", [None, "1"], ids=["no RUST_BACKTRACE", "RUST_BACKTRACE=1"])
def test_tui_once_runs_list_on_a_damaged_root_shows_it_and_prints_nothing_native(
    filled: FilledStore, tmp_path: Path, backtrace: str | None
) -> None:
    root, _ = _damaged(filled, tmp_path, STEPS)

    done = _tui_once(root, [], backtrace)

    assert done.returncode == ExitCode.OK, done.stderr
    assert done.stderr == ""
    assert "could not read history: damaged table delta/orchestration/steps" in done.stdout


def test_tui_once_on_a_healthy_root_reads_as_before(filled: FilledStore) -> None:
    done = _tui_once(filled.root, [filled.run_id, "--step", "1"], "1")

    assert done.returncode == ExitCode.OK, done.stderr
    assert done.stderr == ""
    assert "damaged" not in done.stdout
    assert "example.transform" in done.stdout
