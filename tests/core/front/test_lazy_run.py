"""``run`` / ``resolve`` / ``plan``: lazy function steps built by the one engine, on its store."""

import logging
import os
import pathlib
import threading

import pytest

from stemma.core import (
    OUT,
    InputsChangedError,
    LoweringError,
    StepCycleError,
    StepFailedError,
    apply,
    plan,
    resolve,
    run,
)
from stemma.core.errors import UnfingerprintableError, UnpicklableStepError
from stemma.core.store import RunStore, open_run_store
from tests.core.lazy_functions import (
    CALLS_ENV,
    calls,
    dangling,
    explode,
    other,
    pid,
    read_and_add,
    returns_numpy,
    returns_numpy_scalar,
    returns_object,
    returns_tuple,
    write_json,
    writes_then_returns_object,
)


@pytest.fixture(autouse=True)
def _calls_dir(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "calls").mkdir()
    monkeypatch.setenv(CALLS_ENV, str(tmp_path / "calls"))


@pytest.fixture
def store(tmp_path: pathlib.Path) -> RunStore:
    return open_run_store(tmp_path / "root")


def test_resolve_seed_example_writes_output_and_returns_value(store: RunStore) -> None:
    step = apply(name="example/json", fn=write_json, version="v0", data={"a": 1}, out_path=OUT)
    artifact = resolve(step, store=store)
    assert artifact.path().read_text() == '{"a": 1}'
    assert artifact.value == {"keys": 1}
    assert not artifact.cached
    assert artifact.path() == store.layout.root / step.lower().output_relpath


def test_run_second_time_executes_nothing_and_returns_same_artifacts(store: RunStore) -> None:
    data = apply(name="data", fn=write_json, version="v0", data=[1, 2], out_path=OUT)
    total = apply(name="total", fn=read_and_add, version="v0", source=data, out_path=OUT)
    first = run(total, data, store=store)
    second = run(total, data, store=store)
    assert calls() == {"write_json": 1, "read_and_add:0": 1}
    assert [a.artifact_id for a in first] == [a.artifact_id for a in second]
    assert all(a.cached for a in second)


def test_resolve_takes_every_setting_run_takes_with_the_same_defaults() -> None:
    import inspect
    from collections.abc import Callable

    def settings(fn: Callable[..., object]) -> list[tuple[str, object, object]]:
        return [
            (p.name, p.annotation, p.default)
            for p in inspect.signature(fn).parameters.values()
            if p.kind is inspect.Parameter.KEYWORD_ONLY
        ]

    assert settings(resolve) == settings(run)


def test_resolve_passes_the_run_settings_to_its_run(store: RunStore) -> None:
    from stemma.core.live import list_states

    step = apply(name="where", fn=pid, version="v0", out_path=OUT)
    artifact = resolve(
        step, store=store, backend="local-thread", max_workers=1, parallel_steps=1, name="mine"
    )
    assert artifact.value == os.getpid()  # the thread backend: this process
    [state] = list_states(store.layout.root)
    assert (state.name, state.backend) == ("mine", "local-thread")
    assert state.run_id.startswith("mine_")


def test_run_dev_version_reruns_every_time(store: RunStore) -> None:
    step = apply(name="dev", fn=write_json, version="dev", data=[1], out_path=OUT)
    resolve(step, store=store)
    resolve(step, store=store)
    assert calls()["write_json"] == 2


def test_run_dependency_receives_the_dep_output_path(store: RunStore) -> None:
    data = apply(name="data", fn=write_json, version="v0", data=[1, 2, 3], out_path=OUT)
    total = apply(name="total", fn=read_and_add, version="v0", source=data, out_path=OUT)
    assert resolve(total, store=store).value == 3


def test_run_steps_run_in_worker_processes_by_default(store: RunStore) -> None:
    step = apply(name="where", fn=pid, version="dev", out_path=OUT)
    assert resolve(step, store=store).value != os.getpid()
    assert run(step, store=store, backend="local-thread")[0].value == os.getpid()


