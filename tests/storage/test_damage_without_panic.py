"""No command lets a native panic reach the user when a table's data file is damaged (issue 33).

polars' Delta scan takes each file's size from the table's log: a data file overwritten or cut
short made it read past the file's end and panic, and Rust printed ``thread '…' panicked at
crates/polars-io/…`` (with ``RUST_BACKTRACE=1``, a backtrace) on stderr before stemma's own
one-line message. Each command runs here in a process of its own, on a real root with one data
file damaged, with and without ``RUST_BACKTRACE``: its stderr holds stemma's lines and nothing
native.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from stemma.core.examples import DataGenerator, MetricCalculator, Transform
from stemma.core.exit_codes import ExitCode
from stemma.core.front.pipeline import Pipeline
from stemma.storage import artifacts

NATIVE_WORDS = ("panicked", "thread '", "RUST_BACKTRACE", "stack backtrace", "Traceback")
"""What a Rust panic (or a Python traceback) prints; none of it may reach a user."""


@dataclass(frozen=True)
class Filled:
    root: Path
    run_id: str
    artifact_id: str
    """A dataset the transform step made: it has parents (``stemma lineage`` walks up)."""


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Filled:
    """generate (2 CSVs) → transform → metrics: every table has a few small data files."""
    root = tmp_path_factory.mktemp("panic") / "root"
    pipeline = Pipeline.create("first", root=root, backend="local-thread")
    generated = pipeline.run(DataGenerator, params={"count": 2, "rows": 4})
    transformed = pipeline.run(
        Transform, inputs={"dataset": generated.output("datasets")}, params={"scale": 2.0}
    )
    pipeline.run(MetricCalculator, inputs={"dataset": transformed.output("dataset")})
    pipeline.finalize()
    made = artifacts(root)
    made = made.filter(made.get_column("origin_step_name") == "example.transform")
    return Filled(root=root, run_id=pipeline.run_id, artifact_id=str(made["artifact_id"][0]))


def _overwrite(file: Path) -> None:
    file.write_bytes(b"garbage" * 300)  # issue 33's damage: another size, no Parquet marks


def _cut_short(file: Path) -> None:
    data = file.read_bytes()
    file.write_bytes(data[: len(data) // 2])


def _replace_with_other_parquet(file: Path) -> None:
    """Another table's Parquet file in its place: PAR1 at both ends, but not the logged size."""
    other = sorted((file.parents[2] / "provenance" / "execution_edges").glob("*.parquet"))[0]
    assert other.stat().st_size != file.stat().st_size
    shutil.copyfile(other, file)


DAMAGES: dict[str, Callable[[Path], None]] = {
    "overwritten": _overwrite,
    "cut short": _cut_short,
    "another parquet file": _replace_with_other_parquet,
}


def _damaged_copy(filled: Filled, tmp_path: Path, table: str, damage: str) -> Path:
    root = tmp_path / "root"
    shutil.copytree(filled.root, root)
    files = sorted((root / "delta" / table).glob("*.parquet"))
    assert files, table
    for file in files:  # every file of the table: whatever the read's statistics skip, it meets one
        DAMAGES[damage](file)
    return root


def _stemma(argv: list[str], backtrace: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "RUST_BACKTRACE"}
    if backtrace is not None:
        env["RUST_BACKTRACE"] = backtrace
    return subprocess.run(
        [sys.executable, "-m", "stemma.core.cli.main", *argv],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=120,
    )


def _assert_only_stemma_said_it(done: subprocess.CompletedProcess[str], table: str) -> None:
    for words in NATIVE_WORDS:
        assert words not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr  # stemma's one line, and nothing else
    assert lines[0].startswith("stemma"), done.stderr
    assert f"table {table} of " in lines[0] or f"damaged table delta/{table}" in lines[0]


# (the table damaged, the command, the exit code: a list still lists what it can read)
COMMANDS = [
    ("orchestration/steps", ["status", "{short}"], ExitCode.OK),
    ("orchestration/steps", ["status", "first"], ExitCode.OK),
    ("orchestration/steps", ["runs"], ExitCode.OK),
    ("orchestration/steps", ["explain", "example.transform"], ExitCode.DAMAGED),
    ("orchestration/steps", ["compact"], ExitCode.DAMAGED),
    ("orchestration/executions", ["artifacts", "--step", "example.transform"], ExitCode.DAMAGED),
    ("artifacts/index", ["artifacts"], ExitCode.DAMAGED),
    ("provenance/artifact_edges", ["lineage", "{artifact}"], ExitCode.DAMAGED),
]


@pytest.mark.parametrize("backtrace", [None, "1"], ids=["no RUST_BACKTRACE", "RUST_BACKTRACE=1"])
@pytest.mark.parametrize(("table", "argv", "code"), COMMANDS, ids=lambda v: str(v))
def test_a_command_on_an_overwritten_data_file_says_one_line_and_nothing_native(
    filled: Filled,
    tmp_path: Path,
    table: str,
    argv: list[str],
    code: ExitCode,
    backtrace: str | None,
) -> None:
    root = _damaged_copy(filled, tmp_path, table, "overwritten")
    given = [a.format(short=filled.run_id[-8:], artifact=filled.artifact_id) for a in argv]

    done = _stemma([*given, "--root", str(root)], backtrace)

    assert done.returncode == code, done.stderr
    _assert_only_stemma_said_it(done, table)


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_every_kind_of_damage_is_named_before_polars_reads_the_file(
    filled: Filled, tmp_path: Path, damage: str
) -> None:
    root = _damaged_copy(filled, tmp_path, "orchestration/steps", damage)

    done = _stemma(["explain", "example.transform", "--root", str(root)], "1")

    assert done.returncode == ExitCode.DAMAGED, done.stderr
    _assert_only_stemma_said_it(done, "orchestration/steps")
    said = done.stderr
    assert "its data file part-" in said  # the file, named
    assert f"`stemma check {root}` names the damaged file and the fix" in said


def test_check_names_a_data_file_of_another_size_than_its_log_says(
    filled: Filled, tmp_path: Path
) -> None:
    root = _damaged_copy(filled, tmp_path, "orchestration/steps", "another parquet file")

    done = _stemma(["check", str(root)], "1")

    assert done.returncode == ExitCode.RUN_FAILED, done.stdout + done.stderr  # needs you
    assert "where the table's log says" in done.stdout
    assert "replaced or cut short" in done.stdout
    assert "panicked" not in done.stderr


@pytest.mark.parametrize(
    "argv",
    [["status", "{short}"], ["runs"], ["explain", "example.transform"], ["artifacts"]],
    ids=lambda v: " ".join(v),
)
def test_a_healthy_root_reads_as_before(filled: Filled, argv: list[str]) -> None:
    given = [a.format(short=filled.run_id[-8:]) for a in argv]

    done = _stemma([*given, "--root", str(filled.root)], "1")

    assert done.returncode == ExitCode.OK, done.stderr
    assert done.stderr == ""
    assert done.stdout.strip()
