"""``apply(..., build_config=…)`` and ``apply(..., type=…)``: the seed's two other handle fields.

``build_config(ctx)`` is called when the step is keyed, with the step's context in placeholder
mode; what it returns is keyed exactly as keyword inputs are. ``type`` names the artifact's
type; it is recorded with the artifact and is never part of a key.
"""

from __future__ import annotations

import json
import os
import pathlib
from typing import Any

import pytest

from stemma.core import OUT, LoweringError, UnfingerprintableError, apply
from stemma.core.examples import Transform
from stemma.core.graph.context import StepContext
from stemma.core.graph.step import ArtifactStep


def write_json(data: Any, out_path: str) -> None:
    pathlib.Path(out_path).write_text(json.dumps(data))


def train(data: str, out_path: str, lr: float = 0.1) -> None:
    pathlib.Path(out_path).mkdir()


def pair(left: str, right: str, out_path: str) -> None:
    pathlib.Path(out_path).mkdir()


def scale(x: int, out_path: str) -> None:
    pathlib.Path(out_path).write_text(str(x))


def typed(type: str, out_path: str) -> None:
    pathlib.Path(out_path).write_text(type)


def read_file(source: str, out_path: str) -> None:
    pathlib.Path(out_path).write_text(pathlib.Path(source).read_text())


def test_build_config_is_keyed_exactly_as_keyword_inputs() -> None:
    keyword = apply("s", scale, version="v1", x=1, out_path=OUT)
    configured = apply(
        "s", scale, version="v1", build_config=lambda ctx: {"x": 1, "out_path": ctx.output_path}
    )
    assert configured.lower().fingerprint == keyword.lower().fingerprint
    assert configured.lower().config == keyword.lower().config


def test_build_config_deps_are_keyed_as_handles_in_keyword_inputs() -> None:
    data = apply("data", write_json, version="v1", data=[1], out_path=OUT)
    keyword = apply("model", train, version="v0", data=data, out_path=OUT)
    through_ctx = apply(
        "model",
        train,
        version="v0",
        build_config=lambda ctx: {"data": ctx.dep(data), "out_path": ctx.output_path},
    )
    returned = apply(
        "model", train, version="v0", build_config=lambda ctx: {"data": data, "out_path": OUT}
    )
    expected = keyword.lower()
    for handle in (through_ctx, returned):
        spec = handle.lower()
        assert spec.fingerprint == expected.fingerprint
        assert spec.config == expected.config
        assert handle.deps == (data,)


def test_build_config_and_keyword_inputs_mix_in_one_step_keyed_as_one_form() -> None:
    a = apply("a", write_json, version="v0", data=1, out_path=OUT)
    b = apply("b", write_json, version="v0", data=2, out_path=OUT)
    keyword = apply("p", pair, version="v0", left=a, right=b, out_path=OUT)
    # build_config asks for b first: the deps' order still follows the arguments, as keyed.
    mixed = apply(
        "p",
        pair,
        version="v0",
        left=a,
        build_config=lambda ctx: {"out_path": ctx.output_path, "right": ctx.dep(b)},
    )
    assert mixed.lower().fingerprint == keyword.lower().fingerprint
    swapped = apply("p", pair, version="v0", left=b, right=a, out_path=OUT)
    assert mixed.lower().fingerprint != swapped.lower().fingerprint


def test_build_config_sees_the_placeholder_context_when_keyed() -> None:
    seen: list[StepContext] = []

    def config(ctx: StepContext) -> dict[str, Any]:
        seen.append(ctx)
        return {"x": 1, "out_path": ctx.output_path}

    apply("s", scale, version="v1", build_config=config)
    [ctx] = seen
    assert not ctx.at_run_time
    assert ctx.output_path == "<output_path>"
    assert ctx.prefix == "<prefix>"
    assert ctx.region == "<region>"


def test_build_config_derived_paths_are_keyed_by_their_placeholder_text() -> None:
    data = apply("data", write_json, version="v1", data=[1], out_path=OUT)

    def config(ctx: StepContext) -> dict[str, Any]:
        return {
            "source": os.path.join(ctx.dep(data), "part-0.json"),
            "out_path": pathlib.Path(ctx.output_path) / "copy.json",
        }

    step = apply("copy", read_file, version="v1", build_config=config)
    spec = step.lower()
    assert step.deps == (data,)
    assert spec.config["inputs"] == {
        "source": "<dep:data@v1>/part-0.json",
        "out_path": "<output_path>/copy.json",  # a Path under a placeholder: no input file
    }
    other = apply("data", write_json, version="v1", data=[2], out_path=OUT)
    moved = apply(
        "copy",
        read_file,
        version="v1",
        build_config=lambda ctx: {
            "source": os.path.join(ctx.dep(other), "part-0.json"),
            "out_path": pathlib.Path(ctx.output_path) / "copy.json",
        },
    )
    assert moved.lower().fingerprint != spec.fingerprint  # the dep's key is in the step's


def test_a_path_made_from_the_output_url_is_keyed_by_its_text_not_read_as_a_file() -> None:
    def config(ctx: StepContext) -> dict[str, Any]:
        return {"source": pathlib.Path(ctx.output_url) / "a.json", "out_path": ctx.output_path}

    spec = apply("mirrored", read_file, version="v1", build_config=config).lower()
    assert spec.config["inputs"]["source"] == "<output_url>/a.json"  # no file looked for there


