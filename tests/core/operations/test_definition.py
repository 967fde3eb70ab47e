from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import polars as pl
import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from stemma.core.canonical import canonical_json
from stemma.core.errors import OperationConfigError, UnknownOperationError
from stemma.core.operations import (
    ArtifactResult,
    DataDraft,
    ExecuteInput,
    Execution,
    InputSpec,
    OperationDefinition,
    OperationKind,
    OutputSpec,
    PassthroughResult,
    PostprocessInput,
    PreprocessInput,
    Resources,
    get_operation,
    registered_operations,
)
from stemma.core.operations.pairing import GroupBy


class Transform(OperationDefinition):
    name = "transform"
    description = "Scale every value of a dataset."
    inputs: ClassVar = {"dataset": InputSpec(artifact_type="data")}
    outputs: ClassVar = {
        "dataset": OutputSpec(artifact_type="data", infer_lineage_from={"inputs": ["dataset"]})
    }

    class Params(BaseModel):
        scale: float = 1.0

    params: Params = Params()

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        return {"paths": inp.materialized_paths["dataset"]}

    def execute(self, inp: ExecuteInput) -> Any:
        return self.params.scale

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        drafts = [DataDraft.draft(path.read_bytes(), path.name) for path in inp.files]
        return ArtifactResult(artifacts={"dataset": drafts})


class PickFirst(OperationDefinition):
    name = "pick_first"
    inputs: ClassVar = {"items": InputSpec()}
    outputs: ClassVar = {"items": OutputSpec()}

    def execute_curator(
        self, inputs: Mapping[str, pl.DataFrame], step_number: int, store: Any
    ) -> ArtifactResult | PassthroughResult:
        first: list[str] = inputs["items"]["artifact_id"].head(1).to_list()
        return PassthroughResult(passthrough={"items": first})


class AbstractScorer(OperationDefinition):
    """No name: an abstract intermediate, neither checked nor registered."""

    outputs: ClassVar = {"score": OutputSpec(artifact_type="metric")}


class Generate(OperationDefinition):
    """Params declared only as a nested class: the params field is made from it."""

    name = "generate_for_definition_tests"
    outputs: ClassVar = {
        "data": OutputSpec(artifact_type="data", infer_lineage_from={"inputs": []})
    }

    class Params(BaseModel):
        model_config = ConfigDict(extra="allow")
        count: int = 3
        tags: frozenset[str] = frozenset({"b", "a"})

    def execute(self, inp: ExecuteInput) -> Any:
        return None

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        return ArtifactResult(artifacts={"data": []})


def test_transform_is_registered_as_a_creator() -> None:
    assert get_operation("transform") is Transform
    assert Transform.kind is OperationKind.CREATOR
    assert not Transform.is_curator()
    assert registered_operations()["transform"] is Transform


def test_pick_first_is_registered_as_a_curator() -> None:
    assert get_operation("pick_first") is PickFirst
    assert PickFirst.kind is OperationKind.CURATOR
    assert PickFirst.is_curator()


def test_abstract_intermediate_without_name_is_not_registered() -> None:
    assert AbstractScorer not in registered_operations().values()


def test_subclass_of_abstract_intermediate_is_checked_and_registered() -> None:
    class Score(AbstractScorer):
        name = "score_for_definition_tests"

        def execute_curator(
            self, inputs: Mapping[str, pl.DataFrame], step_number: int, store: Any
        ) -> ArtifactResult | PassthroughResult:
            return ArtifactResult(artifacts={"score": []})

    assert get_operation("score_for_definition_tests") is Score


def test_get_operation_unknown_name_lists_registered_names() -> None:
    with pytest.raises(UnknownOperationError, match=r"'transfrom'.*pick_first.*transform"):
        get_operation("transfrom")


def test_class_overriding_neither_path_raises() -> None:
    with pytest.raises(TypeError, match=r"Nothing: overrides neither execute .*execute_curator"):

        class Nothing(OperationDefinition):  # pyright: ignore[reportUnusedClass]
            name = "nothing"


