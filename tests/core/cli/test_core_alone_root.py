"""The `stemma` command on a root that stemma-core alone built (its SQLite store)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """
import pathlib
import sys

from stemma.core import OUT, apply, run


def write(text, out_path):
    pathlib.Path(out_path).write_text(text)
    return len(text)


if __name__ == "__main__":
    text = sys.argv[2]
    step = apply(name="hello", fn=write, version="v1", text=text, out_path=OUT)
    print(run(step, root=sys.argv[1], name="hello")[0].value)
"""


def _stemma(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stemma.core.cli.main", "--root", str(root), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "STEMMA_STORE": "sqlite"},
    )


@pytest.fixture
def core_root(tmp_path: Path) -> Path:
    script = tmp_path / "hello.py"
    script.write_text(SCRIPT)
    root = tmp_path / "root"
    env = {**os.environ, "STEMMA_STORE": "sqlite"}
    for text in ("hi", "hello"):
        done = subprocess.run(
            [sys.executable, str(script), str(root), text],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env=env,
        )
        assert done.returncode == 0, done.stderr
    return root


def test_core_alone_root_runs_are_listed_and_explained(core_root: Path) -> None:
    assert (core_root / "core.sqlite").is_file()
    runs = _stemma(core_root, "runs")
    assert runs.returncode == 0, runs.stderr
    ids = [line.split()[0] for line in runs.stdout.splitlines() if line.startswith("hello_")]
    assert len(ids) == 2, runs.stdout
    status = _stemma(core_root, "status", ids[0])
    assert status.returncode == 0, status.stderr
    assert "hello" in status.stdout
    explained = _stemma(core_root, "explain", "hello")
    assert explained.returncode == 0, explained.stderr
    assert "'hi' → 'hello'" in explained.stdout, explained.stdout
