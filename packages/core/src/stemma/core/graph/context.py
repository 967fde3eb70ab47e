"""``StepContext``: what a step's inputs (``OUT``, deps) mean when keyed and when run."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Generator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stemma.core.graph.markers import OUT, OUTPUT_PLACEHOLDER

if TYPE_CHECKING:
    from stemma.core.graph.step import ArtifactStep


class StepContext:
    """Resolves ``OUT`` and dependency handles inside a step's inputs.

    At fingerprint time ``OUT`` is the placeholder ``<output_path>`` and a dependency is its
    fingerprint, so keys never depend on where things are stored. At run time both are real
    paths (as strings, like the seed's ``write_json`` expects).
    """

    def __init__(
        self, *, output_path: str, dep_values: Mapping[ArtifactStep, Any], at_run_time: bool
    ) -> None:
        self.output_path = output_path
        self.at_run_time = at_run_time
        self._dep_values = dep_values

    @classmethod
    def for_fingerprint(cls, dep_fingerprints: Mapping[ArtifactStep, str]) -> StepContext:
        """A context with placeholders: ``OUT`` and deps stand for their identities."""
        values = {
            dep: {"$step": dep.name, "fingerprint": fp} for dep, fp in dep_fingerprints.items()
        }
        return cls(output_path=OUTPUT_PLACEHOLDER, dep_values=values, at_run_time=False)

    @classmethod
    def for_run(cls, output_path: Path, dep_paths: Mapping[ArtifactStep, Path]) -> StepContext:
        """A context with real paths, used when the step's function is called."""
        values = {dep: str(path) for dep, path in dep_paths.items()}
        return cls(output_path=str(output_path), dep_values=values, at_run_time=True)

    def dep(self, handle: ArtifactStep) -> Any:
        """What ``handle`` stands for in this context.

        Raises:
            ValueError: ``handle`` is not a declared dependency of the step.
        """
        try:
            return self._dep_values[handle]
        except KeyError:
            raise ValueError(
                f"step {handle.name!r} is not a declared dependency here; pass its handle in the "
                "step's inputs so it is tracked"
            ) from None

    def resolve(self, value: Any) -> Any:
        """Return ``value`` with ``OUT`` and every handle inside it replaced."""
        from stemma.core.graph.step import ArtifactStep

        if value is OUT:
            return self.output_path
        if isinstance(value, ArtifactStep):
            return self.dep(value)
        if isinstance(value, dict):
            items: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
            return {key: self.resolve(item) for key, item in items.items()}
        if isinstance(value, list | tuple):
            seq: list[Any] | tuple[Any, ...] = value  # pyright: ignore[reportUnknownVariableType]
            resolved = [self.resolve(item) for item in seq]
            return resolved if isinstance(value, list) else tuple(resolved)
        return value


_RUNNING = threading.local()


@contextlib.contextmanager
def running_under(root: Path) -> Generator[None]:
    """Mark this thread as running a step of the store at ``root`` (see :func:`current_root`)."""
    previous = getattr(_RUNNING, "root", None)
    _RUNNING.root = root
    try:
        yield
    finally:
        _RUNNING.root = previous


def current_root() -> Path:
    """The root of the store whose step this thread is running.

    Raises:
        RuntimeError: called outside a running step.
    """
    root: Path | None = getattr(_RUNNING, "root", None)
    if root is None:
        raise RuntimeError("current_root() is only known while a step runs (inside run())")
    return root