def test_class_overriding_both_paths_raises() -> None:
    with pytest.raises(TypeError, match=r"Both: overrides both execute .* and execute_curator"):

        class Both(OperationDefinition):  # pyright: ignore[reportUnusedClass]
            name = "both"

            def execute(self, inp: ExecuteInput) -> Any:
                return None

            def execute_curator(
                self, inputs: Mapping[str, pl.DataFrame], step_number: int, store: Any
            ) -> ArtifactResult | PassthroughResult:
                return ArtifactResult()


def test_creator_output_without_infer_lineage_from_raises() -> None:
    with pytest.raises(TypeError, match=r"NoLineage: creator output 'out' has no infer_lineage"):

        class NoLineage(OperationDefinition):  # pyright: ignore[reportUnusedClass]
            name = "no_lineage"
            outputs: ClassVar = {"out": OutputSpec(artifact_type="data")}

            def execute(self, inp: ExecuteInput) -> Any:
                return None

            def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
                return ArtifactResult()


def test_creator_with_inputs_but_no_preprocess_raises() -> None:
    with pytest.raises(TypeError, match=r"NoPre: creator with inputs \['x'\].*preprocess"):

        class NoPre(OperationDefinition):  # pyright: ignore[reportUnusedClass]
            name = "no_pre"
            inputs: ClassVar = {"x": InputSpec()}

            def execute(self, inp: ExecuteInput) -> Any:
                return None


def test_creator_with_outputs_but_no_postprocess_raises() -> None:
    with pytest.raises(TypeError, match=r"NoPost: creator with outputs \['y'\].*postprocess"):

        class NoPost(OperationDefinition):  # pyright: ignore[reportUnusedClass]
            name = "no_post"
            outputs: ClassVar = {"y": OutputSpec(infer_lineage_from={"inputs": []})}

            def execute(self, inp: ExecuteInput) -> Any:
                return None


@pytest.mark.parametrize(
    ("lineage", "message"),
    [
        ({"inputs": ["datset"]}, r"names inputs roles \['datset'\].*declared: \['dataset'\]"),
        ({"outputs": ["out"]}, r"names outputs roles \['out'\].*declared: \(none\)"),
    ],
)
def test_infer_lineage_from_unknown_role_raises(lineage: Any, message: str) -> None:
    with pytest.raises(
        TypeError, match=rf"BadRole: outputs\['out'\]\.infer_lineage_from {message}"
    ):

        class BadRole(OperationDefinition):  # pyright: ignore[reportUnusedClass]
            name = "bad_role"
            inputs: ClassVar = {"dataset": InputSpec()}
            outputs: ClassVar = {"out": OutputSpec(infer_lineage_from=lineage)}

            def execute_curator(
                self, inputs: Mapping[str, pl.DataFrame], step_number: int, store: Any
            ) -> ArtifactResult | PassthroughResult:
                return ArtifactResult()


def test_duplicate_registered_name_raises_naming_both_classes() -> None:
    with pytest.raises(
        TypeError, match=r"Impostor: name 'transform' is already registered by .*Transform"
    ):

        class Impostor(PickFirst):  # pyright: ignore[reportUnusedClass]
            name = "transform"

    assert get_operation("transform") is Transform


def test_subclass_inheriting_a_name_raises() -> None:
    with pytest.raises(TypeError, match=r"PickFirstAgain: inherits name 'pick_first'"):

        class PickFirstAgain(PickFirst):  # pyright: ignore[reportUnusedClass]
            pass


def test_unregistered_artifact_type_in_a_spec_raises() -> None:
    with pytest.raises(TypeError, match=r"Typo: inputs\['x'\]: unknown artifact type 'dta'"):

        class Typo(PickFirst):  # pyright: ignore[reportUnusedClass]
            name = "typo"
            inputs: ClassVar = {"x": InputSpec(artifact_type="dta")}


def test_unknown_group_by_raises_listing_accepted() -> None:
    with pytest.raises(TypeError, match=r"Zipper: group_by 'zipp' is not one of 'zip'"):

        class Zipper(PickFirst):  # pyright: ignore[reportUnusedClass]
            name = "zipper"
            group_by = "zipp"  # pyright: ignore[reportAssignmentType]