def test_build_config_refuses_an_argument_given_twice_naming_it() -> None:
    with pytest.raises(TypeError, match=r"^step 's': argument 'x' is given twice"):
        apply("s", scale, version="v1", x=1, build_config=lambda ctx: {"x": 2, "out_path": OUT})


def test_build_config_unencodable_value_is_the_error_keyword_inputs_raise() -> None:
    with pytest.raises(UnfingerprintableError, match=r"^s\.inputs\.x: ") as keyword:
        apply("s", scale, version="v1", x=object(), out_path=OUT)
    with pytest.raises(UnfingerprintableError, match=r"^s\.inputs\.x: ") as configured:
        apply("s", scale, version="v1", build_config=lambda ctx: {"x": object(), "out_path": OUT})
    assert type(configured.value) is type(keyword.value)


@pytest.mark.parametrize("result", [[("x", 1)], None, {1: "x"}])
def test_build_config_must_return_a_mapping_of_argument_names(result: Any) -> None:
    with pytest.raises(TypeError, match=r"^step 's': build_config must return a mapping"):
        apply("s", scale, version="v1", build_config=lambda ctx: result)


def test_build_config_arguments_are_checked_against_the_function() -> None:
    with pytest.raises(TypeError, match=r"^step 's': .*unexpected argument 'xx'.*'x'"):
        apply("s", scale, version="v1", build_config=lambda ctx: {"xx": 1, "out_path": OUT})


def test_build_config_error_when_keyed_says_which_step() -> None:
    def broken(ctx: StepContext) -> dict[str, Any]:
        raise KeyError("lr")

    with pytest.raises(KeyError) as info:
        apply("s", scale, version="v1", build_config=broken)
    assert any("build_config of step 's'" in note for note in info.value.__notes__)


def test_build_config_two_deps_with_one_name_and_version_are_refused() -> None:
    one = apply("data", write_json, version="v1", data=[1], out_path=OUT)
    two = apply("data", write_json, version="v1", data=[2], out_path=OUT)
    with pytest.raises(LoweringError, match=r"'data' at version 'v1'"):
        apply(
            "p",
            pair,
            version="v0",
            build_config=lambda ctx: {
                "left": f"{ctx.dep(one)}/a",
                "right": f"{ctx.dep(two)}/a",
                "out_path": OUT,
            },
        )


def test_type_is_stored_on_the_handle_and_never_keyed() -> None:
    plain = apply("s", scale, version="v1", x=1, out_path=OUT)
    typed_step = apply("s", scale, version="v1", type="json", x=1, out_path=OUT)
    assert plain.type is None
    assert typed_step.type == "json"
    assert typed_step.lower().type == "json"
    assert typed_step.lower().fingerprint == plain.lower().fingerprint


@pytest.mark.parametrize("given", ["", 3, str])
def test_type_must_be_a_non_empty_str(given: Any) -> None:
    with pytest.raises(TypeError, match=r"^step 's': type must be a non-empty str"):
        apply("s", scale, version="v1", type=given, x=1, out_path=OUT)


def test_a_function_argument_named_type_is_given_through_build_config() -> None:
    with pytest.raises(TypeError, match=r"^step 't': typed\(\) takes an argument named 'type'"):
        apply("t", typed, version="v1", type="csv", out_path=OUT)
    step = apply(
        "t",
        typed,
        version="v1",
        type="text",
        build_config=lambda ctx: {"type": "csv"},
        out_path=OUT,
    )
    assert step.type == "text"
    assert step.lower().config["inputs"] == {"type": "csv", "out_path": "<output_path>"}


def test_type_and_build_config_are_for_function_steps() -> None:
    with pytest.raises(TypeError, match=r"^step 'op': type= and build_config= are for function"):
        apply("op", Transform, type="data")


def test_handles_without_the_new_parameters_are_unchanged() -> None:
    step = apply("s", scale, version="v1", x=1, out_path=OUT)
    assert isinstance(step, ArtifactStep)
    assert step.type is None
    assert step.build_config is None


def test_a_dep_used_only_in_a_path_is_an_input_of_the_argument_reading_it() -> None:
    from stemma.core.graph.step import deps_by_argument

    data = apply("data", write_json, version="v1", data=[1], out_path=OUT)
    unused = apply("unused", write_json, version="v1", data=[2], out_path=OUT)

    def config(ctx: StepContext) -> dict[str, Any]:
        ctx.dep(unused)  # asked for, put nowhere: still a dep, an input of build_config
        return {"source": os.path.join(ctx.dep(data), "a.json"), "out_path": OUT}

    step = apply("copy", read_file, version="v1", build_config=config)
    assert step.deps == (unused, data)  # asked for in this order, neither in an argument
    assert deps_by_argument(step) == {"source": [data], "build_config": [unused]}
    keyword = apply("pair", pair, version="v0", left=data, right=[unused, data], out_path=OUT)
    assert deps_by_argument(keyword) == {"left": [data], "right": [unused, data]}
