"""`stemma plan` of every example Pipeline script, on a fresh root and after a real run.

A dry run's step results must carry what a real one's do (the examples read
``result.metadata["cache"]``), and a script that raises while planned is said in one line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stemma.core.exit_codes import ExitCode

STEMMA = Path(sys.executable).parent / "stemma"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PIPELINE_EXAMPLES = [
    ("first_pipeline.py",),
    ("watch_and_cancel.py", "0.1"),
    ("going_to_slurm.py", "local"),
]


def _stemma(root: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(STEMMA), "--root", str(root), *argv],
        capture_output=True,
        text=True,
        check=False,
        timeout=180,
        env={**os.environ, "STEMMA_STORE": "delta"},
        cwd=EXAMPLES.parent,
    )


@pytest.mark.parametrize("example", PIPELINE_EXAMPLES, ids=lambda e: e[0])
def test_plan_example_pipeline_script_plans_before_and_after_a_run(
    tmp_path: Path, example: tuple[str, ...]
) -> None:
    script, *args = example
    argv = ("plan", "--format", "json", f"examples/{script}", *args)
    fresh = _stemma(tmp_path / "root", *argv)
    assert fresh.returncode == ExitCode.OK, fresh.stderr
    assert "Traceback" not in fresh.stderr
    assert {step["action"] for step in json.loads(fresh.stdout)} <= {"run", "after"}
    ran = _stemma(tmp_path / "root", "run", "--quiet", f"examples/{script}", *args)
    assert ran.returncode == ExitCode.OK, ran.stderr
    again = _stemma(tmp_path / "root", *argv)
    assert again.returncode == ExitCode.OK, again.stderr
    assert {step["action"] for step in json.loads(again.stdout)} == {"hit"}


def test_plan_of_a_script_that_raises_says_its_exception_in_one_line(tmp_path: Path) -> None:
    # query_lineage reads the tables its run filled: planned on a fresh root, they are empty
    done = _stemma(tmp_path / "root", "plan", "examples/query_lineage.py")
    assert done.returncode == ExitCode.RUN_FAILED
    assert "Traceback" not in done.stderr
    assert "examples/query_lineage.py raised while planned: polars.exceptions." in done.stderr


def test_plan_lazy_example_plans_its_steps_with_whole_fingerprints(tmp_path: Path) -> None:
    done = _stemma(tmp_path / "root", "plan", "--format", "json", "examples/lazy_steps.py")
    assert done.returncode == ExitCode.OK, done.stderr
    planned = json.loads(done.stdout)
    assert [step["step"] for step in planned][-1] == "demo/report"
    assert {step["action"] for step in planned} == {"run"}
    assert {len(step["fingerprint"]) for step in planned} == {32}  # as a Pipeline plan's
    assert not (tmp_path / "root").exists()


LAZY_WITH_ARGS = """
import sys
from stemma.core import OUT, apply

def write(size: int, out_path: str) -> None:
    open(out_path, "w").write("x" * size)

def steps():
    return apply(name="sized", fn=write, version="v1", size=int(sys.argv[1]), out_path=OUT)
"""


def test_plan_lazy_script_gets_its_arguments_in_sys_argv(tmp_path: Path) -> None:
    script = tmp_path / "sized.py"
    script.write_text(LAZY_WITH_ARGS)
    argv = ("plan", "--format", "json", str(script))
    one, two = (_stemma(tmp_path / "root", *argv, size) for size in ("1", "2"))
    assert one.returncode == ExitCode.OK, one.stderr
    assert two.returncode == ExitCode.OK, two.stderr
    assert json.loads(one.stdout)[0]["fingerprint"] != json.loads(two.stdout)[0]["fingerprint"]


def test_plan_table_tells_apart_two_runs_of_one_name(tmp_path: Path) -> None:
    done = _stemma(tmp_path / "root", "plan", "examples/first_pipeline.py")
    assert done.returncode == ExitCode.OK, done.stderr
    steps = [line.split()[0] for line in done.stdout.splitlines()[1:]]
    runs = {step.rsplit(":", 1)[0] for step in steps}
    assert len(steps) == 6, done.stdout
    assert len(runs) == 2, done.stdout  # first#<short id>, one a run
    assert all(run.startswith("first#") for run in runs), done.stdout
