"""Execution keys written by hand are byte for byte the canonical encoder's (keys never move)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from stemma.core.engine.cache.step_keys import ExecutionKeys, execution_key
from stemma.core.examples import DataGenerator, Transform
from stemma.core.identity import hash_plain
from stemma.core.operations.definition import OperationDefinition


def canonical_key(operation: OperationDefinition, inputs: Mapping[str, Sequence[str]]) -> str:
    """The key as the canonical encoder writes it: the definition the fast path must match."""
    return hash_plain(
        {
            "name": operation.name,
            "version": type(operation).version,
            "params": operation.key_params(),
            "overrides": operation.overrides(),
            "inputs": {role: sorted(ids) for role, ids in inputs.items()},
        }
    )


OPERATIONS = [
    Transform(),
    Transform.build(params={"scale": 0.5}, environment={"Z": "é", "A": 'q"'}, tool={"x": "1"}),
    DataGenerator.build(params={"prefix": "naïve \\ name\n", "count": 7}),
]
INPUTS: list[dict[str, list[str]]] = [
    {},
    {"dataset": []},
    {"dataset": ["b" * 32, "a" * 32]},
    {"right": ["y"], "left": ["x2", "x1"], "@associated:left:metric": ["m", "\u2028", "😀"]},
    {'role "quoted"': ["tab\there", "ctl\x01"]},
]


@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize("inputs", INPUTS)
def test_execution_keys_equal_the_canonical_encoding(
    operation: OperationDefinition, inputs: dict[str, list[str]]
) -> None:
    keys = ExecutionKeys(operation)
    assert keys.key(inputs) == canonical_key(operation, inputs)
    assert execution_key(operation, inputs) == canonical_key(operation, inputs)


def test_execution_keys_ignore_id_order_and_see_roles() -> None:
    keys = ExecutionKeys(Transform())
    assert keys.key({"a": ["x", "y"]}) == keys.key({"a": ["y", "x"]})
    assert keys.key({"a": ["x"], "b": ["y"]}) != keys.key({"a": ["y"], "b": ["x"]})
    assert keys.key({"a": ["x"]}) != ExecutionKeys(Transform.build(params={"scale": 2})).key(
        {"a": ["x"]}
    )