def test_run_failure_cascades_to_dependents_while_siblings_finish(store: RunStore) -> None:
    bad = apply(name="bad", fn=explode, version="v0", source="x", out_path=OUT)
    after_bad = apply(name="after-bad", fn=read_and_add, version="v0", source=bad, out_path=OUT)
    sibling = apply(name="sibling", fn=write_json, version="v0", data=[1], out_path=OUT)
    after_sibling = apply(
        name="after-sibling", fn=read_and_add, version="v0", source=sibling, out_path=OUT, extra=5
    )
    with pytest.raises(StepFailedError) as info:
        run(after_bad, after_sibling, store=store)
    assert info.value.failed == ["bad"]
    assert info.value.skipped == ["after-bad"]
    assert isinstance(info.value.__cause__, ValueError)  # the function's own, from its worker
    assert "bad input row 7" in str(info.value.__cause__)
    assert calls() == {"explode": 1, "write_json": 1, "read_and_add:5": 1}
    # The independent branch was recorded: a rerun of it executes nothing.
    resolve(after_sibling, store=store)
    assert calls()["read_and_add:5"] == 1


def test_run_failed_step_leaves_no_output_and_is_retried(store: RunStore) -> None:
    bad = apply(name="bad", fn=explode, version="v0", source="x", out_path=OUT)
    for _ in range(2):
        with pytest.raises(StepFailedError):
            resolve(bad, store=store)
    assert calls()["explode"] == 2
    assert not store.layout.output_dir(bad.lower().output_relpath).exists()


def test_run_unencodable_return_value_fails_the_step_naming_it(store: RunStore) -> None:
    step = apply(name="odd", fn=returns_object, version="v0", out_path=OUT)
    with pytest.raises(StepFailedError) as info:
        resolve(step, store=store)
    assert "value returned by step 'odd'" in str(info.value.__cause__)


def test_run_numpy_scalars_and_arrays_returned_are_recorded_as_python_values(
    store: RunStore,
) -> None:
    step = apply(name="numbers", fn=returns_numpy, version="v0", out_path=OUT)
    fresh = resolve(step, store=store)
    expected = {
        "count": 3,
        "mean": 0.5,
        "ok": True,
        "rows": [0, 1, 2],
        "grid": [[0.0, 0.0], [0.0, 0.0]],
        "pair": [1, [2]],
        "plain": 1.5,
    }
    assert fresh.value == expected
    assert type(fresh.value["count"]) is int
    cached = resolve(step, store=store)
    assert cached.cached
    assert cached.value == expected
    assert calls()["returns_numpy"] == 1
    scalar = apply(name="scalar", fn=returns_numpy_scalar, version="v0", out_path=OUT)
    assert resolve(scalar, store=store, backend="local-thread").value == 7


def test_run_unrecordable_return_value_fails_the_step_but_keeps_its_output(
    store: RunStore,
) -> None:
    step = apply(name="slow", fn=writes_then_returns_object, version="v0", out_path=OUT)
    output = store.layout.output_dir(step.lower().output_relpath)
    with pytest.raises(StepFailedError) as info:
        resolve(step, store=store)
    cause = info.value.__cause__
    assert isinstance(cause, UnfingerprintableError)
    message = str(cause)
    assert "value returned by step 'slow'" in message
    assert "Unrecordable" in message  # the type
    assert "Return plain data" in message  # the fix
    assert str(output) in message  # where the work is
    assert output.read_text() == "an hour of work"  # the finished work is kept
    assert store.completed([step.lower().fingerprint]) == {}  # but not recorded as built
    with pytest.raises(StepFailedError):
        resolve(step, store=store)
    assert calls()["writes_then_returns_object"] == 2
    assert output.read_text() == "an hour of work"


def test_run_never_runs_below_a_step_already_built(store: RunStore) -> None:
    data = apply(name="data", fn=write_json, version="v0", data=[1, 2], out_path=OUT)
    total = apply(name="total", fn=read_and_add, version="v0", source=data, out_path=OUT)
    resolve(total, store=store)
    # Lose the dep's output: the dependent is built, so the dep must not be looked at.
    import shutil

    shutil.rmtree(store.layout.output_dir(data.lower().output_relpath).parent)
    assert resolve(total, store=store).value == 2
    assert calls() == {"write_json": 1, "read_and_add:0": 1}


def test_run_rebuilds_a_step_whose_output_was_deleted(store: RunStore) -> None:
    data = apply(name="data", fn=write_json, version="v0", data=[1, 2], out_path=OUT)
    first = resolve(data, store=store)
    first.path().unlink()
    again = resolve(data, store=store)
    assert calls()["write_json"] == 2
    assert again.path().read_text() == "[1, 2]"


