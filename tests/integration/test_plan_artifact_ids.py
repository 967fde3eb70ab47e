"""`stemma plan` of a step fed `pipeline.artifact_ids(...)` of a step that would run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from stemma.core.exit_codes import ExitCode

STEMMA = Path(sys.executable).parent / "stemma"
SCRIPT = """
import sys
from pathlib import Path
from stemma.core.examples import Transform
from stemma.core.operations.builtins import IngestData
from stemma.core.front.pipeline import Pipeline

if __name__ == "__main__":
    folder = Path(sys.argv[1])
    pipeline = Pipeline.create("ids", max_workers=1)
    data = pipeline.run(IngestData, params={"paths": [str(folder / "a.csv")]})
    ids = list(pipeline.artifact_ids(data.output("data")))
    pipeline.run(Transform, inputs={"dataset": ids}, params={"scale": 2.0})
    pipeline.finalize()
"""


def _stemma(root: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(STEMMA), "--root", str(root), *argv],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env={**os.environ, "STEMMA_STORE": "delta"},
    )


def _plan(root: Path, script: Path) -> list[dict[str, Any]]:
    done = _stemma(root, "plan", "--format", "json", str(script), str(script.parent))
    assert done.returncode == ExitCode.OK, done.stderr
    return json.loads(done.stdout)


def test_plan_of_a_step_fed_ids_of_a_step_that_would_run_says_it_runs_after_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.csv").write_text("x,y\n1,2\n")
    script = tmp_path / "ids_script.py"
    script.write_text(SCRIPT)
    root = tmp_path / "root"
    ingest, transform = _plan(root, script)
    assert ingest["action"] == "run"
    assert transform["action"] == "after", transform
    assert transform["units"] is None
    assert "runs after step 0 ingest_data" in transform["reason"]
    assert _stemma(root, "run", "--quiet", str(script), str(tmp_path)).returncode == ExitCode.OK
    # after the run, the ids are the real ones: both steps hit
    assert [step["action"] for step in _plan(root, script)] == ["hit", "hit"]
