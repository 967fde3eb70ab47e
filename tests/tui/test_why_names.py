"""The step screen's Why tab names the input file that changed, as ``stemma explain`` does."""

from __future__ import annotations

from pathlib import Path

from stemma.core.front.pipeline import Pipeline
from stemma.core.operations.builtins import IngestData
from stemma.tui.client import DashboardClient


def _ingest(root: Path, folder: Path) -> str:
    pipeline = Pipeline.create("ingest", root=root, max_workers=1)
    pipeline.run(IngestData, params={"paths": [str(p) for p in sorted(folder.glob("*.csv"))]})
    pipeline.finalize()
    return pipeline.run_id


def test_why_of_an_ingestion_after_an_edit_names_the_edited_file(tmp_path: Path) -> None:
    folder = tmp_path / "csv"
    folder.mkdir()
    for index in range(3):
        (folder / f"part_{index}.csv").write_text(f"x\n{index}\n")
    _ingest(tmp_path / "store", folder)
    (folder / "part_1.csv").write_text("x\n10\n")
    run_id = _ingest(tmp_path / "store", folder)

    why = DashboardClient(tmp_path / "store").step(run_id, 0).why

    assert why[1].startswith("ran: key changed since ingest_")
    [change] = why[2:]
    assert change.strip().startswith("params.params.files part_1.csv: content ")
    assert change.endswith("4 bytes → 5 bytes")
