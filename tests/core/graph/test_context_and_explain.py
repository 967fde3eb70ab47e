import pickle
from pathlib import Path

import pytest

from stemma.core import OUT, apply, config_diff
from stemma.core.graph.context import StepContext


def noop(source: object, out_path: str) -> None:
    """Never called."""


def test_out_repr_is_out_and_it_pickles_to_itself() -> None:
    assert repr(OUT) == "OUT"
    assert pickle.loads(pickle.dumps(OUT)) is OUT


def test_step_context_at_run_time_resolves_out_and_deps_to_paths(tmp_path: Path) -> None:
    dep = apply(name="dep", fn=noop, version="v0", source=1, out_path=OUT)
    context = StepContext.for_run(tmp_path / "out", {dep: tmp_path / "dep"}, prefix=tmp_path)
    assert (context.prefix, context.at_run_time) == (str(tmp_path), True)
    resolved = context.resolve({"a": [dep, OUT], "b": (dep,)})
    assert resolved == {
        "a": [str(tmp_path / "dep"), str(tmp_path / "out")],
        "b": (str(tmp_path / "dep"),),
    }


def test_step_context_at_fingerprint_time_uses_placeholders() -> None:
    dep = apply(name="dep", fn=noop, version="v0", source=1, out_path=OUT)
    context = StepContext.for_fingerprint({dep: "f" * 32})
    assert context.resolve([OUT, dep]) == [
        "<output_path>",
        {"$step": "dep", "fingerprint": "f" * 32},
    ]
    assert not context.at_run_time


def test_step_context_undeclared_dep_is_a_value_error_naming_it() -> None:
    declared = apply(name="declared", fn=noop, version="v0", source=1, out_path=OUT)
    stranger = apply(name="stranger", fn=noop, version="v0", source=2, out_path=OUT)
    context = StepContext.for_fingerprint({declared: "f" * 32})
    with pytest.raises(ValueError, match="'stranger' is not a declared dependency"):
        context.dep(stranger)


def test_config_diff_names_each_changed_field() -> None:
    old = {"inputs": {"lr": 0.1, "layers": [64, 64], "name": "a"}, "version": "v0"}
    new = {"inputs": {"lr": 0.2, "layers": [64, 128], "extra": True}, "version": "v0"}
    assert config_diff(old, new) == [
        "inputs.extra: added True",
        "inputs.layers[1]: 64 → 128",
        "inputs.lr: 0.1 → 0.2",
        "inputs.name: removed (was 'a')",
    ]


def test_config_diff_is_capped_and_truncates_long_values() -> None:
    old = {f"k{i:02}": i for i in range(30)}
    new = {f"k{i:02}": i + 1 for i in range(30)}
    lines = config_diff(old, new, limit=5)
    assert len(lines) == 6
    assert lines[-1] == "… and 25 more changes"
    (long,) = config_diff({"x": "a" * 500}, {"x": "b"})
    assert len(long) < 100