def test_run_cycle_is_an_error_naming_the_cycle(store: RunStore) -> None:
    from stemma.core.front.lazy_door import LazyRunOptions, build

    a = apply(name="cyc/a", fn=write_json, version="v0", data=[1], out_path=OUT).lower()
    b = apply(name="cyc/b", fn=read_and_add, version="v0", source="x", out_path=OUT).lower()
    # Specs are frozen; only a hand-built graph can loop, so build one the hard way.
    object.__setattr__(a, "deps", (b,))
    object.__setattr__(b, "deps", (a,))
    with pytest.raises(StepCycleError, match=r"cyc/a\(.*\) → cyc/b\(.*\) → cyc/a"):
        build([a], store, LazyRunOptions())
    assert calls() == {}


def test_run_runs_independent_steps_concurrently(store: RunStore) -> None:
    barrier = threading.Barrier(3, timeout=10)

    def meet(index: int, out_path: str) -> int:
        barrier.wait()  # only passes if three steps run at the same time
        return index

    steps = [apply(name=f"par/{i}", fn=meet, version="v0", index=i, out_path=OUT) for i in range(3)]
    built = run(*steps, store=store, backend="local-thread", max_workers=3, parallel_steps=3)
    assert [a.value for a in built] == [0, 1, 2]


def test_run_refuses_an_unpicklable_function_before_anything_runs(store: RunStore) -> None:
    def local(out_path: str) -> int:
        return 1

    step = apply(name="closure", fn=local, version="v0", out_path=OUT)
    with pytest.raises(UnpicklableStepError, match=r"local.*top level.*local-thread"):
        resolve(step, store=store)
    assert not (store.layout.root / "runs").exists()  # no run was started
    assert resolve(step, store=store, backend="local-thread").value == 1


def test_plan_lists_what_would_run_and_why_and_writes_nothing(tmp_path: pathlib.Path) -> None:
    root = tmp_path / "fresh"
    data = apply(name="data", fn=write_json, version="v0", data=[1], out_path=OUT)
    total = apply(name="total", fn=read_and_add, version="v0", source=data, out_path=OUT)
    planned = plan(total, root=root)
    assert [(p.spec.name, p.action) for p in planned] == [("data", "run"), ("total", "run")]
    assert planned[0].reason.startswith("new")
    assert not root.exists()
    assert calls() == {}


def test_plan_after_a_change_says_which_field_changed(store: RunStore) -> None:
    resolve(
        apply(name="data", fn=write_json, version="v0", data={"hello": "world"}, out_path=OUT),
        store=store,
    )
    changed = apply(name="data", fn=write_json, version="v0", data={"hello": "mars"}, out_path=OUT)
    (planned,) = plan(changed, store=store)
    assert planned.action == "run"
    assert "inputs.data.hello: 'world' → 'mars'" in planned.reason
    (cached,) = plan(
        apply(name="data", fn=write_json, version="v0", data={"hello": "world"}, out_path=OUT),
        store=store,
    )
    assert cached.action == "cached"


def test_run_logs_why_a_step_missed(store: RunStore, caplog: pytest.LogCaptureFixture) -> None:
    resolve(
        apply(name="data", fn=write_json, version="v0", data={"n": 1}, out_path=OUT), store=store
    )
    with caplog.at_level(logging.INFO, logger="stemma.core.lazy"):
        resolve(
            apply(name="data", fn=write_json, version="v0", data={"n": 2}, out_path=OUT),
            store=store,
        )
    assert "inputs.data.n: 1 → 2" in caplog.text


def test_run_failure_cascades_through_deps_registered_before_the_failure(
    store: RunStore,
) -> None:
    bad = apply(name="bad", fn=explode, version="v0", source="x", out_path=OUT)
    middle = apply(name="middle", fn=read_and_add, version="v0", source=bad, out_path=OUT)
    top = apply(name="top", fn=read_and_add, version="v0", source=middle, out_path=OUT, extra=1)
    filler = apply(name="filler", fn=write_json, version="v0", data=[1], out_path=OUT)
    with pytest.raises(StepFailedError) as info:
        run(bad, filler, top, store=store)
    assert info.value.failed == ["bad"]
    assert info.value.skipped == ["middle", "top"]


