"""What stemma keeps in the system's temp folder is named for its process; a dead one's goes.

Every test points ``tempfile`` at its own temp folder: nothing here touches the real one.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from stemma.core import temp_dirs
from stemma.core.backends import LocalBackend


@pytest.fixture(autouse=True)
def own_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    base = tmp_path / "system temp"
    base.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(base))
    monkeypatch.setattr(temp_dirs, "_swept", set[str]())
    return base


def _dead_pid() -> int:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout)


def test_a_dead_process_s_folders_go_and_the_living_s_stay(own_temp: Path) -> None:
    host = temp_dirs.host_tag()
    dead = own_temp / f"stemma-local-{host}-{_dead_pid()}-abc123"
    alive = own_temp / f"stemma-local-{host}-{os.getppid()}-def456"
    elsewhere = own_temp / f"stemma-local-otherhost-{_dead_pid()}-ghi789"
    unrelated = own_temp / "something-else"
    for folder in (dead, alive, elsewhere, unrelated):
        (folder / "marker").mkdir(parents=True)
    made = temp_dirs.owned_temp_dir("local")
    assert made.name.startswith(f"stemma-local-{host}-{os.getpid()}-")
    assert sorted(p.name for p in own_temp.iterdir()) == sorted(
        [made.name, alive.name, elsewhere.name, unrelated.name]
    )


def test_unnamed_leftovers_go_once_a_day_old(own_temp: Path) -> None:
    old, young = own_temp / "stemma-curator-abcd1234", own_temp / "stemma-curator-efgh5678"
    for folder in (old, young):
        folder.mkdir()
    day_ago = time.time() - temp_dirs.LEGACY_AGE_SECONDS - 60
    os.utime(old, (day_ago, day_ago))
    assert temp_dirs.sweep_leftovers("curator") == [old]
    assert young.exists()


def test_the_local_backend_s_markers_are_named_for_its_process_and_removed(
    own_temp: Path,
) -> None:
    backend = LocalBackend(max_workers=1)
    try:
        assert backend.submit(abs, -3).result(timeout=60) == 3  # (markers are made on submit)
        [markers] = list(own_temp.iterdir())
        assert markers.name.startswith(f"stemma-local-{temp_dirs.host_tag()}-{os.getpid()}-")
    finally:
        backend.terminate()
    assert list(own_temp.iterdir()) == []
