"""The two keys of an operation step, as docs/concepts/identity-and-keys.md defines them (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stemma.core.canonical import dumps_plain, json_string
from stemma.core.identity import hash_encoded, hash_plain
from stemma.core.operations.definition import OperationDefinition

OPERATION_KIND = "operation"


def step_fingerprint(
    operation: OperationDefinition,
    *,
    refs: Mapping[str, Sequence[tuple[str, str]]],
    literals: Mapping[str, Sequence[str]],
) -> str:
    """The Merkle step key (``step_spec_id``).

    Args:
        operation: the configured operation (params with defaults, overrides).
        refs: per input role, the (upstream fingerprint, upstream role) pairs it reads.
        literals: per input role, the artifact ids given literally.

    Never in it: the step number, resources, execution (batching), backend, root or run id.
    """
    inputs: dict[str, Any] = {}
    for role, pairs in refs.items():
        inputs.setdefault(role, {})["refs"] = sorted([fp, upstream] for fp, upstream in pairs)
    for role, ids in literals.items():
        inputs.setdefault(role, {})["ids"] = sorted(set(ids))
    return hash_plain(
        {
            "kind": OPERATION_KIND,
            "name": operation.name,
            "version": type(operation).version,
            "config": {
                "params": operation.key_params(),
                "overrides": operation.overrides(),
                "inputs": inputs,
            },
        }
    )


def execution_key(operation: OperationDefinition, inputs: Mapping[str, Sequence[str]]) -> str:
    """The role-aware execution key of one unit: name, version, params, overrides, ids per role."""
    return ExecutionKeys(operation).key(inputs)


class ExecutionKeys:
    """The execution keys of one operation's units, its constant part encoded once.

    A key is the hash of the canonical JSON of ``{"inputs": {role: sorted ids}, "name": ...,
    "overrides": ..., "params": ..., "version": ...}``. "inputs" sorts first, so every key is
    the per-unit ``{"inputs": ...`` followed by one shared text: a step of 10^6 units encodes
    its params once, not 10^6 times, and each key's text is byte for byte what the canonical
    encoder would write (keys never change with this).
    """

    __slots__ = ("_tail",)

    def __init__(self, operation: OperationDefinition) -> None:
        constant = dumps_plain(
            {
                "name": operation.name,
                "version": type(operation).version,
                "params": operation.key_params(),
                "overrides": operation.overrides(),
            }
        )
        self._tail = constant[1:]  # '"name":...}', after the opening brace

    def key(self, inputs: Mapping[str, Sequence[str]]) -> str:
        """The key of the unit given ``inputs`` (``{role: artifact ids}``, any order)."""
        roles = ",".join(
            f"{json_string(role)}:[{','.join(map(json_string, sorted(inputs[role])))}]"
            for role in sorted(inputs)
        )
        return hash_encoded(f'{{"inputs":{{{roles}}},{self._tail}')
