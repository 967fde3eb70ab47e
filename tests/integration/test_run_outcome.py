"""An attached `stemma run` exits as `stemma watch` would: a run with failed units is failed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from stemma.core.exit_codes import ExitCode

STEMMA = Path(sys.executable).parent / "stemma"
FAILING = """
from stemma.core.examples import DataGenerator, Fail
from stemma.core.front.pipeline import Pipeline

if __name__ == "__main__":
    pipeline = Pipeline.create("failing", max_workers=1)
    generated = pipeline.run(DataGenerator, params={"count": 3, "rows": 2})
    failed = {"dataset": generated.output("datasets")}
    pipeline.run(Fail, inputs=failed, params={"match": "1"})  # one unit of three fails
    print("finalized", pipeline.finalize()["overall_success"])
"""


def test_run_of_a_pipeline_with_failed_units_exits_1_and_says_failed(tmp_path: Path) -> None:
    script = tmp_path / "failing.py"
    script.write_text(FAILING)
    done = subprocess.run(
        [str(STEMMA), "--root", str(tmp_path / "root"), "run", str(script)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == ExitCode.RUN_FAILED, done.stderr
    assert done.stdout == "finalized False\n"
    run_lines = [line.split(" ", 1)[1] for line in done.stderr.splitlines() if " run " in line]
    ends = [line for line in run_lines if not line.endswith("0 steps")]
    # one line for the end (the summary), saying the outcome, not the status "completed"
    assert len(ends) == 1, done.stderr
    assert ends[0].startswith("run failing_")
    assert " failed: 2 steps, 4/4 units, 1 failed, 0 cancelled" in ends[0], done.stderr
