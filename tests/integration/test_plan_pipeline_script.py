"""`stemma plan` of a Pipeline script: per step what would run and why, on a real store,
writing nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stemma.core.exit_codes import ExitCode

STEMMA = Path(sys.executable).parent / "stemma"
SCRIPT = """
import sys
from pathlib import Path
from stemma.core.examples import SlowCopy
from stemma.core.operations.builtins import IngestData
from stemma.core.front.pipeline import Pipeline

if __name__ == "__main__":
    folder, seconds = Path(sys.argv[1]), float(sys.argv[2])
    pipeline = Pipeline.create("planned", max_workers=1)
    paths = [str(folder / "a.csv"), str(folder / "b.csv")]
    data = pipeline.run(IngestData, params={"paths": paths})
    print("the script's own line")
    given = data.output("data")
    if sys.argv[3:] == ["ids"]:  # the same artifacts, given by id: another step key
        given = list(pipeline.artifact_ids(given))
    pipeline.run(SlowCopy, inputs={"dataset": given}, params={"seconds": seconds})
    pipeline.finalize()
"""


@pytest.fixture
def script(tmp_path: Path) -> Path:
    (tmp_path / "a.csv").write_text("x,y\n1,2\n")
    (tmp_path / "b.csv").write_text("x,y\n3,4\n")
    path = tmp_path / "planned_script.py"
    path.write_text(SCRIPT)
    return path


def _stemma(root: Path, *argv: str, store: str = "delta") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(STEMMA), "--root", str(root), *argv],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env={**os.environ, "STEMMA_STORE": store},
    )


def _plan(
    root: Path, script: Path, seconds: str = "0.1", *more: str, store: str = "delta"
) -> list[dict[str, Any]]:
    argv = ("plan", "--format", "json", str(script), str(script.parent), seconds, *more)
    done = _stemma(root, *argv, store=store)
    assert done.returncode == ExitCode.OK, done.stderr
    assert "the script's own line" in done.stderr  # the script's prints leave stdout to the plan
    return json.loads(done.stdout)


def _files(root: Path) -> dict[str, tuple[int, int]]:
    """Every file and directory under ``root`` with its size and modification time."""
    return {
        str(path.relative_to(root)): (path.stat().st_size, path.stat().st_mtime_ns)
        for path in root.rglob("*")
    }


def _run(root: Path, script: Path, seconds: str = "0.1", *, store: str = "delta") -> None:
    argv = ("run", "--quiet", str(script), str(script.parent), seconds)
    done = _stemma(root, *argv, store=store)
    assert done.returncode == ExitCode.OK, done.stderr


def test_plan_before_any_run_says_every_step_would_run_and_creates_no_root(
    tmp_path: Path, script: Path
) -> None:
    root = tmp_path / "store"
    ingest, copy = _plan(root, script)
    assert (ingest["action"], ingest["units"], ingest["cached"]) == ("run", 1, 0)
    assert ingest["reason"].startswith("new: no earlier completed attempt")
    assert (copy["action"], copy["units"]) == ("after", None)
    assert copy["reason"] == "runs after step 0 ingest_data: its units are unknown until then"
    assert not root.exists()


@pytest.mark.parametrize("store", ["delta", "sqlite"])
def test_plan_after_a_run_says_every_step_hits_and_writes_nothing(
    tmp_path: Path, script: Path, store: str
) -> None:
    root = tmp_path / "store"
    _run(root, script, store=store)
    before = _files(root)
    ingest, copy = _plan(root, script, store=store)
    assert [(s["action"], s["units"], s["cached"]) for s in (ingest, copy)] == [
        ("hit", 1, 1),
        ("hit", 2, 2),
    ]
    assert copy["reason"].startswith("step hit: built by planned_")
    assert _files(root) == before  # no run, no event, no state file, no lock


def test_plan_after_an_input_file_changed_names_the_file_and_marks_the_step_after_it(
    tmp_path: Path, script: Path
) -> None:
    root = tmp_path / "store"
    _run(root, script)
    (tmp_path / "a.csv").write_text("x,y\n1,5\n")
    before = _files(root)
    ingest, copy = _plan(root, script)
    assert ingest["action"] == "run"
    [change] = ingest["changes"]
    assert "a.csv" in change
    assert ingest["reason"].startswith("changed since planned_")
    assert copy["action"] == "after"
    assert copy["changes"] == ["upstream: step 0 ingest_data would run"]
    assert _files(root) == before


def test_plan_after_a_param_changed_names_the_field_and_counts_the_units(
    tmp_path: Path, script: Path
) -> None:
    root = tmp_path / "store"
    _run(root, script)
    ingest, copy = _plan(root, script, seconds="0.2")
    assert ingest["action"] == "hit"
    assert (copy["action"], copy["units"], copy["cached"]) == ("run", 2, 0)
    assert copy["changes"] == ["params.params.seconds: 0.1 → 0.2"]


def test_plan_counts_the_execution_hits_of_a_step_whose_key_changed(
    tmp_path: Path, script: Path
) -> None:
    root = tmp_path / "store"
    _run(root, script)
    ingest, copy = _plan(root, script, "0.1", "ids")
    assert ingest["action"] == "hit"
    # another step key (ids, not a reference), the same units: both are execution hits
    assert (copy["action"], copy["units"], copy["cached"]) == ("run", 2, 2)
    assert copy["reason"].startswith("changed since planned_")


def test_plan_table_shows_one_row_per_step(tmp_path: Path, script: Path) -> None:
    root = tmp_path / "store"
    _run(root, script)
    done = _stemma(root, "plan", str(script), str(script.parent), "0.2")
    assert done.returncode == ExitCode.OK, done.stderr
    header, ingest, copy = done.stdout.splitlines()
    assert header.split() == ["step", "name", "action", "units", "cached", "reason"]
    assert ingest.split()[:5] == ["0", "ingest_data", "hit", "1", "1"]
    assert copy.split()[:5] == ["1", "example.slow_copy", "run", "2", "0"]
    assert copy.endswith("params.params.seconds: 0.1 → 0.2")


def test_plan_of_a_script_that_starts_no_pipeline_says_how_to_offer_steps(
    tmp_path: Path,
) -> None:
    empty = tmp_path / "nothing.py"
    empty.write_text("print('hello')\n")
    done = _stemma(tmp_path / "store", "plan", str(empty))
    assert done.returncode == ExitCode.NOT_FOUND
    assert "submitted no step" in done.stderr
    assert "steps()" in done.stderr


LAZY_IN_MAIN = """
import pathlib, sys
from stemma.core import OUT, apply, run

def write(text, out_path):
    pathlib.Path(out_path).write_text(text)
    pathlib.Path(sys.argv[1]).write_text("it ran")

if __name__ == "__main__":
    run(apply(name="hello", fn=write, version="v1", text="hi", out_path=OUT))
"""


def test_plan_stops_a_lazy_run_in_the_main_block_before_it_runs(tmp_path: Path) -> None:
    script = tmp_path / "lazy_main.py"
    script.write_text(LAZY_IN_MAIN)
    marker = tmp_path / "ran.txt"
    done = _stemma(tmp_path / "store", "plan", str(script), str(marker))
    assert done.returncode == ExitCode.USAGE
    assert "STEMMA_DRY_RUN=1 (stemma plan) runs nothing" in done.stderr
    assert "steps() function" in done.stderr
    assert not marker.exists()
