"""`stemma explain` and `stemma plan` name the upstream step whose key changed, not two keys."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from stemma.core.exit_codes import ExitCode

STEMMA = Path(sys.executable).parent / "stemma"
SCRIPT = """
import sys
from pathlib import Path
from stemma.core.examples import Transform
from stemma.core.operations.builtins import IngestData
from stemma.core.front.pipeline import Pipeline

if __name__ == "__main__":
    pipeline = Pipeline.create("upstream", max_workers=1)
    data = pipeline.run(IngestData, params={"paths": [str(Path(sys.argv[1]) / "a.csv")]})
    pipeline.run(Transform, inputs={"dataset": data.output("data")}, params={"scale": 2.0})
    pipeline.finalize()
"""


def _stemma(root: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(STEMMA), "--root", str(root), *argv],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env={**os.environ, "STEMMA_STORE": "delta"},
    )
    assert done.returncode == ExitCode.OK, done.stderr
    return done


def test_explain_and_plan_of_a_downstream_step_name_the_upstream_step(tmp_path: Path) -> None:
    script = tmp_path / "upstream.py"
    script.write_text(SCRIPT)
    (tmp_path / "a.csv").write_text("x,y\n1,2\n")
    root = tmp_path / "root"
    _stemma(root, "run", "--quiet", str(script), str(tmp_path))
    (tmp_path / "a.csv").write_text("x,y\n1,2\n3,4\n")  # the ingest's key changes
    planned = json.loads(
        _stemma(root, "plan", "--format", "json", str(script), str(tmp_path)).stdout
    )
    assert "upstream: step 0 ingest_data would run" in planned[1]["changes"]
    _stemma(root, "run", "--quiet", str(script), str(tmp_path))
    said = _stemma(root, "explain", "example.transform").stdout
    assert re.search(r"upstream step 0 ingest_data: '[0-9a-f]{8}' → '[0-9a-f]{8}'", said), said
