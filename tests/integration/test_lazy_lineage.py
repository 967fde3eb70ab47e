"""Lineage of lazy steps: outputs named by their step, and the raw file a step read at its top."""

from __future__ import annotations

import json
import pathlib
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from stemma.core import OUT, ArtifactStep, apply, lower, run
from stemma.core.cli.main import main
from stemma.core.exit_codes import ExitCode
from stemma.storage import artifacts, lineage


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
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, ArtifactStep]:
    folder = tmp_path_factory.mktemp("lazy_lineage")
    raw = folder / "raw.csv"
    raw.write_text("a\nb\nc\n")
    root = folder / "root"
    handle = _graph(raw)
    run(handle, root=root, name="feat", max_workers=1)
    return root, raw, handle


def _made_by(root: Path, step: str, kind: str) -> str:
    frame = artifacts(root, step_name=step, artifact_type=kind)
    [artifact_id] = frame.get_column("artifact_id").to_list()
    return str(artifact_id)


def _content_hash(handle: ArtifactStep) -> str:
    counted = lower(handle).deps[0]
    return str(counted.config["inputs"]["source"]["$file"]["content_hash"])


def test_lineage_names_lazy_outputs_by_their_step_and_ends_at_the_file_read(
    built: tuple[Path, Path, ArtifactStep],
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
    built: tuple[Path, Path, ArtifactStep],
) -> None:
    root, raw, _ = built
    for kind in ("file_ref", "metric"):
        up = lineage(root, _made_by(root, "feat/count", kind))
        assert up.select("depth", "source_artifact_type", "source_name").rows() == [
            (1, "input_file", str(raw.absolute()))
        ]


def test_stemma_lineage_shows_the_file_path_and_content_and_the_steps_by_name(
    built: tuple[Path, Path, ArtifactStep], capsys: pytest.CaptureFixture[str]
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
