"""`stemma plan`, `explain` and `reap`."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stemma.core.cli.main import main
from stemma.core.execution_records import StepEvent
from stemma.core.exit_codes import ExitCode
from stemma.core.live import RunStatus
from stemma.core.records import StepStatus
from stemma.core.runs.explaining import explain_step

from .conftest import StateFactory

LAZY_SCRIPT = """
import pathlib
from stemma.core import OUT, apply

def write(text, out_path):
    pathlib.Path(out_path).write_text(text)

def steps():
    return [apply(name="hello", fn=write, version="v1", text=TEXT, out_path=OUT)]

TEXT = "hi"

if __name__ == "__main__":
    raise SystemExit("the main block must not run under plan")
"""


def test_plan_lists_what_would_run_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "lazy.py"
    script.write_text(LAZY_SCRIPT)
    root = tmp_path / "store"
    assert main(["plan", str(script), "--root", str(root), "--format", "json"]) == ExitCode.OK
    [row] = json.loads(capsys.readouterr().out)
    assert (row["step"], row["action"]) == ("hello", "run")
    assert row["reason"].startswith("new")
    assert not root.exists()


def test_plan_of_a_script_without_steps_says_how_to_offer_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "empty.py"
    script.write_text("X = 1\n")
    assert main(["plan", str(script), "--root", str(tmp_path)]) == ExitCode.NOT_FOUND
    assert "steps()" in capsys.readouterr().err


_T0 = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.UTC)


def _event(run: str, minute: int, fingerprint: str, **changes: object) -> StepEvent:
    fields: dict[str, object] = {
        "step_run_id": f"{run}-{minute}",
        "step_spec_id": fingerprint * 8,
        "pipeline_run_id": run,
        "step_number": 1,
        "step_name": "example.transform",
        "status": StepStatus.COMPLETED,
        "operation": "example.transform",
        "version": "1",
        "params": {"params": {"scale": 1.0}},
        "backend": "local",
        "timestamp": _T0 + dt.timedelta(minutes=minute),
        **changes,
    }
    return StepEvent(**fields)  # pyright: ignore[reportArgumentType]


def test_explain_names_the_changed_param_against_the_previous_completed_attempt() -> None:
    events = [
        _event("a", 0, "aaaa"),
        _event("b", 5, "bbbb", params={"params": {"scale": 2.0}}),
    ]
    lines = explain_step(events, "example.transform")
    assert "ran: key changed since a" in lines[1]
    assert lines[2:] == ["  params.params.scale: 1.0 → 2.0"]


def test_explain_of_a_step_hit_names_the_step_run_it_reused() -> None:
    events = [
        _event("a", 0, "aaaa"),
        _event("b", 5, "aaaa", metadata={"cache": "step", "outputs_from": "a-0"}),
    ]
    assert explain_step(events, "example.transform")[1].startswith("hit: same key")


def test_explain_of_a_first_attempt_says_it_is_new() -> None:
    lines = explain_step([_event("a", 0, "aaaa")], "example.transform")
    assert lines[1] == "ran: new, no earlier completed attempt of this step"


def test_explain_matches_upstream_steps_by_name_whatever_their_numbers() -> None:
    def upstream(run: str, minute: int, number: int, fingerprint: str, lr: float) -> StepEvent:
        return _event(
            run,
            minute,
            fingerprint,
            step_number=number,
            step_name="ml/eval/logreg",
            params={"inputs": {"lr": lr}},
        )

    events = [
        upstream("a", 0, 51, "cccc", 0.1),
        _event("a", 1, "aaaa", step_number=52, dep_fingerprints=("cccc" * 8,)),
        upstream("b", 5, 2, "dddd", 0.2),
        _event("b", 6, "bbbb", step_number=3, dep_fingerprints=("dddd" * 8,)),
    ]
    lines = explain_step(events, "example.transform")
    assert lines[2:] == [
        "  upstream ml/eval/logreg changed (key cccccccc → dddddddd):",
        "    params.inputs.lr: 0.1 → 0.2",
    ]


def test_reap_refuses_a_run_that_is_alive_and_says_how_to_stop_it(
    root: Path, make_state: StateFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    state = make_state()
    assert main(["reap", state.run_id, "--root", str(root)]) == ExitCode.USAGE
    assert f"stemma cancel {state.run_id} --level 3" in capsys.readouterr().err


REAPER = """
def reap(run_id, *, root):
    print(f"reaping {run_id} under {root}")
    return ["101", "102"]
"""


def test_reap_of_a_dead_run_calls_every_installed_reaper(
    tmp_path: Path, root: Path, make_state: StateFactory
) -> None:
    state = make_state(heartbeat=dt.datetime.now(dt.UTC) - dt.timedelta(hours=1))
    assert state.seen_at(dt.datetime.now(dt.UTC)).status is RunStatus.STALE
    site = tmp_path / "site"
    site.mkdir()
    (site / "fake_reaper.py").write_text(REAPER)
    info = site / "fake_reaper-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-reaper\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[stemma.reapers]\nfake = fake_reaper:reap\n")
    code = "import sys; from stemma.core.cli.main import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run(
        [sys.executable, "-c", code, "reap", state.run_id, "--root", str(root)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(site)},
        check=False,
        timeout=60,
    )
    assert done.returncode == ExitCode.OK, done.stderr
    assert f"reaping {state.run_id} under {root}" in done.stdout
    assert "fake: cancelled 2 jobs (101, 102)" in done.stdout
