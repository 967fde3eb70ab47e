"""Lineage down from a raw file on a root whose runs predate recording a file's path."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from stemma.core.cli.main import main
from stemma.core.exit_codes import ExitCode
from stemma.storage import PathsNotRecordedWarning, lineage

KEYS_V0_ROOT = Path(__file__).parents[1] / "integration" / "fixtures" / "keys_v0" / "root"


@pytest.fixture
def old_root(tmp_path: Path) -> Path:
    root = tmp_path / "old root"
    shutil.copytree(KEYS_V0_ROOT, root)
    return root


def test_an_empty_answer_on_a_root_recorded_before_paths_says_why(old_root: Path) -> None:
    with pytest.warns(PathsNotRecordedWarning, match=r"1 step attempt\(s\) of this root read"):
        found = lineage(old_root, old_root.parent / "words.txt", "down")
    assert found.is_empty()


def test_stemma_lineage_of_a_file_on_such_a_root_notes_why_it_is_empty(
    old_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where = str(old_root.parent / "words.txt")
    assert main(["lineage", where, "--root", str(old_root), "--format", "json"]) == ExitCode.OK
    out, err = capsys.readouterr()
    assert out.strip() == "[]"
    assert err.startswith(f"stemma: note: nothing recorded is made from {where}, but 1 step")
    assert "recorded before stemma recorded their paths" in err
