"""The lifecycle's inputs whose sandbox paths put the sandbox in place when first read.

They are the :mod:`~stemma.core.operations.results` classes an operation is typed against
(``isinstance`` holds, every field reads the same), except that reading ``sandbox_dir``,
``execute_dir`` or ``log_path`` moves the unit's spare sandbox to its own path first
(:meth:`~stemma.core.engine.worker.sandbox.UnitSandbox.place`). An operation can only write
into its sandbox through one of those paths, so one that reads none never needs it.

Pickled or copied (an operation handing ``inp`` to a process pool, ``copy.deepcopy``), one
becomes the plain class with its paths read, so placed; it equals the plain one with the same
fields; ``dataclasses.replace`` gives one whose paths are the ones it was given.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from stemma.core.engine.worker.sandbox import UnitSandbox
from stemma.core.engine.worker.sandbox_folders import Sandbox
from stemma.core.operations.results import ExecuteInput, PostprocessInput, PreprocessInput


def _plain(cls: type[Any], fields: dict[str, Any]) -> Any:
    """Rebuild the plain dataclass ``cls`` (what a pickled on-demand input becomes)."""
    return cls(**fields)


class _OnDemand:
    """Frozen fields set once, and path fields read through the unit's sandbox."""

    _plain_class: ClassVar[type[Any]]
    _path_fields: ClassVar[tuple[str, ...]]

    def _hold(self, sandbox: UnitSandbox | None, fields: dict[str, Any]) -> None:
        object.__setattr__(self, "_sandbox", sandbox)
        given = {name: fields.pop(name) for name in self._path_fields if name in fields}
        object.__setattr__(self, "_given", given)  # (from ``dataclasses.replace``)
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    def _path(self, name: str, folder: str) -> Path:
        given: dict[str, Path] = self.__dict__["_given"]
        if name in given:
            return given[name]
        sandbox: UnitSandbox = self.__dict__["_sandbox"]
        placed: Sandbox = sandbox.place()
        path: Path = getattr(placed, folder)
        return path

    def _fields(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self._plain_class)}

    def __reduce__(self) -> tuple[Any, ...]:
        return (_plain, (self._plain_class, self._fields()))

    def __eq__(self, other: object) -> bool:
        """Equal to the plain input (or on-demand one) with the same fields."""
        if not isinstance(other, self._plain_class):
            return NotImplemented
        theirs = (
            _plain(other._plain_class, other._fields()) if isinstance(other, _OnDemand) else other
        )
        return _plain(self._plain_class, self._fields()) == theirs

    def __hash__(self) -> int:
        return hash(_plain(self._plain_class, self._fields()))


class OnDemandPreprocessInput(_OnDemand, PreprocessInput):
    """A :class:`PreprocessInput` that places its sandbox and writes its inputs on demand.

    Reading ``sandbox_dir`` places the sandbox; reading ``materialized_paths`` writes the inputs'
    files (the sandbox placed first) and returns them.
    """

    _plain_class = PreprocessInput
    _path_fields = ("sandbox_dir", "materialized_paths")

    def __init__(
        self,
        *,
        sandbox: UnitSandbox | None = None,
        materialize: Callable[[], Mapping[str, list[Path]]] | None = None,
        **fields: Any,
    ) -> None:
        """Hold ``sandbox`` and the other fields (frozen: set once, as the dataclass does).

        Args:
            sandbox: the unit's sandbox, placed when a path into it is first read.
            materialize: writes the inputs' files and returns their paths (once); used when
                ``materialized_paths`` is not among the fields.
            **fields: the rest of :class:`PreprocessInput`'s fields.
        """
        object.__setattr__(self, "_materialize", materialize)
        self._hold(sandbox, fields)

    @property
    def sandbox_dir(self) -> Path:  # pyright: ignore[reportIncompatibleVariableOverride]
        """The ``preprocess/`` directory of this execution's sandbox."""
        return self._path("sandbox_dir", "preprocess")

    @property
    def materialized_paths(self) -> Mapping[str, list[Path]]:  # pyright: ignore[reportIncompatibleVariableOverride]
        """``{role: [paths]}`` of the inputs written as files: written now, if not yet."""
        given: dict[str, Any] = self.__dict__["_given"]
        if "materialized_paths" in given:
            return given["materialized_paths"]
        materialize: Callable[[], Mapping[str, list[Path]]] | None = self.__dict__["_materialize"]
        if materialize is None:
            raise AttributeError("materialized_paths: neither given nor to be written")
        return materialize()


class OnDemandExecuteInput(_OnDemand, ExecuteInput):
    """An :class:`ExecuteInput` whose ``execute_dir`` and ``log_path`` place the sandbox."""

    _plain_class = ExecuteInput
    _path_fields = ("execute_dir", "log_path")

    def __init__(
        self, *, sandbox: UnitSandbox | None = None, prepared: Mapping[str, Any], **paths: Any
    ) -> None:
        """Hold ``sandbox`` and what ``preprocess`` prepared."""
        self._hold(sandbox, {"prepared": prepared, **paths})

    @property
    def execute_dir(self) -> Path:  # pyright: ignore[reportIncompatibleVariableOverride]
        """The ``execute/`` directory: write outputs here."""
        return self._path("execute_dir", "execute")

    @property
    def log_path(self) -> Path:  # pyright: ignore[reportIncompatibleVariableOverride]
        """``tool_output.log``: send a tool's stdout and stderr here."""
        return self._path("log_path", "log_path")


class OnDemandPostprocessInput(_OnDemand, PostprocessInput):
    """A :class:`PostprocessInput` whose ``execute_dir`` places the sandbox."""

    _plain_class = PostprocessInput
    _path_fields = ("execute_dir",)

    def __init__(self, *, sandbox: UnitSandbox | None = None, **fields: Any) -> None:
        """Hold ``sandbox``; ``files`` are those ``execute`` left (none if never placed)."""
        if sandbox is not None and "files" not in fields:
            fields["files"] = sandbox.files()
        self._hold(sandbox, fields)

    @property
    def execute_dir(self) -> Path:  # pyright: ignore[reportIncompatibleVariableOverride]
        """The ``execute/`` directory."""
        return self._path("execute_dir", "execute")
