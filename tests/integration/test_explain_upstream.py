"""`stemma explain` and `stemma plan` name the upstream step whose key changed, not two keys."""

from __future__ import annotations

import datetime as dt
import json
import os
import pathlib
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from stemma.core import OUT, ArtifactStep, apply, run, run_ids
from stemma.core.cli.main import main
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
    assert re.search(r"upstream ingest_data changed \(key [0-9a-f]{8} → [0-9a-f]{8}\)", said), said


def base(count: int, out_path: str) -> int:
    pathlib.Path(out_path).write_text(str(list(range(count))))
    return count


def scale(source: str, factor: int, out_path: str) -> int:
    pathlib.Path(out_path).write_text(pathlib.Path(source).read_text() * factor)
    return factor


def report(parts: list[str], out_path: str) -> int:
    pathlib.Path(out_path).write_text("".join(pathlib.Path(p).read_text() for p in parts))
    return len(parts)


def _graph(factor: int) -> ArtifactStep:
    """ml/report over ml/eval (a factor) and ml/other, both over ml/base."""
    numbers = apply(name="ml/base", fn=base, version="v1", count=3, out_path=OUT)
    other = apply(name="ml/other", fn=scale, version="v1", source=numbers, factor=1, out_path=OUT)
    tuned = apply(
        name="ml/tune", fn=scale, version="v1", source=numbers, factor=factor, out_path=OUT
    )
    evaluated = apply(name="ml/eval", fn=scale, version="v1", source=tuned, factor=2, out_path=OUT)
    return apply(name="ml/report", fn=report, version="v1", parts=[other, evaluated], out_path=OUT)


def _explain(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["explain", *argv])
    said = capsys.readouterr()
    return code, said.out, said.err


def test_explain_of_a_lazy_step_matches_its_upstream_steps_by_name_and_says_what_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "root"
    for factor in (3, 4):  # the second run numbers its steps otherwise: only three of them run
        run(_graph(factor), root=root, name="ml", max_workers=1)
    code, said, _ = _explain(capsys, "ml/report", "--root", str(root))
    assert code == ExitCode.OK
    lines = said.splitlines()
    assert "removed" not in said, said
    assert "added" not in said, said
    assert re.fullmatch(r"  upstream ml/eval changed \(key [0-9a-f]{8} → [0-9a-f]{8}\):", lines[2])
    assert re.fullmatch(
        r"    upstream ml/tune changed \(key [0-9a-f]{8} → [0-9a-f]{8}\):", lines[3]
    )
    assert lines[4:] == ["      params.inputs.factor: 3 → 4"]


def test_explain_takes_a_step_number_with_the_run_named_by_its_pipeline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "root"
    for factor in (3, 4):
        run(_graph(factor), root=root, name="ml", max_workers=1)
    code, said, _ = _explain(capsys, "0", "--run", "ml", "--root", str(root))
    assert code == ExitCode.OK
    assert said.startswith("step ml/tune in ml_"), said  # step 0 of the newest run of ml
    assert said.splitlines()[2:] == ["  params.inputs.factor: 3 → 4"]
    code, said, err = _explain(capsys, "0", "--root", str(root))
    assert code == ExitCode.USAGE
    assert err.count("\n") == 1, err  # one line
    assert "--run" in err
    code, said, err = _explain(capsys, "9", "--run", "ml", "--root", str(root))
    assert code == ExitCode.NOT_FOUND
    assert "has no step 9 (its steps: 0 ml/tune, 1 ml/eval, 2 ml/report)" in err


def test_a_pipeline_name_means_its_newest_run_when_two_started_within_one_second(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Both ids hold the same second; the newer one's random end sorts first.
    second = dt.datetime(2026, 12, 7, 10, 43, 52, tzinfo=dt.UTC)
    ends = iter(["ffffffff", "00000000"])

    def token_hex(nbytes: int) -> str:
        del nbytes
        return next(ends)

    def now(tz: dt.tzinfo) -> dt.datetime:
        del tz
        return second

    monkeypatch.setattr(run_ids, "secrets", SimpleNamespace(token_hex=token_hex))
    monkeypatch.setattr(
        run_ids, "dt", SimpleNamespace(UTC=dt.UTC, datetime=SimpleNamespace(now=now))
    )
    root = tmp_path / "root"
    for factor in (3, 4):
        run(_graph(factor), root=root, name="ml", max_workers=1)

    code, said, _ = _explain(capsys, "0", "--run", "ml", "--root", str(root))

    assert code == ExitCode.OK
    assert said.startswith("step ml/tune in ml_20261207_104352_00000000"), said
    assert said.splitlines()[2:] == ["  params.inputs.factor: 3 → 4"]
