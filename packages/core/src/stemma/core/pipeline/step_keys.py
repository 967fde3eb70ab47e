"""The two keys of an operation step, as DESIGN.md §3 defines them (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stemma.core.identity import hash_plain
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
    return hash_plain(
        {
            "name": operation.name,
            "version": type(operation).version,
            "params": operation.key_params(),
            "overrides": operation.overrides(),
            "inputs": {role: sorted(ids) for role, ids in inputs.items()},
        }
    )
