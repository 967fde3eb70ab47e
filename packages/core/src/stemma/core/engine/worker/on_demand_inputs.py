"""The lifecycle's inputs whose sandbox paths put the sandbox in place when first read.

They are the :mod:`~stemma.core.operations.results` classes an operation is typed against
(``isinstance`` holds, every field reads the same), except that reading ``sandbox_dir``,
``execute_dir`` or ``log_path`` moves the unit's spare sandbox to its own path first
(:meth:`~stemma.core.engine.worker.sandbox.UnitSandbox.place`). An operation can only write
into its sandbox through one of those paths, so one that reads none never needs it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stemma.core.engine.worker.sandbox import UnitSandbox
from stemma.core.operations.drafts import FinalizedArtifact
from stemma.core.operations.results import ExecuteInput, PostprocessInput, PreprocessInput

Associated = Mapping[str, Mapping[str, Mapping[str, list[FinalizedArtifact]]]]


class OnDemandPreprocessInput(PreprocessInput):
    """A :class:`PreprocessInput` whose ``sandbox_dir`` places the sandbox."""

    def __init__(
        self,
        *,
        sandbox: UnitSandbox,
        input_artifacts: Mapping[str, list[FinalizedArtifact]],
        materialized_paths: Mapping[str, list[Path]],
        associated: Associated,
    ) -> None:
        """Hold ``sandbox`` and the fields (frozen: set once, as the dataclass does)."""
        object.__setattr__(self, "_sandbox", sandbox)
        object.__setattr__(self, "input_artifacts", input_artifacts)
        object.__setattr__(self, "materialized_paths", materialized_paths)
        object.__setattr__(self, "associated", associated)

    @property
    def sandbox_dir(self) -> Path:  # pyright: ignore[reportIncompatibleVariableOverride]
        """The ``preprocess/`` directory of this execution's sandbox."""
        sandbox: UnitSandbox = self.__dict__["_sandbox"]
        return sandbox.place().preprocess


class OnDemandExecuteInput(ExecuteInput):
    """An :class:`ExecuteInput` whose ``execute_dir`` and ``log_path`` place the sandbox."""

    def __init__(self, *, sandbox: UnitSandbox, prepared: Mapping[str, Any]) -> None:
        """Hold ``sandbox`` and what ``preprocess`` prepared."""
        object.__setattr__(self, "_sandbox", sandbox)
        object.__setattr__(self, "prepared", prepared)

    @property
    def execute_dir(self) -> Path:  # pyright: ignore[reportIncompatibleVariableOverride]
        """The ``execute/`` directory: write outputs here."""
        sandbox: UnitSandbox = self.__dict__["_sandbox"]
        return sandbox.place().execute

    @property
    def log_path(self) -> Path:  # pyright: ignore[reportIncompatibleVariableOverride]
        """``tool_output.log``: send a tool's stdout and stderr here."""
        sandbox: UnitSandbox = self.__dict__["_sandbox"]
        return sandbox.place().log_path


class OnDemandPostprocessInput(PostprocessInput):
    """A :class:`PostprocessInput` whose ``execute_dir`` places the sandbox."""

    def __init__(self, *, sandbox: UnitSandbox, execute_result: Any, step_number: int) -> None:
        """Hold ``sandbox``; ``files`` are those ``execute`` left (none if never placed)."""
        object.__setattr__(self, "_sandbox", sandbox)
        object.__setattr__(self, "files", sandbox.files())
        object.__setattr__(self, "execute_result", execute_result)
        object.__setattr__(self, "step_number", step_number)

    @property
    def execute_dir(self) -> Path:  # pyright: ignore[reportIncompatibleVariableOverride]
        """The ``execute/`` directory."""
        sandbox: UnitSandbox = self.__dict__["_sandbox"]
        return sandbox.place().execute
