"""`stemma artifacts`, `lineage` and `explain` name files and steps beside the ids (Delta store).

Four CSVs are ingested, scaled and scored; then one CSV is edited and the pipeline runs again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stemma.core.cli.main import main
from stemma.core.examples import MetricCalculator, Transform
from stemma.core.exit_codes import ExitCode
from stemma.core.front.pipeline import Pipeline
from stemma.core.operations.builtins import IngestData


def _run(root: Path, folder: Path) -> None:
    pipeline = Pipeline.create("names", root=root, max_workers=1)
    paths = [str(p) for p in sorted(folder.glob("*.csv"))]
    data = pipeline.run(IngestData, params={"paths": paths})
    scaled = pipeline.run(Transform, inputs={"dataset": data.output("data")}, params={"scale": 2.0})
    pipeline.run(MetricCalculator, inputs={"dataset": scaled.output("dataset")})
    pipeline.finalize()


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("names")
    folder = base / "csv"
    folder.mkdir()
    for index in range(4):
        (folder / f"data_{index}.csv").write_text(f"x,y\n1,{index}\n2,3\n")
    _run(base / "store", folder)
    (folder / "data_3.csv").write_text("x,y\n1,9\n2,3\n5,5\n")
    _run(base / "store", folder)
    return base / "store"


def _out(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    capsys.readouterr()
    assert main(list(argv)) == ExitCode.OK
    return capsys.readouterr().out


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    return json.loads(_out(capsys, *argv, "--format", "json"))


def test_artifacts_of_type_data_say_name_rows_columns_and_size(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = _json(
        capsys, "artifacts", "--root", str(root), "--type", "data", "--step", "ingest_data"
    )
    details = sorted(row["detail"] for row in rows)
    assert details == [
        "data_0.csv: 2 rows (x,y), 12 bytes",
        "data_1.csv: 2 rows (x,y), 12 bytes",
        "data_2.csv: 2 rows (x,y), 12 bytes",
        "data_3.csv: 2 rows (x,y), 12 bytes",
        "data_3.csv: 3 rows (x,y), 16 bytes",
    ]


def test_lineage_table_shows_short_ids_with_file_and_step_names(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    [metric] = _json(capsys, "artifacts", "--root", str(root), "--type", "metric", "--limit", "1")
    table = _out(capsys, "lineage", metric["artifact_id"][:10], "--root", str(root))
    header, first, second = table.splitlines()
    assert header.split() == [
        "depth", "source", "source_role", "target", "target_role", "step", "execution"
    ]  # fmt: skip
    assert "data_3_scaled.csv" in first
    assert f"{metric['artifact_id'][:12]} data_3_scaled_metrics.json" in first
    assert "example.metrics" in first
    assert metric["artifact_id"] not in table  # the full id is in --format csv/json
    assert "data_3.csv" in second
    assert "example.transform" in second


def test_lineage_json_keeps_full_ids_and_adds_the_names(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    [metric] = _json(capsys, "artifacts", "--root", str(root), "--type", "metric", "--limit", "1")
    up = _json(capsys, "lineage", metric["artifact_id"], "--root", str(root))
    assert [(e["depth"], e["source_name"], e["target_name"], e["step_name"]) for e in up] == [
        (1, "data_3_scaled.csv", "data_3_scaled_metrics.json", "example.metrics"),
        (2, "data_3.csv", "data_3_scaled.csv", "example.transform"),
    ]
    assert up[0]["target_artifact_id"] == metric["artifact_id"]


def test_explain_names_the_edited_input_file_with_its_short_hashes(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _json(
        capsys, "artifacts", "--root", str(root), "--type", "data", "--step", "ingest_data"
    )
    # The edit made data_3.csv 16 bytes from 12; created_at cannot tell them apart, shown to the
    # second, when both runs end within one.
    old, new = sorted(
        (row for row in data if row["detail"].startswith("data_3.csv")),
        key=lambda row: row["detail"].endswith("16 bytes"),
    )
    text = _out(capsys, "explain", "ingest_data", "--root", str(root))
    # a data artifact's id is its content hash: the short hashes are the ids' first digits
    change = f"data_3.csv: content {old['artifact_id'][:8]} → {new['artifact_id'][:8]}"
    assert change in text, text
    assert "12 bytes → 16 bytes" in text
    assert "content_hash" not in text
    assert "files[" not in text
