"""Key diffs name the input file that changed, not ``files[3].content_hash``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stemma.core import apply, config_diff
from stemma.core.operations.builtins import IngestData


def _files(folder: Path) -> list[dict[str, Any]]:
    """What an ingestion step's key holds for the CSVs of ``folder``: its ``files`` param."""
    params = IngestData.Params(paths=[str(p) for p in sorted(folder.glob("*.csv"))])
    return [entry.model_dump() for entry in params.files]


def _write(folder: Path, name: str, text: str) -> None:
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text)


def test_config_diff_names_the_edited_file_with_short_hashes(tmp_path: Path) -> None:
    for index in range(4):
        _write(tmp_path / "csv", f"data_{index}.csv", f"x,y\n1,{index}\n")
    before = _files(tmp_path / "csv")
    _write(tmp_path / "csv", "data_3.csv", "x,y\n1,30\n")
    after = _files(tmp_path / "csv")

    [line] = config_diff({"params": {"files": before}}, {"params": {"files": after}})

    old, new = before[3]["content_hash"][:8], after[3]["content_hash"][:8]
    assert line == f"params.files data_3.csv: content {old} → {new}, 8 bytes → 9 bytes"
    assert "content_hash" not in line


def test_config_diff_of_an_added_file_names_it_once(tmp_path: Path) -> None:
    _write(tmp_path / "csv", "b.csv", "x\n1\n")
    _write(tmp_path / "csv", "c.csv", "x\n2\n")
    before = _files(tmp_path / "csv")
    _write(tmp_path / "csv", "a.csv", "x\n3\n")  # sorts first: every position shifts
    after = _files(tmp_path / "csv")

    lines = config_diff({"files": before}, {"files": after})

    assert lines == [f"files: added a.csv (content {after[0]['content_hash'][:8]}, 4 bytes)"]


def test_config_diff_of_a_lazy_step_path_input_says_a_file_changed(tmp_path: Path) -> None:
    data = tmp_path / "input.txt"
    data.write_text("one")

    def count(path: Path) -> int:
        return len(path.read_text())

    first = apply(name="count", fn=count, version="v1", path=data).lower().config
    data.write_text("three")
    second = apply(name="count", fn=count, version="v1", path=data).lower().config

    [line] = config_diff(first, second)
    assert line.endswith("3 bytes → 5 bytes")
    assert "(file): content " in line
