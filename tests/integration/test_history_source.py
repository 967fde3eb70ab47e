"""One rule for where a root's history is: every read-only command reads the same, writes nothing.

A root stemma-core built (``STEMMA_STORE=sqlite``) read later with stemma-storage installed and
``$STEMMA_STORE`` unset keeps its history in ``core.sqlite`` until a run imports it into Delta:
``explain``, ``plan``, ``status``, ``runs``, ``artifacts`` and ``lineage`` all read it there, and
leave the root byte for byte as it was. The same commands on a Delta root read Delta.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stemma.core.store.history_source import SQLITE_IMPORT_MARKER, history_kind
from stemma.storage import DeltaStore

SCRIPT = """
import sys

from stemma.core import Pipeline
from stemma.core.examples import DataGenerator, MetricCalculator, Transform

if __name__ == "__main__":
    scale = float(sys.argv[1]) if sys.argv[1:] else 2.0
    pipeline = Pipeline.create("sq", max_workers=1)  # $STEMMA_ROOT, or stemma's --root
    data = pipeline.run(DataGenerator, params={"count": 2, "rows": 3})
    dataset = {"dataset": data.output("datasets")}
    scaled = pipeline.run(Transform, inputs=dataset, params={"scale": scale})
    pipeline.run(MetricCalculator, inputs={"dataset": scaled.output("dataset")})
    print("ok", pipeline.finalize()["overall_success"])
"""


LIST_RUNS = """
import sys
from stemma.core.front.pipeline import Pipeline
print(*sorted(Pipeline.list_runs(sys.argv[1])["pipeline_run_id"]))
"""


def _env(store: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("STEMMA_STORE", "STEMMA_ROOT")}
    return env | ({"STEMMA_STORE": store} if store else {})


def _build(tmp_path: Path, store: str | None) -> tuple[Path, Path]:
    """Two runs of the script on a fresh root (scale 2, then 3), written with ``store``."""
    script = tmp_path / "scaled.py"
    script.write_text(SCRIPT)
    root = tmp_path / "root"
    for scale in ("2.0", "3.0"):
        done = subprocess.run(
            [sys.executable, str(script), scale],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
            cwd=tmp_path,
            env=_env(store) | {"STEMMA_ROOT": str(root)},
        )
        assert done.returncode == 0, done.stderr
    return root, script


def _stemma(root: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "stemma.core.cli.main", "--root", str(root), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=root.parent,
        env=_env(None),  # stemma-storage installed, no STEMMA_STORE: Delta is the default
    )
    assert done.returncode == 0, f"stemma {' '.join(args)}: {done.stderr}"
    return done.stdout


def _contents(root: Path) -> dict[str, str]:
    """Every file and directory under ``root``, a file by the hash of its bytes."""
    return {
        str(path.relative_to(root)): (
            hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
        )
        for path in sorted(root.rglob("*"))
    }


@pytest.mark.parametrize("store", ["sqlite", "delta"])
def test_read_only_commands_read_the_roots_history_and_leave_it_unchanged(
    tmp_path: Path, store: str
) -> None:
    root, script = _build(tmp_path, store)
    assert history_kind(root) == store
    before = _contents(root)

    runs = [line.split()[0] for line in _stemma(root, "runs").splitlines()[1:]]
    assert len(runs) == 2, runs
    assert all(run.startswith("sq_") for run in runs), runs
    shutil.rmtree(root / "runs")  # from here on, only history knows the runs
    before = {k: v for k, v in before.items() if not k.startswith("runs")}
    listed = json.loads(_stemma(root, "runs", "--format", "json"))
    assert sorted(row["run_id"] for row in listed) == sorted(runs)
    status = _stemma(root, "status", runs[0])
    assert "example.metrics" in status, status
    assert "completed" in status, status
    explained = _stemma(root, "explain", "example.transform")
    assert "scale: 2.0 → 3.0" in explained, explained
    plan = _stemma(root, "plan", str(script), "3.0")
    actions = [line.split()[2] for line in plan.splitlines()[1:4]]
    assert actions == ["hit", "hit", "hit"], plan
    metrics = json.loads(_stemma(root, "artifacts", "--type", "metric", "--format", "json"))
    assert len(metrics) == 4, metrics  # two datasets, two scales
    lineage = _stemma(root, "lineage", metrics[0]["artifact_id"])
    assert "example.transform" in lineage, lineage
    listed_in_python = subprocess.run(
        [sys.executable, "-c", LIST_RUNS, str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=_env(None),
    )
    assert listed_in_python.stdout.split() == sorted(runs), listed_in_python.stderr

    assert _contents(root) == before
    assert not (root / "delta" / SQLITE_IMPORT_MARKER).exists()


def _fake_root(root: Path, *, sqlite: bool, delta: bool, marker: bool) -> Path:
    root.mkdir()
    if sqlite:
        (root / "core.sqlite").write_bytes(b"")
    if delta:
        (root / "delta").mkdir()
    if marker:
        (root / "delta" / SQLITE_IMPORT_MARKER).write_text("{}")
    return root


@pytest.mark.parametrize(
    ("sqlite", "delta", "marker", "kind"),
    [
        (False, False, False, None),
        (True, False, False, "sqlite"),
        (True, True, False, "sqlite"),  # not imported yet: the next run imports it whole
        (True, True, True, "delta"),  # imported: Delta is the history from then on
        (False, True, False, "delta"),
    ],
)
def test_history_kind_follows_the_import_marker(
    tmp_path: Path, sqlite: bool, delta: bool, marker: bool, kind: str | None
) -> None:
    root = _fake_root(tmp_path / "root", sqlite=sqlite, delta=delta, marker=marker)
    assert history_kind(root) == kind


def test_a_root_imported_by_a_run_is_read_from_delta(tmp_path: Path) -> None:
    root, _ = _build(tmp_path, "sqlite")
    before = _stemma(root, "runs")
    DeltaStore(root).recover()  # what the first run with stemma-storage does
    assert history_kind(root) == "delta"
    (root / "core.sqlite").unlink()  # so an answer can only come from Delta
    assert _stemma(root, "runs") == before
    assert "2.0 → 3.0" in _stemma(root, "explain", "example.transform")
