"""Lineage of lazy steps: outputs named by their step, and the raw file a step read at its top."""

from __future__ import annotations

import json
import pathlib
import warnings
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from stemma.core import OUT, ArtifactStep, apply, lower, run
from stemma.core.cli.main import main
from stemma.core.exit_codes import ExitCode
from stemma.storage import artifacts, lineage
from tests.roots_under_test import Root, new_root


def count_lines(source: str, out_path: str) -> int:
    lines = len(pathlib.Path(source).read_text().splitlines())
    pathlib.Path(out_path).write_text(str(lines))
    return lines


def double(counted: str, out_path: str) -> int:
    pathlib.Path(out_path).write_text(pathlib.Path(counted).read_text() * 2)
    return 2


def _graph(raw: Path) -> ArtifactStep:
    counted = apply(name="feat/count", fn=count_lines, version="v1", source=raw, out_path=OUT)
    return apply(name="feat/double", fn=double, version="v1", counted=counted, out_path=OUT)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Root, Path, ArtifactStep]:
    folder = tmp_path_factory.mktemp("lazy_lineage")
    raw = folder / "raw.csv"
    raw.write_text("a\nb\nc\n")
    root = new_root(folder)
    handle = _graph(raw)
    run(handle, root=root, name="feat", max_workers=1)
    return root, raw, handle


def _made_by(root: Root, step: str, kind: str) -> str:
    frame = artifacts(root, step_name=step, artifact_type=kind)
    [artifact_id] = frame.get_column("artifact_id").to_list()
    return str(artifact_id)


def _content_hash(handle: ArtifactStep) -> str:
    counted = lower(handle).deps[0]
    return str(counted.config["inputs"]["source"]["$file"]["content_hash"])


def test_lineage_names_lazy_outputs_by_their_step_and_ends_at_the_file_read(
    built: tuple[Root, Path, ArtifactStep],
) -> None:
    root, raw, handle = built
    value = _made_by(root, "feat/double", "metric")
    up = lineage(root, value).sort("depth")
    rows = up.select(
        "depth", "source_artifact_type", "source_role", "source_name", "target_name", "step_name"
    ).rows()
    assert rows == [
        (1, "file_ref", "counted", "feat/count", "value.json", "feat/double"),
        (2, "input_file", "source", str(raw.absolute()), "feat/count", "feat/count"),
    ]
    file_row = up.filter(pl.col("source_artifact_type") == "input_file").row(0, named=True)
    assert file_row["source_artifact_id"] == _content_hash(handle)
    assert file_row["target_artifact_id"] == _made_by(root, "feat/count", "file_ref")
    assert lineage(root, value, max_depth=1).height == 1  # the file is one hop further


def test_lineage_of_a_first_steps_output_is_the_file_it_read(
    built: tuple[Root, Path, ArtifactStep],
) -> None:
    root, raw, _ = built
    for kind in ("file_ref", "metric"):
        up = lineage(root, _made_by(root, "feat/count", kind))
        assert up.select("depth", "source_artifact_type", "source_name").rows() == [
            (1, "input_file", str(raw.absolute()))
        ]


def test_stemma_lineage_shows_the_file_path_and_content_and_the_steps_by_name(
    built: tuple[Root, Path, ArtifactStep], capsys: pytest.CaptureFixture[str]
) -> None:
    root, raw, handle = built
    value = _made_by(root, "feat/double", "metric")
    assert main(["lineage", value[:12], "--root", str(root)]) == ExitCode.OK
    table = capsys.readouterr().out.splitlines()
    assert "feat/count" in table[1]
    assert f"file {raw.absolute()} (content {_content_hash(handle)[:8]})" in table[2]
    assert "v1-" not in "\n".join(table)
    assert main(["lineage", value, "--root", str(root), "--format", "json"]) == ExitCode.OK
    edges: list[dict[str, Any]] = json.loads(capsys.readouterr().out)
    assert [e["source_artifact_type"] for e in edges] == ["file_ref", "input_file"]


def test_lineage_down_from_a_raw_file_lists_what_was_made_from_it(
    built: tuple[Root, Path, ArtifactStep],
) -> None:
    root, raw, handle = built
    down = lineage(root, raw, "down").sort("depth", "target_role")
    rows = down.select(
        "depth", "source_artifact_type", "source_name", "target_name", "target_role", "step_name"
    ).rows()
    where = str(raw.absolute())
    assert rows == [
        (1, "input_file", where, "feat/count", "output", "feat/count"),
        (1, "input_file", where, "value.json", "value", "feat/count"),
        (2, "file_ref", "feat/count", "feat/double", "output", "feat/double"),
        (2, "file_ref", "feat/count", "value.json", "value", "feat/double"),
    ]
    assert set(down.filter(pl.col("depth") == 1).get_column("source_artifact_id")) == {
        _content_hash(handle)
    }
    assert lineage(root, raw, "down", max_depth=1).height == 2


def test_lineage_takes_a_raw_file_as_a_str_path_relative_to_the_current_directory(
    built: tuple[Root, Path, ArtifactStep], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, raw, _ = built
    monkeypatch.chdir(raw.parent)
    by_path = lineage(root, raw, "down")
    assert lineage(root, "raw.csv", "down").equals(by_path)
    assert lineage(root, str(raw), "down").equals(by_path)


def test_lineage_up_from_a_raw_file_is_refused_saying_to_walk_down(
    built: tuple[Root, Path, ArtifactStep],
) -> None:
    root, raw, _ = built
    with pytest.raises(ValueError, match=r"raw input file.*walk down from it"):
        lineage(root, raw, "up")


def test_a_file_no_step_read_made_nothing_and_no_warning_is_given(
    built: tuple[Root, Path, ArtifactStep],
) -> None:
    root, raw, _ = built
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every run of this root recorded its paths
        assert lineage(root, raw.with_name("other.csv"), "down").is_empty()


def test_stemma_lineage_of_a_raw_file_shows_what_was_made_from_it(
    built: tuple[Root, Path, ArtifactStep], capsys: pytest.CaptureFixture[str]
) -> None:
    root, raw, handle = built
    assert main(["lineage", str(raw), "--root", str(root)]) == ExitCode.OK
    out, err = capsys.readouterr()
    table = out.splitlines()
    assert len(table) == 5  # the header, then the file's two rows and feat/double's two
    assert all(
        f"file {raw.absolute()} (content {_content_hash(handle)[:8]})" in line
        for line in table[1:3]
    )
    assert all("feat/double" in line for line in table[3:])
    assert err == ""
