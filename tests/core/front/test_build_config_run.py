"""``build_config`` and ``type`` through ``run``: real values at run time, the type recorded."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest

from stemma.core import (
    OUT,
    InputsChangedError,
    StepConfigError,
    StepFailedError,
    apply,
    resolve,
    run,
)
from stemma.core.graph.context import StepContext
from stemma.core.records import StepStatus
from stemma.core.store import RunStore, open_run_store
from tests.core.lazy_functions import CALLS_ENV, calls, read_and_add, write_json


@pytest.fixture(autouse=True)
def _calls_dir(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "calls").mkdir()
    monkeypatch.setenv(CALLS_ENV, str(tmp_path / "calls"))
    monkeypatch.delenv("STEMMA_REGION", raising=False)


@pytest.fixture
def store(tmp_path: pathlib.Path) -> RunStore:
    return open_run_store(tmp_path / "root")


def _keyword() -> Any:
    data = apply("data", write_json, version="v0", data=[1, 2, 3], out_path=OUT)
    return apply("total", read_and_add, version="v0", source=data, out_path=OUT, extra=1)


def _configured() -> Any:
    data = apply(
        "data",
        write_json,
        version="v0",
        build_config=lambda ctx: {"data": [1, 2, 3], "out_path": ctx.output_path},
    )
    return apply(
        "total",
        read_and_add,
        version="v0",
        build_config=lambda ctx: {"source": ctx.dep(data)},
        out_path=OUT,
        extra=1,
    )


def test_both_forms_run_on_a_process_backend_and_make_the_same_artifact(
    tmp_path: pathlib.Path,
) -> None:
    keyword = resolve(_keyword(), root=tmp_path / "a")
    configured = resolve(_configured(), root=tmp_path / "b")  # lambdas stay in this process
    assert configured.fingerprint == keyword.fingerprint
    assert configured.artifact_id == keyword.artifact_id
    assert configured.value == keyword.value == 4
    assert (configured.path() / "value.txt").read_text() == "4"
    assert calls() == {"write_json": 2, "read_and_add:1": 2}


def test_the_other_form_of_a_built_step_is_a_cache_hit(store: RunStore) -> None:
    built = resolve(_keyword(), store=store)
    again = resolve(_configured(), store=store)
    assert again.cached
    assert again.artifact_id == built.artifact_id
    assert calls() == {"write_json": 1, "read_and_add:1": 1}


def test_build_config_gets_real_values_at_run_time(
    store: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STEMMA_REGION", "eu-west4")
    data = apply("data", write_json, version="v0", data=[1], out_path=OUT)
    seen: list[StepContext] = []

    def config(ctx: StepContext) -> dict[str, Any]:
        seen.append(ctx)
        return {"source": ctx.dep(data), "out_path": ctx.output_path}

    total = apply("total", read_and_add, version="v0", build_config=config)
    built_data, built_total = run(data, total, store=store, backend="local-thread")
    # Keyed by apply(), keyed again before the step runs (is it deterministic?), then run.
    assert [ctx.at_run_time for ctx in seen] == [False, False, True]
    run_time = seen[-1]
    assert run_time.dep(data) == str(built_data.path())
    assert pathlib.Path(run_time.output_path).parent == built_total.path().parent
    assert run_time.prefix == str(store.layout.root)
    assert run_time.region == "eu-west4"
    assert built_total.value == 1


def test_region_is_none_when_not_set(store: RunStore) -> None:
    regions: list[str | None] = []

    def config(ctx: StepContext) -> dict[str, Any]:
        regions.append(ctx.region)
        return {"data": [1], "out_path": ctx.output_path}

    resolve(apply("one", write_json, version="v0", build_config=config), store=store)
    assert regions == ["<region>", "<region>", None]


def test_a_build_config_that_is_not_deterministic_is_refused_before_the_step_runs(
    store: RunStore,
) -> None:
    counter = iter(range(100))
    step = apply(
        "drifting",
        write_json,
        version="v0",
        build_config=lambda ctx: {"data": next(counter), "out_path": ctx.output_path},
    )
    with pytest.raises(StepFailedError) as info:
        resolve(step, store=store)
    assert isinstance(info.value.__cause__, InputsChangedError)
    assert "build_config" in str(info.value.__cause__)
    assert calls() == {}


def test_a_build_config_failing_at_run_time_fails_its_step_naming_it(store: RunStore) -> None:
    def config(ctx: StepContext) -> dict[str, Any]:
        if ctx.at_run_time:
            raise KeyError("bucket")
        return {"data": 1, "out_path": ctx.output_path}

    step = apply("fragile", write_json, version="v0", build_config=config)
    with pytest.raises(StepFailedError) as info:
        resolve(step, store=store)
    cause = info.value.__cause__
    assert isinstance(cause, StepConfigError)
    assert "step 'fragile': build_config failed at run time: KeyError" in str(cause)
    assert isinstance(cause.__cause__, KeyError)
    assert calls() == {}


def test_a_build_config_giving_other_arguments_at_run_time_is_refused(store: RunStore) -> None:
    def config(ctx: StepContext) -> dict[str, Any]:
        if ctx.at_run_time:
            return {"data": 1}
        return {"data": 1, "out_path": ctx.output_path}

    step = apply("shifty", write_json, version="v0", build_config=config)
    with pytest.raises(StepFailedError) as info:
        resolve(step, store=store)
    assert isinstance(info.value.__cause__, StepConfigError)
    assert "'out_path'" in str(info.value.__cause__)


def test_the_type_is_recorded_with_the_artifact_and_in_the_final_event(store: RunStore) -> None:
    step = apply("typed", write_json, version="v0", type="json", data=[1], out_path=OUT)
    artifact = resolve(step, store=store)
    found = store.load_artifacts([artifact.artifact_id])[artifact.artifact_id]
    assert found.metadata == {"type": "json"}
    final = store.latest_step(artifact.fingerprint, {StepStatus.COMPLETED})
    assert final is not None
    assert final.metadata["output_type"] == "json"


def test_a_step_without_a_type_records_none(store: RunStore) -> None:
    step = apply("plain", write_json, version="v0", data=[1], out_path=OUT)
    artifact = resolve(step, store=store)
    found = store.load_artifacts([artifact.artifact_id])[artifact.artifact_id]
    assert found.metadata == {}
    final = store.latest_step(artifact.fingerprint, {StepStatus.COMPLETED})
    assert final is not None
    assert "output_type" not in final.metadata


def test_a_build_config_failing_when_keyed_again_fails_its_step(store: RunStore) -> None:
    keyed = iter([True])

    def config(ctx: StepContext) -> dict[str, Any]:
        if not next(keyed, False):
            raise RuntimeError("no longer")
        return {"data": [1], "out_path": ctx.output_path}

    step = apply("once", write_json, version="v0", build_config=config)
    with pytest.raises(StepFailedError) as info:
        resolve(step, store=store)
    assert isinstance(info.value.__cause__, InputsChangedError)
    assert "failed when keyed again" in str(info.value.__cause__)
    assert calls() == {}
