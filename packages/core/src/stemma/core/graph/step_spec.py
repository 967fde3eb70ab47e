"""``StepSpec`` and ``lower``: the keyed, executable form of a handle graph.

Lowering is pure (no I/O except reading ``.git`` once for provenance, no user code), iterative
(a 2,000-level lattice never hits the recursion limit) and linear: each handle is lowered once
per memo, and a shared memo makes a dep shared by several handles lower to the same object.
"""

from __future__ import annotations

import gc
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import xxhash

from stemma.core.errors import FingerprintMismatchError, LoweringError
from stemma.core.provenance import capture_provenance
from stemma.core.records import Provenance, StepIdentity

if TYPE_CHECKING:
    from stemma.core.graph.step import ArtifactStep
from stemma.core.graph.markers import (
    DEP_TAG,
    FUNCTION_KIND,
    OUT_TAG,
    OUT_URL_TAG,
    OUTPUT_PLACEHOLDER,
    WRITE_URL_PLACEHOLDER,
)


@dataclass(frozen=True, eq=False, kw_only=True, slots=True)
class StepSpec:
    """One step, keyed: its handle, its Merkle fingerprint and its lowered deps."""

    step: ArtifactStep
    """The handle this spec was lowered from."""
    fingerprint: str
    """The step key: xxh3_128 over kind, name, version, full config and dep fingerprints."""
    deps: tuple[StepSpec, ...]
    """Lowered deps, in the order of ``step.deps``."""
    provenance: Provenance = field(repr=False)
    """Captured once per ``lower()`` call and shared by every spec it made."""
    mutable: bool = False
    """Whether the step always reruns (``dev`` / ``*-dev``); copied from the handle."""

    @property
    def name(self) -> str:
        """The step's name."""
        return self.step.name

    @property
    def version(self) -> str:
        """The step's version."""
        return self.step.version

    @property
    def type(self) -> str | None:
        """The artifact's type given to ``apply`` (``type=``), or None; never part of the key."""
        return self.step.type

    @property
    def output_relpath(self) -> str:
        """Where the output lives, relative to a store root; stable across roots."""
        return f"outputs/{self.name}/{self.version}-{self.fingerprint[:16]}"

    @property
    def config(self) -> dict[str, Any]:
        """The fingerprint-time config, decoded from exactly what the fingerprint hashed.

        Deps show as ``{"$step": name, "fingerprint": …}`` and ``OUT`` as ``<output_path>``,
        so a diff of two configs names what changed in the key.
        """
        return {
            "kind": FUNCTION_KIND,
            "name": self.name,
            "version": self.version,
            "inputs": _readable(json.loads(self.step.template), self.deps),
        }

    def identity(self) -> StepIdentity:
        """The record of this step's identity, as stores keep it."""
        return StepIdentity(
            fingerprint=self.fingerprint,
            name=self.name,
            version=self.version,
            config=self.config,
            dep_fingerprints=tuple(dep.fingerprint for dep in self.deps),
        )

    def __repr__(self) -> str:
        return f"StepSpec({self.name!r}, version={self.version!r}, fingerprint={self.fingerprint})"


def _readable(value: Any, deps: tuple[StepSpec, ...]) -> Any:
    if isinstance(value, dict):
        mapping = cast(dict[str, Any], value)
        if len(mapping) == 1 and DEP_TAG in mapping:
            dep: StepSpec = deps[int(mapping[DEP_TAG])]
            return {"$step": dep.name, "fingerprint": dep.fingerprint}
        if len(mapping) == 1 and OUT_TAG in mapping:
            return OUTPUT_PLACEHOLDER
        if len(mapping) == 1 and OUT_URL_TAG in mapping:
            return WRITE_URL_PLACEHOLDER
        return {key: _readable(item, deps) for key, item in mapping.items()}
    if isinstance(value, list):
        return [_readable(item, deps) for item in cast(list[Any], value)]
    return value


def lower(handle: ArtifactStep, memo: dict[ArtifactStep, StepSpec] | None = None) -> StepSpec:
    """Lower ``handle`` and everything it depends on to :class:`StepSpec` objects.

    Args:
        handle: the handle to lower.
        memo: share one dict across calls so shared deps lower to the identical spec.

    Raises:
        LoweringError: a fixed-version step depends on a mutable (``dev``) one.
        FingerprintMismatchError: a step pinned with ``expected_fingerprint`` lowered to another.
    """
    memo = {} if memo is None else memo
    if handle in memo:
        return memo[handle]
    provenance = capture_provenance()
    # Lowering allocates only acyclic objects; pausing the cyclic collector keeps it from
    # rescanning the whole (growing) graph again and again, which made big graphs superlinear.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _lower_iteratively(handle, memo, provenance)
    finally:
        if was_enabled:
            gc.enable()


def _lower_iteratively(
    handle: ArtifactStep, memo: dict[ArtifactStep, StepSpec], provenance: Provenance
) -> StepSpec:
    stack: list[tuple[ArtifactStep, bool]] = [(handle, False)]
    push, pop = stack.append, stack.pop
    hexdigest = xxhash.xxh3_128_hexdigest
    while stack:
        node, deps_ready = pop()
        if node in memo:
            continue
        if not deps_ready:
            push((node, True))
            stack.extend((dep, False) for dep in reversed(node.deps) if dep not in memo)
            continue
        # The hot loop of lowering: kept inline, it is most of the cost of a 100k-node graph.
        deps = tuple([memo[dep] for dep in node.deps])
        if not node.mutable and any(dep.mutable for dep in deps):
            _refuse_mutable_dep(node, deps)
        payload = (
            node.key_head + ",".join(['"' + dep.fingerprint + '"' for dep in deps]) + node.key_tail
        )
        fingerprint = hexdigest(payload.encode())
        if node.expected_fingerprint is not None and node.expected_fingerprint != fingerprint:
            _refuse_pin(node, fingerprint)
        memo[node] = StepSpec(
            step=node,
            fingerprint=fingerprint,
            deps=deps,
            provenance=provenance,
            mutable=node.mutable,
        )
    return memo[handle]


def _refuse_mutable_dep(node: ArtifactStep, deps: tuple[StepSpec, ...]) -> None:
    dep = next(dep for dep in deps if dep.mutable)
    raise LoweringError(
        f"step {node.name!r} (version {node.version!r}) depends on {dep.name!r} "
        f"(version {dep.version!r}), which is mutable and reruns every time; give "
        f"{dep.name!r} a fixed version, or make {node.name!r} a '-dev' version too"
    )


def _refuse_pin(node: ArtifactStep, fingerprint: str) -> None:
    raise FingerprintMismatchError(
        f"step {node.name!r} is pinned to fingerprint {node.expected_fingerprint} but lowers "
        f"to {fingerprint}: its config, version or a dependency changed. If the change is "
        f"intended, update expected_fingerprint to {fingerprint!r}"
    )
