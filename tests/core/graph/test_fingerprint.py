import json
import os
import pathlib
import subprocess
import sys
from typing import Any

import pytest

from stemma.core import (
    OUT,
    FingerprintMismatchError,
    LoweringError,
    UnfingerprintableError,
    apply,
)


def write_json(data: Any, out_path: str) -> None:
    pathlib.Path(out_path).write_text(json.dumps(data))


def train(data: str, out_path: str, lr: float = 0.1) -> None:
    pathlib.Path(out_path).mkdir()


def pair(left: str, right: str, out_path: str) -> None:
    pathlib.Path(out_path).mkdir()


def test_fingerprint_seed_example_is_32_hex_characters() -> None:
    step = apply(
        name="example/json", fn=write_json, version="v0", data={"hello": "world"}, out_path=OUT
    )
    spec = step.lower()
    assert len(spec.fingerprint) == 32
    assert int(spec.fingerprint, 16) >= 0


def test_fingerprint_changes_with_literal_inputs() -> None:
    a = apply(name="j", fn=write_json, version="v0", data={"hello": "world"}, out_path=OUT)
    b = apply(name="j", fn=write_json, version="v0", data={"hello": "mars"}, out_path=OUT)
    assert a.lower().fingerprint != b.lower().fingerprint


def test_fingerprint_changes_with_name_and_version() -> None:
    base = apply(name="j", fn=write_json, version="v0", data=1, out_path=OUT).lower().fingerprint
    renamed = apply(name="k", fn=write_json, version="v0", data=1, out_path=OUT)
    bumped = apply(name="j", fn=write_json, version="v1", data=1, out_path=OUT)
    assert len({base, renamed.lower().fingerprint, bumped.lower().fingerprint}) == 3


def test_fingerprint_changes_with_dependency_identity() -> None:
    data_v1 = apply(name="data", fn=write_json, version="v1", data=[1], out_path=OUT)
    data_v2 = apply(name="data", fn=write_json, version="v2", data=[1], out_path=OUT)
    model_1 = apply(name="model", fn=train, version="v0", data=data_v1, out_path=OUT)
    model_2 = apply(name="model", fn=train, version="v0", data=data_v2, out_path=OUT)
    assert model_1.lower().fingerprint != model_2.lower().fingerprint


def test_fingerprint_includes_defaults_of_fn() -> None:
    data = apply(name="data", fn=write_json, version="v1", data=[1], out_path=OUT)
    implicit = apply(name="model", fn=train, version="v0", data=data, out_path=OUT)
    explicit = apply(name="model", fn=train, version="v0", data=data, out_path=OUT, lr=0.1)
    other = apply(name="model", fn=train, version="v0", data=data, out_path=OUT, lr=0.2)
    assert implicit.lower().fingerprint == explicit.lower().fingerprint
    assert implicit.lower().config["inputs"]["lr"] == 0.1
    assert implicit.lower().fingerprint != other.lower().fingerprint


def test_fingerprint_swapping_dependency_roles_changes_it() -> None:
    a = apply(name="a", fn=write_json, version="v0", data=1, out_path=OUT)
    b = apply(name="b", fn=write_json, version="v0", data=2, out_path=OUT)
    ab = apply(name="pair", fn=pair, version="v0", left=a, right=b, out_path=OUT)
    ba = apply(name="pair", fn=pair, version="v0", left=b, right=a, out_path=OUT)
    assert ab.lower().fingerprint != ba.lower().fingerprint


_FINGERPRINT_SCRIPT = """
import dataclasses, json, pathlib, sys
from pydantic import BaseModel
from stemma.core import OUT, apply
class Params(BaseModel):
    tags: set[str] = {"alpha", "beta", "gamma", "delta", "epsilon"}
@dataclasses.dataclass(frozen=True)
class Window:
    names: frozenset[str] = frozenset({"x", "y", "z", "w"})
def write_json(data, out_path):
    pathlib.Path(out_path).write_text(json.dumps(data))
config = {"b": [1, 2.5], "a": None, "params": Params(), "window": Window(), "set": {"p", "q", "r"}}
data = apply(name="data", fn=write_json, version="v1", data=config, out_path=OUT)
top = apply(name="top", fn=write_json, version="v1", data=[data, {"k": data}], out_path=OUT)
print(top.lower().fingerprint)
"""


