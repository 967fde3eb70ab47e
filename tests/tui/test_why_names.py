"""The step screen's Why tab names the input file that changed, as ``stemma explain`` does."""

from __future__ import annotations

import pathlib
from pathlib import Path

from stemma.core import OUT, apply, run
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


def write(text: str, out_path: str) -> str:
    pathlib.Path(out_path).write_text(text)
    return text


def shout(source: str, out_path: str) -> str:
    loud = pathlib.Path(source).read_text().upper()
    pathlib.Path(out_path).write_text(loud)
    return loud


def test_why_of_a_lazy_step_names_its_upstream_step_and_what_changed_in_it(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    for text in ("hi", "ho"):
        said = apply(name="words/said", fn=write, version="v1", text=text, out_path=OUT)
        loud = apply(name="words/loud", fn=shout, version="v1", source=said, out_path=OUT)
        run(loud, root=root, name="words", max_workers=1)
    client = DashboardClient(root)
    newest = client.runs()[0].run_id
    [number] = [s.number for s in client.run(newest).steps if s.name == "words/loud"]

    why = client.step(newest, number).why

    assert why[2].strip().startswith("upstream words/said changed (key "), why
    assert why[3].strip() == "params.inputs.text: 'hi' → 'ho'", why
