"""Class-time checks of composites: compose overridden, outputs declared, nothing else."""

from typing import Any, ClassVar

import pytest

from stemma.core.errors import OperationDefinitionError
from stemma.core.examples import TransformThenScore
from stemma.core.operations import ExecuteInput, InputSpec, OutputSpec
from stemma.core.operations.composite import CompositeContext, CompositeDefinition
from stemma.core.operations.definition import OperationKind


def test_a_composite_is_its_own_kind() -> None:
    assert TransformThenScore.kind is OperationKind.COMPOSITE
    assert not TransformThenScore.is_curator()


def test_a_composite_must_override_compose() -> None:
    with pytest.raises(OperationDefinitionError, match="does not override compose"):

        class NoCompose(CompositeDefinition):  # pyright: ignore[reportUnusedClass]
            name = "cd_no_compose"
            outputs: ClassVar = {"out": OutputSpec(artifact_type="data")}


def test_a_composite_must_declare_outputs() -> None:
    with pytest.raises(OperationDefinitionError, match="declares no outputs"):

        class NoOutputs(CompositeDefinition):  # pyright: ignore[reportUnusedClass]
            name = "cd_no_outputs"
            inputs: ClassVar = {"data": InputSpec(artifact_type="data")}

            def compose(self, ctx: CompositeContext[Any]) -> None:
                pass


def test_a_composite_may_not_also_be_a_creator() -> None:
    with pytest.raises(OperationDefinitionError, match="keep compose only"):

        class Both(CompositeDefinition):  # pyright: ignore[reportUnusedClass]
            name = "cd_both"
            outputs: ClassVar = {"out": OutputSpec(artifact_type="data")}

            def compose(self, ctx: CompositeContext[Any]) -> None:
                pass

            def execute(self, inp: ExecuteInput) -> Any:
                return None


def test_the_errors_name_the_class() -> None:
    with pytest.raises(OperationDefinitionError, match="NoCompose2"):

        class NoCompose2(CompositeDefinition):  # pyright: ignore[reportUnusedClass]
            name = "cd_no_compose_2"
            outputs: ClassVar = {"out": OutputSpec(artifact_type="data")}