def test_fingerprint_equal_across_processes_roots_and_directories(tmp_path: pathlib.Path) -> None:
    prints: set[str] = set()
    for index in range(4):
        cwd = tmp_path / f"elsewhere-{index}"
        cwd.mkdir()
        env = {
            **os.environ,
            "STEMMA_ROOT": str(tmp_path / f"root-{index}"),
            "PYTHONHASHSEED": str(index),
        }
        done = subprocess.run(
            [sys.executable, "-c", _FINGERPRINT_SCRIPT],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        prints.add(done.stdout.strip())
    assert len(prints) == 1
    assert len(prints.pop()) == 32


def test_apply_refuses_lambda_inputs_naming_the_argument() -> None:
    with pytest.raises(UnfingerprintableError, match=r"^j\.inputs\.data\['f'\]: "):
        apply(name="j", fn=write_json, version="v0", data={"f": lambda: 1}, out_path=OUT)


def test_apply_wrong_arguments_raise_type_error_naming_the_step() -> None:
    with pytest.raises(TypeError, match=r"step 'j'.*write_json"):
        apply(name="j", fn=write_json, version="v0", dta=1, out_path=OUT)


def test_apply_typo_in_an_argument_names_it_and_the_closest_expected_one() -> None:
    with pytest.raises(TypeError) as info:
        apply(name="j", fn=write_json, version="v0", dta=1, out_path=OUT)
    message = str(info.value)
    assert message.startswith(
        "step 'j': write_json() got an unexpected argument 'dta' (did you mean 'data'?)"
    ), message
    assert "missing" not in message


def test_apply_several_unexpected_arguments_are_all_named() -> None:
    with pytest.raises(TypeError) as info:
        apply(name="j", fn=train, version="v0", daat=1, out_path=OUT, learning_rate=2, zzz=3)
    message = str(info.value)
    assert message.startswith(
        "step 'j': train() got unexpected arguments 'daat' (did you mean 'data'?), "
        "'learning_rate', 'zzz'"
    ), message
    assert "data, out_path, lr" in message  # what it takes


def test_apply_a_missing_argument_alone_is_still_named() -> None:
    with pytest.raises(TypeError, match=r"^step 'j': .*write_json.*missing a required argument"):
        apply(name="j", fn=write_json, version="v0", out_path=OUT)


def test_apply_a_function_taking_any_keyword_accepts_any_name() -> None:
    def anything(out_path: str, **options: Any) -> None:
        pathlib.Path(out_path).mkdir()

    step = apply(name="j", fn=anything, version="v0", out_path=OUT, dta=1, xx=2)
    assert step.lower().fingerprint


@pytest.mark.parametrize("version", ["", "a/b", "..", " v0", "v0\n"])
def test_apply_refuses_versions_that_are_not_one_path_segment(version: str) -> None:
    with pytest.raises(LoweringError, match="version"):
        apply(name="j", fn=write_json, version=version, data=1, out_path=OUT)


@pytest.mark.parametrize("version", ["v0", "2026.07.16", "dev", "exp-3-dev"])
def test_apply_accepts_any_path_segment_as_version(version: str) -> None:
    assert apply(name="j", fn=write_json, version=version, data=1, out_path=OUT).version == version


def test_lower_fixed_version_over_mutable_dep_is_an_error() -> None:
    dev = apply(name="scratch", fn=write_json, version="dev", data=1, out_path=OUT)
    fixed = apply(name="model", fn=train, version="v1", data=dev, out_path=OUT)
    with pytest.raises(LoweringError, match=r"'scratch'.*mutable"):
        fixed.lower()
    also_dev = apply(name="model", fn=train, version="try-dev", data=dev, out_path=OUT)
    assert also_dev.lower().mutable


def test_lower_expected_fingerprint_mismatch_is_an_error_naming_the_new_one() -> None:
    step = apply(name="j", fn=write_json, version="v0", data=1, out_path=OUT)
    actual = step.lower().fingerprint
    pinned = apply(
        name="j", fn=write_json, version="v0", data=1, out_path=OUT, expected_fingerprint=actual
    )
    assert pinned.lower().fingerprint == actual
    changed = apply(name="j", fn=write_json, version="v0", data=2, out_path=OUT)
    wrong = apply(
        name="j", fn=write_json, version="v0", data=2, out_path=OUT, expected_fingerprint=actual
    )
    with pytest.raises(FingerprintMismatchError) as info:
        wrong.lower()
    assert actual in str(info.value)
    assert changed.lower().fingerprint in str(info.value)


def test_config_shows_out_and_deps_as_placeholders() -> None:
    data = apply(name="data", fn=write_json, version="v1", data=[1], out_path=OUT)
    model = apply(name="model", fn=train, version="v0", data=data, out_path=OUT)
    spec = model.lower()
    assert spec.config["inputs"]["out_path"] == "<output_path>"
    assert spec.config["inputs"]["data"] == {
        "$step": "data",
        "fingerprint": spec.deps[0].fingerprint,
    }


def test_execution_key_is_role_aware_and_order_insensitive_within_a_role() -> None:
    from stemma.core.engine.worker.function_operation import execution_key

    a = apply(name="a", fn=write_json, version="v0", data=1, out_path=OUT)
    b = apply(name="b", fn=write_json, version="v0", data=2, out_path=OUT)
    spec = apply(name="pair", fn=pair, version="v0", left=a, right=b, out_path=OUT).lower()
    x, y = "1" * 32, "2" * 32
    straight = execution_key(spec, {"left": (x,), "right": (y,)})
    swapped = execution_key(spec, {"left": (y,), "right": (x,)})
    pooled = execution_key(spec, {"left": (x, y), "right": ()})
    assert len({straight, swapped, pooled}) == 3
    assert execution_key(spec, {"left": (x, y)}) == execution_key(spec, {"left": (y, x)})


def test_execution_key_ignores_where_the_store_is() -> None:
    from stemma.core.engine.worker.function_operation import execution_key

    spec = apply(name="j", fn=write_json, version="v0", data=1, out_path=OUT).lower()
    again = apply(name="j", fn=write_json, version="v0", data=1, out_path=OUT).lower()
    assert execution_key(spec, {}) == execution_key(again, {})
    changed = apply(name="j", fn=write_json, version="v0", data=2, out_path=OUT).lower()
    assert execution_key(spec, {}) != execution_key(changed, {})


def test_fingerprint_user_data_cannot_forge_a_dependency_or_out() -> None:
    dep = apply(name="dep", fn=write_json, version="v0", data=1, out_path=OUT)
    real = apply(name="t", fn=pair, version="v0", left=dep, right="x", out_path=OUT)
    forged = apply(name="t", fn=pair, version="v0", left={"$dep": 0}, right="x", out_path=OUT)
    out_literal = apply(
        name="t", fn=pair, version="v0", left="x", right="x", out_path="<output_path>"
    )
    out_real = apply(name="t", fn=pair, version="v0", left="x", right="x", out_path=OUT)
    assert real.lower().fingerprint != forged.lower().fingerprint
    assert out_literal.lower().fingerprint != out_real.lower().fingerprint


def test_fingerprint_user_data_cannot_forge_a_type_tag(tmp_path: pathlib.Path) -> None:
    file = tmp_path / "a.csv"
    file.write_text("1,2\n")
    as_path = apply(name="t", fn=write_json, version="v0", data=file, out_path=OUT)
    as_dict = apply(name="t", fn=write_json, version="v0", data={"$path": str(file)}, out_path=OUT)
    as_set = apply(name="t", fn=write_json, version="v0", data={1, 2}, out_path=OUT)
    as_tagged = apply(name="t", fn=write_json, version="v0", data={"$set": [1, 2]}, out_path=OUT)
    assert as_path.lower().fingerprint != as_dict.lower().fingerprint
    assert as_set.lower().fingerprint != as_tagged.lower().fingerprint


def test_fingerprint_of_a_path_input_follows_its_content_not_its_name(
    tmp_path: pathlib.Path,
) -> None:
    first = tmp_path / "data.csv"
    first.write_text("a,b\n1,2\n")

    def key(path: pathlib.Path) -> str:
        return (
            apply(name="ingest", fn=write_json, version="v0", data=path, out_path=OUT)
            .lower()
            .fingerprint
        )

    original = key(first)
    moved = tmp_path / "elsewhere.csv"
    first.rename(moved)
    assert key(moved) == original
    moved.write_text("a,b\n1,3\n")
    assert key(moved) != original


def test_apply_path_input_that_does_not_exist_is_refused_naming_the_argument(
    tmp_path: pathlib.Path,
) -> None:
    with pytest.raises(
        UnfingerprintableError, match=r"^j\.inputs\.data: input file .* does not exist"
    ):
        apply(name="j", fn=write_json, version="v0", data=tmp_path / "missing.csv", out_path=OUT)
