"""A scheduler of your own runs the lowered graph; stemma keys, records and caches it."""

import pathlib

import pytest

from stemma.core import (
    OUT,
    Artifact,
    ArtifactStep,
    ExternalRun,
    StepFailedError,
    StepSpec,
    apply,
    lower,
    run,
)
from stemma.core.engine.worker.function_operation import execution_key
from stemma.core.store import open_run_store
from tests.core.lazy_functions import CALLS_ENV, calls, explode, read_and_add, write_json


@pytest.fixture(autouse=True)
def _calls_dir(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "calls").mkdir()
    monkeypatch.setenv(CALLS_ENV, str(tmp_path / "calls"))


def _graph() -> tuple[ArtifactStep, ArtifactStep]:
    data = apply(name="data", fn=write_json, version="v0", data=[1, 2, 3], out_path=OUT)
    total = apply(name="total", fn=read_and_add, version="v0", source=data, out_path=OUT, extra=1)
    return data, total


def test_external_runner_records_what_run_then_finds_built(tmp_path: pathlib.Path) -> None:
    root = tmp_path / "root"
    data, total = _graph()
    memo: dict[ArtifactStep, StepSpec] = {}
    lower(total, memo)
    with ExternalRun(root=root, name="my-runner") as ext:
        order = ext.order(memo.values())
        assert [spec.name for spec in order] == ["data", "total"]
        for spec in order:
            call = ext.prepare(spec)
            assert set(call.kwargs) == set(spec.step.inputs)
            ext.record(call, spec.step.fn(**call.kwargs))  # "my scheduler" runs it here
        assert ext.order(memo.values()) == []  # everything is built now
    assert calls() == {"write_json": 1, "read_and_add:1": 1}
    # The engine's own run finds both built, with the same artifacts.
    built_data, built_total = run(data, total, root=root)
    assert built_data.cached
    assert built_total.cached
    assert built_total.value == 4
    assert calls() == {"write_json": 1, "read_and_add:1": 1}
    store = open_run_store(root)
    events = [e for e in store.step_events() if e.pipeline_run_id.startswith("my-runner_")]
    assert [(e.step_name, e.status.value, e.backend) for e in events] == [
        ("data", "running", "external"),
        ("data", "completed", "external"),
        ("total", "running", "external"),
        ("total", "completed", "external"),
    ]


def test_external_runner_keys_match_the_engine(tmp_path: pathlib.Path) -> None:
    _, total = _graph()
    engine = run(total, root=tmp_path / "engine")[0]
    memo: dict[ArtifactStep, StepSpec] = {}
    lower(total, memo)
    recorded: list[Artifact] = []
    with ExternalRun(root=tmp_path / "external") as ext:
        for spec in ext.order(memo.values()):
            call = ext.prepare(spec)
            recorded.append(ext.record(call, spec.step.fn(**call.kwargs)))
    built = recorded[-1]
    assert built.artifact_id == engine.artifact_id
    assert built.fingerprint == engine.fingerprint
    # Both recorded the same execution key, from the same input artifact: the data step's.
    data_id = run(memo_data(memo), root=tmp_path / "engine")[0].artifact_id
    key = execution_key(memo[total], {"source": (data_id,)})
    for root in ("engine", "external"):
        assert key in open_run_store(tmp_path / root).executions_by_key([key])


def memo_data(memo: dict[ArtifactStep, StepSpec]) -> ArtifactStep:
    return next(handle for handle in memo if handle.name == "data")


def test_external_runner_failure_is_recorded_and_raised(tmp_path: pathlib.Path) -> None:
    bad = apply(name="bad", fn=explode, version="v0", source="x", out_path=OUT)
    spec = lower(bad)
    with ExternalRun(root=tmp_path) as ext:
        call = ext.prepare(spec)
        try:
            spec.step.fn(**call.kwargs)
        except ValueError as err:
            with pytest.raises(StepFailedError, match="bad input row 7"):
                ext.record(call, error=err)
        assert ext.built(spec) is None
        assert not pathlib.Path(str(call.kwargs["out_path"])).exists()


def test_external_runner_refuses_a_step_whose_dep_is_not_built(tmp_path: pathlib.Path) -> None:
    _, total = _graph()
    with ExternalRun(root=tmp_path) as ext, pytest.raises(LookupError, match="'data'"):
        ext.prepare(lower(total))


def test_external_runner_order_never_lists_what_is_under_a_built_step(
    tmp_path: pathlib.Path,
) -> None:
    data, total = _graph()
    run(total, root=tmp_path)
    (tmp_path / lower(data).output_relpath).unlink()  # the dep's output is gone; total is built
    memo: dict[ArtifactStep, StepSpec] = {}
    lower(total, memo)
    with ExternalRun(root=tmp_path) as ext:
        assert ext.order(memo.values()) == []


def test_external_runner_calls_build_config_with_real_values_and_records_the_type(
    tmp_path: pathlib.Path,
) -> None:
    data = apply(name="data", fn=write_json, version="v0", data=[1, 2, 3], out_path=OUT)
    total = apply(
        name="total",
        fn=read_and_add,
        version="v0",
        type="count",
        build_config=lambda ctx: {"source": ctx.dep(data), "out_path": ctx.output_path},
        extra=1,
    )
    memo: dict[ArtifactStep, StepSpec] = {}
    lower(total, memo)
    root = tmp_path / "root"
    with ExternalRun(root=root) as ext:
        recorded: list[Artifact] = []
        for spec in ext.order(memo.values()):
            call = ext.prepare(spec)
            recorded.append(ext.record(call, spec.step.fn(**call.kwargs)))
    built = recorded[-1]
    assert built.value == 4
    store = open_run_store(root)
    assert store.load_artifacts([built.artifact_id])[built.artifact_id].metadata == {
        "type": "count"
    }
    again = run(total, root=root)[0]
    assert again.cached
    assert again.artifact_id == built.artifact_id
