"""What ``run()`` hands back carries the type recorded with its output (``Artifact.type``).

On core's own store here (stemma-core's tests run with it alone); the same tests run on the
Delta store from ``tests/integration/test_run_types_on_delta.py``.
"""

from __future__ import annotations

import pathlib

import pytest

from stemma.core import OUT, apply, resolve, run
from stemma.core.store import RunStore, open_run_store
from tests.core.lazy_functions import CALLS_ENV, calls, write_json


@pytest.fixture(autouse=True)
def calls_dir(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "calls").mkdir()
    monkeypatch.setenv(CALLS_ENV, str(tmp_path / "calls"))


@pytest.fixture
def store(tmp_path: pathlib.Path) -> RunStore:
    return open_run_store(tmp_path / "root", kind="sqlite")


def test_a_fresh_output_has_the_type_its_step_gave_it(store: RunStore) -> None:
    typed = apply("typed", write_json, version="v0", type="json", data=[1], out_path=OUT)
    plain = apply("plain", write_json, version="v0", data=[2], out_path=OUT)
    built_typed, built_plain = run(typed, plain, store=store, backend="local-thread")
    assert (built_typed.cached, built_typed.type) == (False, "json")
    assert (built_plain.cached, built_plain.type) == (False, None)


def test_an_output_found_built_keeps_the_type_recorded_with_it(store: RunStore) -> None:
    step = apply("typed", write_json, version="v0", type="json", data=[1], out_path=OUT)
    resolve(step, store=store, backend="local-thread")
    again = resolve(step, store=store, backend="local-thread")
    assert (again.cached, again.type) == (True, "json")
    assert calls()["write_json"] == 1


def test_a_type_asked_for_later_does_not_rename_what_was_built(store: RunStore) -> None:
    # A type is never keyed: the same step with another type is the step already built, and its
    # output is what it was recorded as, not what this script says.
    first = apply("typed", write_json, version="v0", type="json", data=[1], out_path=OUT)
    later = apply("typed", write_json, version="v0", type="text", data=[1], out_path=OUT)
    assert first.lower().fingerprint == later.lower().fingerprint
    resolve(first, store=store, backend="local-thread")
    found = resolve(later, store=store, backend="local-thread")
    assert (found.cached, found.type) == (True, "json")


def test_a_dependency_built_in_the_same_run_keeps_its_own_type(store: RunStore) -> None:
    text = apply("words", write_json, version="v0", type="text", data=["hi"], out_path=OUT)
    table = apply("table", write_json, version="v0", type="csv", data=[text], out_path=OUT)
    built = run(table, text, store=store, backend="local-thread")
    assert [artifact.type for artifact in built] == ["csv", "text"]
