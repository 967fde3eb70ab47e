"""A run on SLURM checks its staged files by reading them; a local run lists them."""

import pathlib

import pytest

from stemma.core.examples import DataGenerator, Transform
from stemma.core.front.pipeline import Pipeline
from stemma.core.store.staging.visibility import SharedStagingStore

pytestmark = pytest.mark.slurm


@pytest.mark.parametrize(("backend", "shared"), [("slurm", True), ("local", False)])
def test_the_backend_shared_filesystem_flag_reaches_the_store_that_commits_the_run(
    slurm_cluster: None, tmp_path: pathlib.Path, backend: str, shared: bool
) -> None:
    pipeline = Pipeline.create("shared", root=tmp_path / "store", backend=backend, max_workers=2)
    store = pipeline.store
    assert isinstance(store, SharedStagingStore)
    assert store.shared_filesystem is shared
    generated = pipeline.run(DataGenerator, params={"count": 2, "rows": 3})
    transformed = pipeline.run(
        Transform,
        inputs={"dataset": generated.output("datasets")},
        execution={"artifacts_per_unit": 1},
    )
    summary = pipeline.finalize()
    assert summary["overall_success"] is True, summary
    assert len(pipeline.artifact_ids(transformed.output("dataset"))) == 2
    staging = tmp_path / "store" / "staging"
    assert not list(staging.glob(".quarantine/*/*"))  # every bundle committed, none set aside
