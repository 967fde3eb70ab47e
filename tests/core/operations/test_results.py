from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import polars as pl
import pytest

from stemma.core.errors import ResultValidationError
from stemma.core.operations import (
    ArtifactResult,
    DataDraft,
    ExecuteInput,
    InputSpec,
    MetricDraft,
    OperationDefinition,
    OutputSpec,
    PassthroughResult,
    PostprocessInput,
    PreprocessInput,
    validate_result,
)

ID_A, ID_B = "a" * 32, "b" * 32


class Summarize(OperationDefinition):
    name = "summarize_for_result_tests"
    inputs: ClassVar = {"table": InputSpec(artifact_type="data")}
    outputs: ClassVar = {
        "table": OutputSpec(artifact_type="data", infer_lineage_from={"inputs": ["table"]}),
        "stats": OutputSpec(
            artifact_type="metric", required=False, infer_lineage_from={"outputs": ["table"]}
        ),
        "notes": OutputSpec(required=False, infer_lineage_from={"inputs": ["table"]}),
    }

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        return {}

    def execute(self, inp: ExecuteInput) -> Any:
        return None

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        return ArtifactResult(artifacts={"table": []})


class Keep(OperationDefinition):
    name = "keep_for_result_tests"
    inputs: ClassVar = {"items": InputSpec()}
    outputs: ClassVar = {"items": OutputSpec()}

    def execute_curator(
        self, inputs: Mapping[str, pl.DataFrame], step_number: int, store: Any
    ) -> ArtifactResult | PassthroughResult:
        return PassthroughResult(passthrough={"items": []})


def _table(name: str = "t1.csv") -> DataDraft:
    return DataDraft.draft(b"x\n1\n", name)


def test_validate_result_accepts_matching_drafts_and_returns_the_result() -> None:
    result = ArtifactResult(
        artifacts={
            "table": [_table()],
            "stats": [MetricDraft.draft({"n": 1}, "t1.json")],
            "notes": [MetricDraft.draft({}, "t1.notes.json")],
        },
        lineage={"table": [[ID_A]]},
    )
    assert validate_result(Summarize, result) is result
    assert validate_result(Summarize(), result) is result


def test_validate_result_with_an_unknown_role_lists_the_declared_roles() -> None:
    result = ArtifactResult(artifacts={"table": [], "tabel": [_table()]})
    with pytest.raises(
        ResultValidationError,
        match=r"unknown output roles \['tabel'\]; its outputs are: notes, stats, table",
    ):
        validate_result(Summarize, result)


def test_validate_result_missing_a_required_role_raises() -> None:
    with pytest.raises(
        ResultValidationError, match=r"did not return required output roles \['table'\]"
    ):
        validate_result(Summarize, ArtifactResult(artifacts={"stats": []}))


def test_validate_result_with_a_draft_of_the_wrong_type_names_role_and_types() -> None:
    result = ArtifactResult(artifacts={"table": [MetricDraft.draft({}, "m.json")]})
    with pytest.raises(
        ResultValidationError, match=r"\['table'\]\[0\] \('m.json'\) is a metric artifact.*data"
    ):
        validate_result(Summarize, result)


def test_validate_result_with_something_other_than_a_draft_raises() -> None:
    result = ArtifactResult(artifacts={"table": [b"x\n"]})  # pyright: ignore[reportArgumentType]
    with pytest.raises(ResultValidationError, match=r"\['table'\]\[0\] is a bytes; return drafts"):
        validate_result(Summarize, result)


def test_validate_result_with_misaligned_lineage_raises() -> None:
    result = ArtifactResult(
        artifacts={"table": [_table(), _table("t2.csv")]}, lineage={"table": [[ID_A]]}
    )
    with pytest.raises(ResultValidationError, match=r"lineage\['table'\] has 1 entries for 2"):
        validate_result(Summarize, result)


def test_validate_result_with_lineage_for_a_role_without_artifacts_raises() -> None:
    result = ArtifactResult(artifacts={"table": []}, lineage={"stats": [[ID_A]]})
    with pytest.raises(ResultValidationError, match=r"lineage names role 'stats'"):
        validate_result(Summarize, result)


def test_validate_result_with_a_malformed_lineage_id_raises() -> None:
    result = ArtifactResult(artifacts={"table": [_table()]}, lineage={"table": [["nope"]]})
    with pytest.raises(ResultValidationError, match=r"'nope' is not an artifact id"):
        validate_result(Summarize, result)


def test_failed_result_is_returned_without_checking_artifacts() -> None:
    failed = ArtifactResult.failure("tool exited 1", exit_code=1)
    assert validate_result(Summarize, failed) is failed
    assert failed.metadata == {"exit_code": 1}


def test_failed_result_without_an_error_message_raises() -> None:
    with pytest.raises(ResultValidationError, match="needs an error message"):
        ArtifactResult(success=False)


def test_curator_passthrough_is_accepted() -> None:
    result = PassthroughResult(passthrough={"items": [ID_A, ID_B]})
    assert validate_result(Keep, result) is result
    assert result.success


def test_creator_passthrough_is_refused() -> None:
    with pytest.raises(ResultValidationError, match="is a creator; only curators may return"):
        validate_result(Summarize, PassthroughResult(passthrough={"table": [ID_A]}))


@pytest.mark.parametrize(
    ("passthrough", "message"),
    [
        ({"item": [ID_A]}, r"unknown output roles \['item'\]; its outputs are: items"),
        ({"items": ["A" * 32]}, r"passthrough\['items'\]: 'A{32}' is not an artifact id"),
        ({"items": ID_A}, r"must be a list of artifact ids, got a str"),
    ],
)
def test_passthrough_with_bad_roles_or_ids_raises(passthrough: Any, message: str) -> None:
    with pytest.raises(ResultValidationError, match=message):
        validate_result(Keep, PassthroughResult(passthrough=passthrough))


def test_validate_result_with_a_non_result_says_what_to_return() -> None:
    with pytest.raises(
        ResultValidationError, match="returned dict; return an ArtifactResult or a Pass"
    ):
        validate_result(Keep, {"items": []})
    with pytest.raises(
        ResultValidationError, match=r"returned NoneType; return an ArtifactResult$"
    ):
        validate_result(Summarize, None)