def test_group_by_given_as_a_string_becomes_group_by() -> None:
    class Crossed(PickFirst):
        name = "crossed_for_definition_tests"
        group_by = "cross_product"  # pyright: ignore[reportAssignmentType]

    assert Crossed.group_by is GroupBy.CROSS_PRODUCT


def test_params_that_are_not_a_pydantic_model_raise() -> None:
    with pytest.raises(TypeError, match=r"Plain: Params must be a nested class deriving from"):

        class Plain(PickFirst):  # pyright: ignore[reportUnusedClass]
            name = "plain"

            class Params:  # pyright: ignore[reportIncompatibleVariableOverride]
                scale = 1.0


def test_build_with_unknown_param_names_it_and_lists_accepted() -> None:
    with pytest.raises(OperationConfigError, match=r"unknown param 'scal'; accepted params: scale"):
        Transform.build(params={"scal": 2.0})


def test_build_error_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="'transform'"):
        Transform.build(params={"scal": 2.0})


def test_build_with_unknown_param_fails_even_when_params_allow_extra() -> None:
    with pytest.raises(OperationConfigError, match=r"unknown param 'size'; accepted params: count"):
        Generate.build(params={"size": 1})


def test_build_with_invalid_param_value_names_the_field() -> None:
    with pytest.raises(OperationConfigError, match=r"params\.scale: .*valid number.*'big'"):
        Transform.build(params={"scale": "big"})


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"resources": {"cpu": 2}}, r"unknown resources key 'cpu'; accepted: cpus, extra, gpus"),
        ({"execution": {"batch": 2}}, r"unknown execution key 'batch'; accepted: artifacts_per"),
        ({"resources": {"gpus": -1}}, r"resources\.gpus: Input should be greater than or equal"),
        ({"execution": {"artifacts_per_unit": 4, "max_artifacts_per_unit": 2}}, r"below"),
    ],
)
def test_build_with_bad_settings_names_the_field(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(OperationConfigError, match=message):
        Transform.build(**settings)


def test_build_with_valid_settings_validates_each_section() -> None:
    op = Transform.build(
        params={"scale": 0.5},
        resources={"cpus": 4, "time_limit": "2-00:00:00"},
        execution={"artifacts_per_unit": 10},
        environment={"OMP_NUM_THREADS": "4"},
    )
    assert op.params.scale == 0.5
    assert op.resources == Resources(cpus=4, time_limit="2-00:00:00")
    assert op.execution == Execution(artifacts_per_unit=10)


def test_nested_params_without_annotation_become_the_params_field() -> None:
    op = Generate.build(params={"count": 5})
    assert op.params_model() == Generate.Params(count=5)
    assert Generate().params_model() == Generate.Params()


def test_key_params_include_defaults_in_canonical_form() -> None:
    assert Transform().key_params() == {"scale": 1.0}
    assert Generate().key_params() == {"count": 3, "tags": {"$set": ["a", "b"]}}
    assert PickFirst().key_params() == {}


def test_key_params_ignore_resources_and_execution() -> None:
    plain = Transform.build(params={"scale": 2.0})
    tuned = Transform.build(
        params={"scale": 2.0}, resources={"gpus": 1}, execution={"units_per_worker": 8}
    )
    assert plain.key_params() == tuned.key_params()
    assert plain.overrides() == tuned.overrides()


def test_overrides_are_canonical_environment_and_tool() -> None:
    op = Transform.build(environment={"B": "2", "A": "1"}, tool={"image": "x:1"})
    same = Transform.build(environment={"A": "1", "B": "2"}, tool={"image": "x:1"})
    assert op.overrides() == {"environment": {"A": "1", "B": "2"}, "tool": {"image": "x:1"}}
    assert canonical_json(op.overrides()) == canonical_json(same.overrides())


def test_operation_instances_are_frozen() -> None:
    op = Transform()
    with pytest.raises(ValidationError, match="frozen"):
        op.environment = {"A": "1"}  # pyright: ignore[reportAttributeAccessIssue]


def test_default_lifecycle_of_a_creator_without_roles() -> None:
    class Wait(OperationDefinition):
        name = "wait_for_definition_tests"

        def execute(self, inp: ExecuteInput) -> Any:
            return "waited"

    assert Wait.kind is OperationKind.CREATOR
    assert Wait().key_params() == {}


@pytest.mark.parametrize(
    ("lineage", "message"),
    [
        ({"inputs": "dataset"}, "must be a list of role names"),
        ({"inputs": [], "outputs": ["x"]}, "one key"),
        ({"parents": ["x"]}, 'keys are "inputs" or "outputs"'),
        ({"outputs": []}, "names no role"),
    ],
)
def test_output_spec_rejects_malformed_infer_lineage_from(lineage: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=rf"infer_lineage_from\n.*{message}"):
        OutputSpec(infer_lineage_from=lineage)


def test_output_spec_exposes_lineage_source_and_roles() -> None:
    spec = OutputSpec(infer_lineage_from={"inputs": ["a", "b"]})
    assert (spec.lineage_source, spec.lineage_roles) == ("inputs", ("a", "b"))
    assert (OutputSpec().lineage_source, OutputSpec().lineage_roles) == (None, ())


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: InputSpec(materialize_as="csv"), "materialize_as"),
        (lambda: InputSpec(artifact_type="Data"), "artifact_type"),
        (lambda: InputSpec(hydrate=True, extra_flag=1), "extra_flag"),  # pyright: ignore[reportCallIssue]
        (lambda: Resources(time_limit="1h"), "time_limit"),
        (lambda: Resources(memory_gb=0), "memory_gb"),
        (lambda: Execution(units_per_worker=0), "units_per_worker"),
    ],
)
def test_spec_validation_messages_name_the_field(build: Any, field: str) -> None:
    with pytest.raises(ValidationError, match=field):
        build()


