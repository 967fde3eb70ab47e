"""A worker stages through the light Delta worker store: no deltalake, no pyarrow until it reads.

Importing every module of the full store was a quarter of a worker's start-up, paid once per
local worker and once per SLURM array element (issue 19). The tables a run leaves are the same
either way: a unit's inputs and a curator's other reads open the full store on first use.
"""

import json
import pathlib
import sys
from typing import Any

import polars as pl
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))  # spawned workers inherit sys.path
from worker_modules_probe import (
    AncestryCurator,
    DryModulesSeen,
    HydratedDataModulesSeen,
    HydratedModulesSeen,
    ModulesSeen,
)

from benchmarks.bench_ops import MakeData
from stemma.core.engine.dispatch.input_rows import SMALL_INPUT_BYTES
from stemma.core.front.pipeline import Pipeline
from stemma.core.store.protocols import WorkerStore
from stemma.core.store.worker_store import open_worker_store
from stemma.storage import DeltaStore, artifacts, executions
from stemma.storage.content_files import LARGE_CONTENT_BYTES
from stemma.storage.schemas import COMMIT_ORDER, user_content_table
from stemma.storage.worker_store import DeltaWorkerStore


def test_a_fresh_worker_runs_and_stages_its_unit_without_deltalake_or_pyarrow(
    tmp_path: pathlib.Path,
) -> None:
    root = tmp_path / "a root"
    pipeline = Pipeline.create("light", root=root, max_workers=1)
    seen = pipeline.run(ModulesSeen, params={"count": 3})
    curated = pipeline.run(AncestryCurator, inputs={"items": seen.output("seen")})
    assert pipeline.finalize()["overall_success"] is True

    made = artifacts(root, step_name="test.modules_seen")
    contents = [json.loads(text) for text in made.get_column("content").to_list()]
    assert len(contents) == 3
    for content in contents:  # what the worker had loaded when the unit ran
        assert content["deltalake"] is False
        assert content["pyarrow"] is False
        assert content["stemma.storage.delta_store"] is False
    assert curated.succeeded_count == 1
    row = executions(root, step_name="test.ancestry_curator").row(0, named=True)
    assert json.loads(row["metadata"])["ancestors"] == 3  # the full store's read answered


def test_a_worker_runs_units_that_do_not_hydrate_their_inputs_without_reading_the_store(
    tmp_path: pathlib.Path,
) -> None:
    root = tmp_path / "a root"
    pipeline = Pipeline.create("dry", root=root, max_workers=1)
    seen = pipeline.run(ModulesSeen, params={"count": 3})
    dry = pipeline.run(
        DryModulesSeen,
        inputs={"items": seen.output("seen")},
        execution={"artifacts_per_unit": 1},
    )
    assert pipeline.finalize()["overall_success"] is True
    assert dry.succeeded_count == 3

    made = artifacts(root, step_name="test.modules_seen")
    sizes = dict(zip(made["artifact_id"].to_list(), made["size"].to_list(), strict=True))
    reports = artifacts(root, step_name="test.dry_modules_seen").get_column("content").to_list()
    given: list[list[Any]] = []
    for report in map(json.loads, reports):  # the orchestrator sent the rows: no Delta read
        assert (report["deltalake"], report["pyarrow"]) == (False, False)
        given.extend(report["given"])
    assert sorted(given) == sorted([i, True, size] for i, size in sizes.items())


@pytest.mark.parametrize(("pad", "worker_reads"), [(0, False), (SMALL_INPUT_BYTES, True)])
def test_a_worker_is_sent_small_inputs_content_and_reads_large_ones_itself(
    tmp_path: pathlib.Path, pad: int, worker_reads: bool
) -> None:
    root = tmp_path / "a root"
    pipeline = Pipeline.create("hydrated", root=root, max_workers=1)
    seen = pipeline.run(ModulesSeen, params={"count": 3, "pad": pad})
    hydrated = pipeline.run(
        HydratedModulesSeen,
        inputs={"items": seen.output("seen")},
        execution={"artifacts_per_unit": 1},
    )
    assert pipeline.finalize()["overall_success"] is True
    assert hydrated.succeeded_count == 3

    made = artifacts(root, step_name="test.modules_seen")
    stored = {row["artifact_id"]: row for row in made.iter_rows(named=True)}
    reports = artifacts(root, step_name="test.hydrated_modules_seen").get_column("content")
    for report in map(json.loads, reports.to_list()):
        # small inputs came with the unit (no Delta read); a large one the worker read itself
        assert (report["deltalake"], report["pyarrow"]) == (worker_reads, worker_reads)
        ((artifact_id, content, size),) = report["given"]
        assert (content, size) == (stored[artifact_id]["content"], stored[artifact_id]["size"])


def test_a_worker_reads_a_large_input_from_its_file_without_opening_a_table(
    tmp_path: pathlib.Path,
) -> None:
    root = tmp_path / "a root"
    pipeline = Pipeline.create("large", root=root, max_workers=1)
    made = pipeline.run(MakeData, params={"count": 2, "size": int(LARGE_CONTENT_BYTES * 1.05)})
    hydrated = pipeline.run(
        HydratedDataModulesSeen,
        inputs={"items": made.output("data")},
        execution={"artifacts_per_unit": 1},
    )
    assert pipeline.finalize()["overall_success"] is True
    assert hydrated.succeeded_count == 2

    stored = pipeline.store.load_artifacts(pipeline.artifact_ids(made.output("data")))
    reports = artifacts(root, step_name="test.hydrated_data_modules_seen").get_column("content")
    for report in map(json.loads, reports.to_list()):
        # its row came with the unit; its content is read from its file: no Delta, no Arrow
        assert (report["deltalake"], report["pyarrow"]) == (False, False)
        ((artifact_id, size, tail),) = report["given"]
        content = stored[artifact_id].content or b""
        assert (size, tail) == (len(content), content[-8:].hex())
        assert size >= LARGE_CONTENT_BYTES


def test_the_delta_kind_opens_the_worker_store_and_other_kinds_their_full_store(
    tmp_path: pathlib.Path,
) -> None:
    light = open_worker_store(tmp_path / "d", kind="delta")
    assert isinstance(light, DeltaWorkerStore)
    assert isinstance(light, WorkerStore)
    assert light.layout.root == (tmp_path / "d").absolute()
    full = open_worker_store(tmp_path / "s", kind="sqlite")
    assert type(full).__name__ == "SqliteStore"
    with pytest.raises(AttributeError):
        _ = light._not_a_read  # pyright: ignore[reportAttributeAccessIssue]


def test_what_the_worker_store_stages_the_full_store_commits(tmp_path: pathlib.Path) -> None:
    root = tmp_path / "root"
    pipeline = Pipeline.create("stage", root=root, max_workers=1)
    pipeline.run(ModulesSeen, params={"count": 2})
    pipeline.finalize()
    assert not list((root / "staging").rglob("*.parquet"))  # everything staged was committed
    assert DeltaStore(root).load_artifacts(
        artifacts(root, step_name="test.modules_seen").get_column("artifact_id").to_list()
    )


def test_each_tables_polars_schema_is_its_arrow_schema_read_by_polars() -> None:
    specs = [*COMMIT_ORDER, user_content_table("user/t", (("a", "json"), ("b", "list<string>")))]
    for spec in specs:
        from_arrow = pl.from_arrow(spec.arrow_schema.empty_table())  # pyright: ignore[reportUnknownMemberType]
        assert isinstance(from_arrow, pl.DataFrame)
        assert from_arrow.schema == spec.polars_schema, spec.name
        assert tuple(spec.arrow_schema.names) == spec.columns
