"""``InputSpec.materialize_as``: the names and layout a worker finds its inputs under, and keeps.

The cases the docs describe (docs/how-to/wrap-a-command-line-tool.md,
docs/how-to/custom-artifact-type.md, the materialize module): a role's inputs are written under
the sandbox's ``materialized_inputs/{role}/``, under their own names, or with the role's
``materialize_as`` extension instead of their own; metrics get ``.json``; file refs are not
copied (their path is the file itself). Outputs named after the files the worker found keep
those names and are linked to their inputs. One pipeline, on the local process backend, runs
every case.
"""

from __future__ import annotations

import json
import os
import pathlib
import sys
from dataclasses import dataclass
from typing import Any

import polars as pl
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))  # spawned workers inherit sys.path
from materialize_operations import SeeAsMade, SeeAsText

from stemma.core.engine.references import StepResult
from stemma.core.front.pipeline import Pipeline
from stemma.core.operations import IngestData, IngestFiles
from stemma.core.store import open_run_store
from stemma.storage import executions, lineage
from tests.roots_under_test import Root, new_root, on_this_machine

POEM = "line\nso much depends\nupon\n"
NOTES = "item\neggs\nmilk\n"
FOLDER = "materialized_inputs/text"


@dataclass(frozen=True, kw_only=True)
class Seen:
    """One step of :class:`SeeAsText` or :class:`SeeAsMade`, as its outputs tell it."""

    step: StepResult
    reports: dict[str, dict[str, Any]]
    """What the worker reported, by the input's original name."""
    copies: dict[str, str]
    """The ``copy`` outputs' artifact ids, by their original name."""


@dataclass(frozen=True, kw_only=True)
class Run:
    root: Root
    here: pathlib.Path
    """Where the root's files on the machine that ran it are (a bucket root's local half)."""
    sources: dict[str, pathlib.Path]
    """The files ingested, by name."""
    inputs: dict[str, str]
    """The ingested data artifacts' ids, by original name."""
    cases: dict[str, Seen]


def _seen(pipeline: Pipeline, root: Root, step: StepResult) -> Seen:
    store = open_run_store(root)
    reports = store.load_artifacts(pipeline.artifact_ids(step.output("seen")))
    copies = store.load_artifacts(pipeline.artifact_ids(step.output("copy")))
    parsed = [json.loads(a.content or b"{}") for a in reports.values()]
    return Seen(
        step=step,
        reports={report["input"]: report for report in parsed},
        copies={a.original_name: a.artifact_id for a in copies.values()},
    )


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    base = tmp_path_factory.mktemp("materialize")
    root, refs = new_root(base), base / "refs"
    refs.mkdir()
    sources = {"poem.csv": base / "poem.csv", "notes.txt": base / "notes.txt"}
    sources["poem.csv"].write_text(POEM)
    sources["notes.txt"].write_text(NOTES)  # a CSV already named with the extension asked for
    (refs / "poem.csv").write_text(POEM)
    pipeline = Pipeline.create("materialize", root=root, max_workers=2)
    data = pipeline.run(IngestData, params={"paths": [str(p) for p in sources.values()]})
    files = pipeline.run(IngestFiles, params={"paths": [str(refs / "poem.csv")]})
    as_text = pipeline.run(SeeAsText, inputs={"text": data.output("data")})
    cases = {
        "data-as-text": _seen(pipeline, root, as_text),
        "data-as-made": _seen(
            pipeline, root, pipeline.run(SeeAsMade, inputs={"text": data.output("data")})
        ),
        "metrics-as-json": _seen(
            pipeline, root, pipeline.run(SeeAsMade, inputs={"text": as_text.output("seen")})
        ),
        "file-refs-as-text": _seen(
            pipeline, root, pipeline.run(SeeAsText, inputs={"text": files.output("files")})
        ),
    }
    ingested = open_run_store(root).load_artifacts(pipeline.artifact_ids(data.output("data")))
    summary = pipeline.finalize()
    assert summary["overall_success"], summary
    return Run(
        root=root,
        here=on_this_machine(root),
        sources={**sources, "refs/poem.csv": refs / "poem.csv"},
        inputs={a.original_name: a.artifact_id for a in ingested.values()},
        cases=cases,
    )


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        # materialize_as replaces an input's extension, and keeps one it already has
        ("data-as-text", {"poem.csv": f"{FOLDER}/poem.txt", "notes.txt": f"{FOLDER}/notes.txt"}),
        ("data-as-made", {"poem.csv": f"{FOLDER}/poem.csv", "notes.txt": f"{FOLDER}/notes.txt"}),
        # a metric named without an extension is written as JSON
        (
            "metrics-as-json",
            {"poem_seen": f"{FOLDER}/poem_seen.json", "notes_seen": f"{FOLDER}/notes_seen.json"},
        ),
        ("file-refs-as-text", {"poem.csv": None}),  # not copied into the sandbox at all
    ],
)
def test_worker_finds_each_input_under_the_name_its_role_declares(
    run: Run, case: str, expected: dict[str, str | None]
) -> None:
    reports = run.cases[case].reports
    assert {name: report["relative"] for name, report in reports.items()} == expected
    assert all(report["pid"] != os.getpid() for report in reports.values())  # a worker process


