"""Example composites the tests and docs use, importable by module name in spawned workers."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel

from stemma.core.examples.operations import MetricCalculator, Transform
from stemma.core.operations.composite import CompositeContext, CompositeDefinition
from stemma.core.operations.specs import InputSpec, OutputSpec


class TransformThenScore(CompositeDefinition):
    """Scale each dataset's y by ``scale``, then score the scaled datasets."""

    class Params(BaseModel):
        """How much to scale y by before scoring."""

        scale: float = 2.0

    name = "example.transform_then_score"
    inputs: ClassVar = {"dataset": InputSpec(artifact_type="data")}
    outputs: ClassVar = {"metrics": OutputSpec(artifact_type="metric")}
    params: Params = Params()

    def compose(self, ctx: CompositeContext[Any]) -> None:
        """Transform, then score what the transform made."""
        scaled = ctx.run(
            Transform, inputs={"dataset": ctx.input("dataset")}, params={"scale": self.params.scale}
        )
        scored = ctx.run(MetricCalculator, inputs={"dataset": scaled.output("dataset")})
        ctx.output("metrics", scored.output("metrics"))
