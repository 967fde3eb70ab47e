"""A creator's input artifacts written into its sandbox as files.

Each input role gets its own folder under ``materialized_inputs/``. Data and custom artifacts are
written under their original names (with the role's ``materialize_as`` extension when set),
metrics and configs as ``.json``, and file refs are not copied: their path is the file they
refer to. Configs are written last, their ``{"$artifact": id}`` references replaced by the path
of that artifact (loaded from the store when it is not one of the inputs).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from stemma.core.operations.definition import OperationDefinition
from stemma.core.operations.drafts import FinalizedArtifact, file_name_problem
from stemma.core.operations.specs import UNDECLARED_INPUT, InputSpec

Loader = Callable[[Collection[str]], Mapping[str, FinalizedArtifact]]
"""Loads artifacts (with content) by id: ``WorkerStore.load_artifacts``."""

REFERENCED_DIR = "_referenced"
"""Folder under ``materialized_inputs/`` for artifacts only a config refers to."""
_JSON_TYPES = frozenset({"metric", "config"})


def materialize_inputs(
    op: OperationDefinition,
    inputs: Mapping[str, Sequence[FinalizedArtifact]],
    target: Path,
    *,
    root: Path,
    load: Loader,
) -> dict[str, list[Path]]:
    """Write the inputs of one execution under ``target`` and return their paths by role.

    :func:`plan_inputs`, then :meth:`MaterializePlan.write`.
    """
    plan = plan_inputs(op, inputs, target, root=root, load=load)
    plan.write()
    return plan.paths


@dataclass(eq=False)
class MaterializePlan:
    """Where each input of one execution goes as a file, checked; written by :meth:`write`.

    Planning is cheap and raises what a bad input deserves (a file ref's file gone, a config
    referring to an artifact the store lacks, content never loaded) before the operation runs;
    writing is the costly part (the sandbox in place, a file per input), and is done only when
    the operation asks for the paths (``inp.materialized_paths``) or its sandbox is kept.
    """

    inputs: Mapping[str, Sequence[FinalizedArtifact]]
    paths: dict[str, list[Path]]
    """``{role: [paths]}`` in input order; an empty list for a role with ``materialize=False``."""
    planned: dict[str, tuple[FinalizedArtifact, Path]]
    written: bool = False

    @property
    def writes(self) -> bool:
        """Whether :meth:`write` writes anything (file refs are read where they are)."""
        return any(a.artifact_type != "file_ref" for a, _ in self.planned.values())

    def write(self) -> None:
        """Write every planned file (once; configs last: they refer to the others' paths)."""
        if self.written:
            return
        written: set[Path] = set()
        for is_config in (False, True):
            for artifact, path in self.planned.values():
                if (artifact.artifact_type == "config") is is_config:
                    _write(artifact, path, self.planned, written)
        for role, artifacts in self.inputs.items():  # the same id under two roles: each copy
            for artifact, path in zip(artifacts, self.paths[role], strict=False):
                _write(artifact, path, self.planned, written)
        self.written = True


def plan_inputs(
    op: OperationDefinition,
    inputs: Mapping[str, Sequence[FinalizedArtifact]],
    target: Path,
    *,
    root: Path,
    load: Loader,
) -> MaterializePlan:
    """Plan where the inputs of one execution are written under ``target``, writing nothing.

    Args:
        op: the operation; its ``InputSpec`` per role says whether and how to materialize.
        inputs: ``{role: [artifacts with content]}``.
        target: the sandbox's ``materialized_inputs/`` folder.
        root: the store root, against which relative file-ref paths are resolved.
        load: fetches artifacts that configs refer to but that are not inputs.

    Raises:
        ValueError: an artifact has no content, a file ref's file is missing, or a config refers
            to an artifact the store does not have.
    """
    paths: dict[str, list[Path]] = {}
    planned: dict[str, tuple[FinalizedArtifact, Path]] = {}
    for role, artifacts in inputs.items():
        spec = _spec(op, role)
        paths[role] = []
        if not _as_files(spec):  # ids only: nothing to write
            continue
        taken: set[str] = set()
        for artifact in artifacts:
            path = _plan(artifact, target / role, spec.materialize_as, taken, root)
            planned.setdefault(artifact.artifact_id, (artifact, path))
            paths[role].append(path)
    _plan_references(planned, target / REFERENCED_DIR, root, load)
    for artifact, _ in planned.values():
        _check_content(artifact)
    return MaterializePlan(inputs=inputs, paths=paths, planned=planned)


def _spec(op: OperationDefinition, role: str) -> InputSpec:
    return type(op).inputs.get(role, UNDECLARED_INPUT)


def _as_files(spec: InputSpec) -> bool:
    """A role whose inputs are written as files (not ids only)."""
    return spec.materialize and spec.hydrate


def _plan(
    artifact: FinalizedArtifact, folder: Path, extension: str | None, taken: set[str], root: Path
) -> Path:
    if artifact.artifact_type == "file_ref":
        recorded = Path(str(artifact.fields.get("path", "")))
        path = recorded if recorded.is_absolute() else root / recorded
        if not recorded.parts or not path.exists():
            raise ValueError(
                f"file_ref artifact {artifact.original_name!r} ({artifact.artifact_id}) "
                f"refers to {str(path)!r}, which does not exist"
            )
        return path
    if extension is None and artifact.artifact_type in _JSON_TYPES:
        extension = ".json"
    name = artifact.original_name
    if file_name_problem(name) is not None:
        # Drafts refuse such names, but this one was read from the tables (an older stemma,
        # another writer of a shared root): the role's folder must still hold the file.
        name = artifact.artifact_id
    if extension is not None and not name.endswith(extension):
        name = name[: len(name) - len(PurePosixPath(name).suffix)] + extension
    if name in taken:  # two inputs of one role share a name: keep both
        suffix = PurePosixPath(name).suffix
        name = f"{name[: len(name) - len(suffix)]}_{artifact.artifact_id[:8]}{suffix}"
    taken.add(name)
    return folder / name


def _plan_references(
    planned: dict[str, tuple[FinalizedArtifact, Path]], folder: Path, root: Path, load: Loader
) -> None:
    taken: set[str] = set()
    while missing := {
        ref
        for artifact, _ in list(planned.values())
        if artifact.artifact_type == "config"
        for ref in _references(_config_content(artifact))
        if ref not in planned
    }:
        found = load(missing)
        if absent := sorted(missing - set(found)):
            raise ValueError(f"config inputs refer to artifacts the store does not have: {absent}")
        for ref in sorted(missing):
            planned[ref] = (found[ref], _plan(found[ref], folder, None, taken, root))


def _write(
    artifact: FinalizedArtifact,
    path: Path,
    planned: Mapping[str, tuple[FinalizedArtifact, Path]],
    written: set[Path],
) -> None:
    if artifact.artifact_type == "file_ref" or path in written:
        return
    if artifact.artifact_type == "config":
        resolved = _resolve(_config_content(artifact), planned)
        data = json.dumps(resolved, indent=2, sort_keys=True, ensure_ascii=False).encode()
    else:
        _check_content(artifact)
        assert artifact.content is not None  # (checked)
        data = artifact.content
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    written.add(path)


def _check_content(artifact: FinalizedArtifact) -> None:
    """Refuse an input to be written whose content was never loaded."""
    if artifact.artifact_type != "file_ref" and artifact.content is None:
        raise ValueError(
            f"{artifact.artifact_type} artifact {artifact.original_name!r} "
            f"({artifact.artifact_id}) was loaded without content, so it cannot be materialized"
        )


def _config_content(artifact: FinalizedArtifact) -> Any:
    if artifact.content is None:
        raise ValueError(f"config artifact {artifact.original_name!r} was loaded without content")
    return json.loads(artifact.content)


def _references(value: Any) -> list[str]:
    if isinstance(value, dict):
        items: dict[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
        if set(items) == {"$artifact"} and isinstance(items["$artifact"], str):
            return [items["$artifact"]]
        return [ref for item in items.values() for ref in _references(item)]
    if isinstance(value, list):
        seq: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
        return [ref for item in seq for ref in _references(item)]
    return []


def _resolve(value: Any, planned: Mapping[str, tuple[FinalizedArtifact, Path]]) -> Any:
    if isinstance(value, dict):
        items: dict[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
        if set(items) == {"$artifact"} and isinstance(items["$artifact"], str):
            return str(planned[items["$artifact"]][1])
        return {key: _resolve(item, planned) for key, item in items.items()}
    if isinstance(value, list):
        seq: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
        return [_resolve(item, planned) for item in seq]
    return value