def test_run_fresh_and_cached_values_are_equal(store: RunStore) -> None:
    step = apply(name="tuple", fn=returns_tuple, version="v0", out_path=OUT)
    fresh = resolve(step, store=store)
    cached = resolve(step, store=store)
    assert cached.cached
    assert fresh.value == cached.value == [1, {"n": 2}]


def test_run_dangling_symlink_in_output_fails_the_step_and_publishes_nothing(
    store: RunStore,
) -> None:
    step = apply(name="dangling", fn=dangling, version="v0", out_path=OUT)
    with pytest.raises(StepFailedError) as info:
        resolve(step, store=store)
    assert isinstance(info.value.__cause__, FileNotFoundError)
    assert not store.layout.output_dir(step.lower().output_relpath).exists()
    assert store.completed([step.lower().fingerprint]) == {}


def test_run_two_functions_under_one_name_and_version_is_an_error(store: RunStore) -> None:
    first = apply(name="same", fn=write_json, version="v0", data=[1], out_path=OUT)
    second = apply(name="same", fn=other, version="v0", data=[1], out_path=OUT)
    with pytest.raises(LoweringError, match="two different functions"):
        run(first, second, store=store)
    assert calls() == {}


def test_run_refuses_inputs_mutated_after_apply(store: RunStore) -> None:
    data = {"rows": [1, 2]}
    step = apply(name="mutated", fn=write_json, version="v0", data=data, out_path=OUT)
    data["rows"].append(3)
    with pytest.raises(StepFailedError) as info:
        resolve(step, store=store)
    assert isinstance(info.value.__cause__, InputsChangedError)
    assert calls() == {}


def test_run_refuses_an_input_file_rewritten_after_apply(
    store: RunStore, tmp_path: pathlib.Path
) -> None:
    source = tmp_path / "in.json"
    source.write_text("[1, 2]")
    step = apply(name="from-file", fn=read_and_add, version="v0", source=source, out_path=OUT)
    source.write_text("[1, 2, 3]")
    with pytest.raises(StepFailedError) as info:
        resolve(step, store=store)
    assert isinstance(info.value.__cause__, InputsChangedError)
    fresh = apply(name="from-file", fn=read_and_add, version="v0", source=source, out_path=OUT)
    assert resolve(fresh, store=store).value == 3


def test_run_cancelled_error_is_imported_from_stemma_core_as_the_tutorials_teach() -> None:
    import stemma.core
    import stemma.core.errors
    from stemma.core import RunCancelledError

    assert RunCancelledError is stemma.core.errors.RunCancelledError
    assert issubclass(RunCancelledError, StepFailedError)
    assert "RunCancelledError" in stemma.core.__all__
    assert "RunCancelledError" in dir(stemma.core)


def test_step_failed_error_survives_a_pickle_trip() -> None:
    import pickle

    from stemma.core.errors import RunCancelledError

    for kind in (StepFailedError, RunCancelledError):
        error = kind("2 step(s) failed: a, b", failed=["a", "b"], skipped=["c"])
        again = pickle.loads(pickle.dumps(error))
        assert type(again) is kind
        assert (str(again), again.failed, again.skipped) == (str(error), ["a", "b"], ["c"])


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_run_a_fault_in_the_dispatcher_fails_its_steps_instead_of_hanging(
    store: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stemma.core.backends.local import LocalBackend

    def broken(self: LocalBackend) -> None:
        raise RuntimeError("injected dispatcher fault")

    monkeypatch.setattr(LocalBackend, "sample_memory", broken)
    data = apply(name="data", fn=write_json, version="v0", data=[1, 2], out_path=OUT)
    total = apply(name="total", fn=read_and_add, version="v0", source=data, out_path=OUT)
    done: list[BaseException] = []

    def attempt() -> None:
        try:
            run(total, store=store)
        except BaseException as error:
            done.append(error)

    runner = threading.Thread(target=attempt, daemon=True)
    runner.start()
    runner.join(60)
    assert not runner.is_alive(), "the run hung after its dispatcher failed"
    (error,) = done
    assert isinstance(error, StepFailedError)
    assert error.failed == ["data"]
    assert error.skipped == ["total"]
    assert "dispatcher failed: RuntimeError: injected dispatcher fault" in str(error.__cause__)
