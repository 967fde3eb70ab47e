"""A root in S3 or Azure: the tables in the bucket, live state on this machine, keys as anywhere.

Against the real S3 server and Azurite on 127.0.0.1 (``scripts/object-stores.sh``), through the
public doors: ``run`` with ``root="s3://…"``, ``Pipeline.create(root=…)``, ``stemma … --root``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

from stemma.core import OUT, ArtifactStep, Pipeline, RootURLError, apply, lower, run
from stemma.core.engine.references import StepResult
from stemma.core.examples import DataGenerator, MetricCalculator
from stemma.core.store.locations import RootLayout, resolve_root
from stemma.storage import (
    CompactionPolicy,
    DeltaStore,
    artifacts,
    compact_root,
    executions,
    steps,
    vacuum_root,
)
from stemma.storage import auto_compaction as auto_compaction_module
from stemma.storage.compaction_policy import DEFAULT_SMALL_FILES, DEFAULT_SMALL_FILES_IN_BUCKET
from stemma.storage.output_mirror import MANIFEST, SINGLE_FILE
from stemma.storage.tables import BUCKET_CHECKPOINT_INTERVAL
from tests.core.lazy_functions import CALLS_ENV, calls, write_json
from tests.storage.object_roots.conftest import bucket_keys
from tests.storage.object_roots.lazy_steps import add, square, where
from tests.storage.test_log_growth import commit_numbered


@pytest.fixture(autouse=True)
def _calls_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "calls").mkdir()
    monkeypatch.setenv(CALLS_ENV, str(tmp_path / "calls"))


def _graph() -> ArtifactStep:
    squares = [apply(name=f"squares/{i}", fn=square, version="v1", x=i) for i in range(3)]
    return apply(name="total", fn=add, version="v1", a=squares[1], b=squares[2])


def test_lazy_steps_run_in_the_bucket_and_a_rerun_finds_them(
    bucket_root: str, tmp_path: Path
) -> None:
    squares = [apply(name=f"squares/{i}", fn=square, version="v1", x=i) for i in range(3)]

    first = run(*squares, root=bucket_root)
    again = run(*squares, root=bucket_root)

    assert [a.value for a in first] == [0, 1, 4]
    assert [a.value for a in again] == [0, 1, 4]
    assert [a.cached for a in again] == [True, True, True]
    assert calls()["square"] == 3  # the second run computed nothing
    keys = bucket_keys(bucket_root)
    for table in ("orchestration/steps", "orchestration/executions", "artifacts/metrics"):
        assert f"delta/{table}/_delta_log/00000000000000000000.json" in keys, table
    state = next((tmp_path / "state").iterdir())
    assert not (state / "delta").exists()  # nothing of the tables is kept on this machine
    assert json.loads((state / "object-root.json").read_text()) == {"root": bucket_root}


def test_a_pipeline_commits_into_the_bucket_and_its_rerun_is_cached(bucket_root: str) -> None:
    def build() -> tuple[list[StepResult], dict[str, Any]]:
        pipeline = Pipeline.create("in-a-bucket", root=bucket_root, max_workers=2)
        made = pipeline.run(DataGenerator, params={"count": 2, "rows": 4})
        scored = pipeline.run(MetricCalculator, inputs={"dataset": made.output("datasets")})
        return [made, scored], pipeline.finalize()

    _, first = build()
    before = executions(bucket_root).height
    again, _ = build()

    assert first["overall_success"] is True
    assert [s["succeeded"] for s in first["steps"]] == [1, 2]
    assert [r.metadata["cache"] for r in again] == ["step", "step"]  # found in the bucket
    assert executions(bucket_root).height == before == 3
    found = artifacts(bucket_root)["artifact_type"].value_counts().sort("artifact_type").rows()
    assert dict(found)["metric"] == 2


def test_one_graph_has_the_same_keys_on_a_local_root_and_in_a_bucket(
    bucket_root: str, tmp_path: Path
) -> None:
    graph = _graph()
    local = tmp_path / "laptop"

    run(graph, root=local)
    run(graph, root=bucket_root)

    def keys(root: str | Path) -> set[tuple[str, str]]:
        rows = steps(root).select("step_name", "step_spec_id").unique().rows()
        return {(name, fingerprint) for name, fingerprint in rows}

    assert keys(local) == keys(bucket_root)
    assert len(keys(local)) == 3  # total and the two squares it adds
    assert ("total", lower(graph).fingerprint) in keys(bucket_root)


def test_a_bucket_that_does_not_exist_is_refused_in_one_line_before_any_work(
    s3_env: str,
) -> None:
    with pytest.raises(RootURLError) as raised:
        run(apply(name="squares/0", fn=square, version="v1", x=0), root="s3://no-such-bucket/r")

    message = str(raised.value)
    assert message.startswith("root 's3://no-such-bucket/r' cannot be reached in S3: check the")
    assert "bucket's name ('no-such-bucket')" in message
    assert "\n" not in message
    assert calls()["square"] == 0


def test_an_endpoint_that_does_not_answer_names_the_endpoint_setting(
    s3_env: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing listens on 9
    with pytest.raises(RootURLError, match="check the endpoint and network") as raised:
        run(apply(name="squares/0", fn=square, version="v1", x=0), root="s3://any-bucket/r")
    assert "STEMMA_STORAGE_OPTIONS" in str(raised.value)
    assert calls()["square"] == 0


def test_storage_options_that_are_not_json_are_refused_naming_the_variable(
    s3_root: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STEMMA_STORAGE_OPTIONS", "endpoint=http://x")
    with pytest.raises(RootURLError, match=r"\$STEMMA_STORAGE_OPTIONS is not JSON"):
        run(apply(name="squares/0", fn=square, version="v1", x=0), root=s3_root)


def test_the_commands_read_a_bucket_root(bucket_root: str) -> None:
    run(apply(name="squares/2", fn=square, version="v1", x=2), root=bucket_root)

    def stemma(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "stemma.core.cli.main", *args, "--root", bucket_root],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert "completed" in stemma("runs")
    assert "squares/2" in stemma("artifacts")
    assert "squares/2" in stemma("explain", "squares/2")


def test_another_machine_finds_a_pipelines_work_in_the_bucket(
    bucket_root: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def build() -> list[StepResult]:
        pipeline = Pipeline.create("two-machines", root=bucket_root, max_workers=2)
        made = pipeline.run(DataGenerator, params={"count": 2, "rows": 4})
        scored = pipeline.run(MetricCalculator, inputs={"dataset": made.output("datasets")})
        pipeline.finalize()
        return [made, scored]

    build()
    before = executions(bucket_root).height
    monkeypatch.setenv("STEMMA_STATE_DIR", str(tmp_path / "another machine's state"))
    again = build()  # a local half made afresh: only the bucket is shared

    assert [r.metadata["cache"] for r in again] == ["step", "step"]
    assert executions(bucket_root).height == before


def test_another_machine_finds_lazy_steps_and_their_outputs_in_the_bucket(
    bucket_root: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = apply(name="json/a", fn=write_json, version="v1", data={"a": 1, "b": 2}, out_path=OUT)
    [first] = run(made, root=bucket_root)
    assert f"{first.relative_path}/{MANIFEST}" in bucket_keys(bucket_root)
    assert f"{first.relative_path}/{SINGLE_FILE}" in bucket_keys(bucket_root)  # OUT was one file

    monkeypatch.setenv("STEMMA_STATE_DIR", str(tmp_path / "another machine's state"))
    [found] = run(made, root=bucket_root)  # a local half made afresh: only the bucket is shared

    assert (found.cached, found.value) == (True, {"keys": 2})
    assert calls()["write_json"] == 1
    assert json.loads(found.path().read_text()) == {"a": 1, "b": 2}  # fetched to this machine
    assert found.path() != first.path()


def test_compact_and_vacuum_work_on_a_bucket_and_lose_no_row(bucket_root: str) -> None:
    for number in range(4):  # four commits: four small files in each table
        run(apply(name=f"squares/{number}", fn=square, version="v1", x=number), root=bucket_root)
    before = steps(bucket_root).height

    compacted = compact_root(bucket_root)
    dry = vacuum_root(bucket_root, retain_hours=0, min_retain_hours=0)
    applied = vacuum_root(bucket_root, retain_hours=0, min_retain_hours=0, apply=True)

    by_table = {c.table: c for c in compacted}
    assert (
        by_table["orchestration/steps"].files_before > by_table["orchestration/steps"].files_after
    )
    assert by_table["orchestration/steps"].files_after == 1
    replaced = {str(r.path) for r in dry.removals if r.kind.startswith("table ")}
    assert replaced
    assert all(path.startswith(f"{bucket_root}/delta/") for path in replaced)
    assert {str(r.path) for r in applied.removals if r.kind.startswith("table ")} == replaced
    keys = {f"{bucket_root}/{key}" for key in bucket_keys(bucket_root)}
    assert not replaced & keys  # the replaced files are gone from the bucket
    assert steps(bucket_root).height == before  # and every row still reads
    [again] = run(apply(name="squares/3", fn=square, version="v1", x=3), root=bucket_root)
    assert again.cached


def test_an_endpoint_and_plain_http_given_as_storage_options_reach_the_bucket(
    s3_root: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    endpoint = os.environ["AWS_ENDPOINT_URL"]
    monkeypatch.delenv("AWS_ENDPOINT_URL")
    monkeypatch.delenv("AWS_ALLOW_HTTP")
    options = {"endpoint": endpoint, "allow_http": "true", "aws_s3_locking_provider": ""}
    monkeypatch.setenv("STEMMA_STORAGE_OPTIONS", json.dumps(options))

    [built] = run(apply(name="squares/5", fn=square, version="v1", x=5), root=s3_root)

    assert built.value == 25
    assert "delta/orchestration/steps/_delta_log/00000000000000000000.json" in bucket_keys(
        s3_root, endpoint=endpoint
    )


def test_a_steps_context_gives_the_buckets_url_as_its_prefix_and_the_region(
    bucket_root: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("STEMMA_REGION", "eu-west-9")

    def step() -> ArtifactStep:
        return apply(
            name="context/where",
            fn=where,
            version="v1",
            build_config=lambda ctx: {"ctx_prefix": ctx.prefix, "ctx_region": ctx.region},
        )

    [in_bucket] = run(step(), root=bucket_root)
    [on_disk] = run(step(), root=tmp_path / "laptop")

    assert in_bucket.value == {"prefix": bucket_root, "region": "eu-west-9"}
    assert on_disk.value == {"prefix": str(tmp_path / "laptop"), "region": "eu-west-9"}
    assert in_bucket.fingerprint == on_disk.fingerprint  # neither is part of the key


def test_a_bucket_roots_tables_are_compacted_after_its_commits(bucket_root: str) -> None:
    # (a pass long enough for every due table: a loaded machine and a bucket are slow)
    store = DeltaStore(bucket_root, compact=CompactionPolicy(small_files=3, budget_seconds=60))
    assert store.compaction is not None
    for number in range(4):  # a commit a step: four small files in each table
        run(apply(name=f"squares/{number}", fn=square, version="v1", x=number), store=store)
    assert store.compaction.wait(60)

    made = {c.table: c for c in store.compaction.compactions}
    assert "orchestration/executions" in made, made
    assert made["orchestration/executions"].files_after == 1
    assert executions(bucket_root).height == 4  # every row still there, once
    [again] = run(apply(name="squares/2", fn=square, version="v1", x=2), root=bucket_root)
    assert (again.cached, again.value) == (True, 4)


_TABLES = ("orchestration/executions", "orchestration/steps", "artifacts/index")


def test_a_compaction_pass_opens_only_the_tables_whose_listing_holds_enough_small_files(
    bucket_root: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[str] = []

    class CountedOpens(DeltaTable):
        def __init__(self, uri: str, **options: Any) -> None:
            opened.append(uri.rstrip("/").split("/delta/")[-1])
            super().__init__(uri, **options)

    monkeypatch.setattr(auto_compaction_module, "DeltaTable", CountedOpens)
    store = DeltaStore(bucket_root, compact=CompactionPolicy(small_files=3, budget_seconds=60))
    assert store.compaction is not None
    run(apply(name="squares/0", fn=square, version="v1", x=0), store=store)
    assert store.compaction.wait(60)  # the pass at the run's first commit

    data = [key for key in bucket_keys(bucket_root) if key.endswith(".parquet")]
    files = {name: sum(f"delta/{name}/part-" in key for key in data) for name in _TABLES}
    assert files["orchestration/executions"] == 1
    assert "orchestration/executions" not in opened  # one file: listed, never opened
    assert all(files[name] >= 3 for name in opened), (opened, files)

    for number in range(1, 4):  # then three files in every table: each is opened, and compacted
        run(apply(name=f"squares/{number}", fn=square, version="v1", x=number), store=store)
    assert store.compaction.wait(60)
    assert "orchestration/executions" in opened
    assert "orchestration/executions" in {c.table for c in store.compaction.compactions}


def test_a_bucket_roots_tables_checkpoint_every_ten_commits(bucket_root: str) -> None:
    layout = RootLayout(resolve_root(bucket_root))
    for number in range(BUCKET_CHECKPOINT_INTERVAL):  # versions 1-10 (version 0 creates it)
        assert commit_numbered(layout, number)

    log = "delta/orchestration/executions/_delta_log/"
    checkpoints = [key for key in bucket_keys(bucket_root) if key.startswith(f"{log}0")]
    checkpoints = [key for key in checkpoints if ".checkpoint" in key]
    # an open replays at most ten commits, two requests each, after this checkpoint
    assert checkpoints == [f"{log}{BUCKET_CHECKPOINT_INTERVAL - 1:020}.checkpoint.parquet"]
    assert executions(bucket_root).height == BUCKET_CHECKPOINT_INTERVAL


def test_a_bucket_roots_store_compacts_at_the_bucket_default(
    bucket_root: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("STEMMA_COMPACT", raising=False)
    monkeypatch.delenv("STEMMA_COMPACT_SMALL_FILES", raising=False)
    in_bucket = DeltaStore(bucket_root).compaction
    on_disk = DeltaStore(tmp_path / "root").compaction
    assert in_bucket is not None
    assert on_disk is not None
    assert in_bucket.policy.small_files == DEFAULT_SMALL_FILES_IN_BUCKET
    assert on_disk.policy.small_files == DEFAULT_SMALL_FILES
