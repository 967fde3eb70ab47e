"""A dry run's pipeline checks a step as a real one does: the same door, the same refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from stemma.core.dry_run_switch import DRY_RUN_ENV
from stemma.core.errors import UnpicklableStepError
from stemma.core.examples import CopyUnlessRefused, DataGenerator
from stemma.core.front.dry_pipeline import DryPipeline
from stemma.core.front.pipeline import Pipeline


@pytest.fixture
def dry_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DRY_RUN_ENV, "1")  # what `stemma plan` sets for the script it plans


@pytest.mark.usefixtures("dry_run")
def test_dry_pipeline_refuses_an_operation_its_backend_could_not_be_sent(tmp_path: Path) -> None:
    class CopyDefinedInADryTest(CopyUnlessRefused):  # local: a worker cannot import it by name
        name = "test.copy_defined_in_a_dry_test"

    pipeline = Pipeline.create("dry_local_class", root=tmp_path / "root", backend="local")
    assert isinstance(pipeline, DryPipeline)
    generated = pipeline.run(DataGenerator, params={"count": 1})
    with pytest.raises(UnpicklableStepError, match="cannot be sent to a 'local' worker"):
        pipeline.submit(CopyDefinedInADryTest, inputs={"dataset": generated.output("datasets")})
    threads = Pipeline.create("dry_threads", root=tmp_path / "root", backend="local-thread")
    threads.submit(DataGenerator, params={"count": 1})  # in-process units: nothing is sent


@pytest.mark.usefixtures("dry_run")
def test_dry_pipeline_refuses_a_step_after_finalize(tmp_path: Path) -> None:
    pipeline = Pipeline.create("dry_finalized", root=tmp_path / "root")
    pipeline.run(DataGenerator, params={"count": 1})
    pipeline.finalize()
    with pytest.raises(RuntimeError, match="is finalized; create or resume another"):
        pipeline.submit(DataGenerator, params={"count": 1})
    assert not (tmp_path / "root").exists()  # planned, never written