@pytest.mark.parametrize("case", ["data-as-text", "data-as-made"])
def test_materialized_file_holds_the_inputs_bytes(run: Run, case: str) -> None:
    reports = run.cases[case].reports
    assert {name: report["text"] for name, report in reports.items()} == {
        "poem.csv": POEM,
        "notes.txt": NOTES,
    }


def test_metric_input_is_materialized_as_its_json(run: Run) -> None:
    written = {
        name: json.loads(report["text"])
        for name, report in run.cases["metrics-as-json"].reports.items()
    }
    made = run.cases["data-as-text"].reports
    assert written == {"poem_seen": made["poem.csv"], "notes_seen": made["notes.txt"]}


def test_materialize_as_leaves_a_file_ref_at_the_file_it_refers_to(run: Run) -> None:
    (report,) = run.cases["file-refs-as-text"].reports.values()
    assert pathlib.Path(report["path"]) == run.sources["refs/poem.csv"].resolve()
    assert report["text"] == POEM


def test_sandbox_lies_under_working_by_step_operation_and_execution(run: Run) -> None:
    seen = run.cases["data-as-text"]
    ran = executions(run.root, step_run_id=seen.step.step_run_id)
    run_ids = set(ran.get_column("execution_run_id").to_list())
    for report in seen.reports.values():
        parts = pathlib.Path(report["sandbox"]).relative_to(run.here).parts
        working, step_dir, ab, cd, execution_run_id = parts
        assert (working, step_dir) == ("working", f"{seen.step.step_number}_test.see_as_text")
        assert (ab, cd) == (execution_run_id[:2], execution_run_id[2:4])
        assert execution_run_id in run_ids


def test_outputs_keep_the_materialized_names_and_link_to_their_inputs(run: Run) -> None:
    copies = run.cases["data-as-text"].copies
    assert sorted(copies) == ["notes.txt", "poem.txt"]
    stored = open_run_store(run.root).load_artifacts(list(copies.values()))
    assert sorted((a.original_name, a.extension, a.content) for a in stored.values()) == [
        ("notes.txt", ".txt", NOTES.upper().encode()),
        ("poem.txt", ".txt", POEM.upper().encode()),
    ]
    # (The file-ref step made poem.txt's bytes too: one artifact, so ask for this step's edges.)
    step_run_id = run.cases["data-as-text"].step.step_run_id
    parents = {
        name: set(
            lineage(run.root, artifact_id, max_depth=1)
            .filter(pl.col("step_run_id") == step_run_id)
            .get_column("source_artifact_id")
        )
        for name, artifact_id in copies.items()
    }
    assert parents == {
        "poem.txt": {run.inputs["poem.csv"]},
        "notes.txt": {run.inputs["notes.txt"]},
    }