def _define_reloadable() -> type[OperationDefinition]:
    class Reloadable(PickFirst):
        name = "reloadable_for_definition_tests"

    return Reloadable


def test_the_same_class_defined_again_replaces_itself_as_a_reload_does() -> None:
    first, second = _define_reloadable(), _define_reloadable()
    assert first is not second
    assert get_operation("reloadable_for_definition_tests") is second


def test_build_with_empty_params_on_an_operation_without_params_works() -> None:
    from stemma.core.examples import MetricCalculator

    assert MetricCalculator.build(params={}).key_params() == {}


@pytest.mark.parametrize(
    ("anchor", "roles", "pairing", "says"),
    [
        ("primary", ("a", "b"), None, r"anchor_role 'primary' is not one of its input roles"),
        ("a", ("a",), None, r"needs at least one other input role"),
        ("a", ("a", "b"), GroupBy.ZIP, r"cannot be combined with group_by=zip"),
    ],
)
def test_a_bad_anchor_role_is_refused_naming_the_fix(
    anchor: str, roles: tuple[str, ...], pairing: GroupBy | None, says: str
) -> None:
    with pytest.raises(TypeError, match=says):

        class Anchored(OperationDefinition):  # pyright: ignore[reportUnusedClass]
            name = "anchored"
            anchor_role = anchor
            group_by = pairing
            inputs: ClassVar = {role: InputSpec() for role in roles}

            def preprocess(self, inp: PreprocessInput) -> Any:
                return None

            def execute(self, inp: ExecuteInput) -> Any:
                return None


def test_an_anchor_role_on_a_curator_is_refused() -> None:
    with pytest.raises(TypeError, match=r"is a curator and declares anchor_role 'a'"):

        class AnchoredCurator(OperationDefinition):  # pyright: ignore[reportUnusedClass]
            name = "anchored_curator"
            anchor_role = "a"
            inputs: ClassVar = {"a": InputSpec(), "b": InputSpec()}

            def execute_curator(
                self, inputs: Mapping[str, pl.DataFrame], step_number: int, store: Any
            ) -> ArtifactResult | PassthroughResult:
                return ArtifactResult()


def test_an_anchor_role_implies_lineage_pairing() -> None:
    class Anchored(OperationDefinition):
        name = "anchored_ok"
        anchor_role = "a"
        inputs: ClassVar = {"a": InputSpec(), "b": InputSpec(), "c": InputSpec()}

        def preprocess(self, inp: PreprocessInput) -> Any:
            return None

        def execute(self, inp: ExecuteInput) -> Any:
            return None

    assert Anchored.group_by is GroupBy.LINEAGE
