"""The drafts operations return, and the finalized artifacts the framework makes of them.

An operation never computes ids: it returns drafts, and the framework finalizes them into
:class:`FinalizedArtifact` values whose id is the xxh3_128 of the content. Everything here is
pure, except that finalizing a :class:`FileRefDraft` reads the file it points at.
"""

from __future__ import annotations

import csv
import io
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from stemma.core.canonical import to_canonical
from stemma.core.errors import ArtifactTypeError
from stemma.core.identity import content_id, digest_tree, file_ref_artifact_id
from stemma.core.operations.specs import get_artifact_type

_ID = re.compile(r"^[0-9a-f]{32}$")
_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


MAX_FILE_NAME_BYTES = 200
_UNWRITABLE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
"""The longest ``original_name``: a file name, with room for the ``_{8 hex}`` a second input
of the same name gets (filesystems stop at 255 bytes)."""


def file_name_problem(name: str) -> str | None:
    """Why ``name`` is no plain file name (a folder part, ``..``, a control character); or None.

    A line break or NUL in a file name would split or cut the lists of paths tools read.
    """
    if not isinstance(name, str) or not name or name in (".", ".."):  # pyright: ignore[reportUnnecessaryIsInstance]
        return "empty, '.' or '..'"
    if "/" in name or "\\" in name:
        return "it has a folder part"
    if _UNWRITABLE.search(name):
        return "it has a NUL, a line break, another control character or undecodable bytes"
    if len(name.encode("utf-8")) > MAX_FILE_NAME_BYTES:
        return f"longer than {MAX_FILE_NAME_BYTES} bytes"
    return None


@dataclass(frozen=True, kw_only=True)
class FinalizedArtifact:
    """An artifact with its id: what gets staged into the index and its content table."""

    artifact_id: str
    """xxh3_128 of the content (file refs: of the content hash with the path and size)."""
    artifact_type: str
    """The type key."""
    content: bytes | None
    """The content; None for file refs, whose content stays in the file."""
    original_name: str
    """The file name the operation gave it; stem matching reads its stem."""
    extension: str
    """The last suffix of ``original_name`` (``".csv"``), or the type's default."""
    size: int
    """Bytes of content (file refs: of the file or tree)."""
    fields: Mapping[str, Any]
    """The type's own columns (``columns``, ``row_count`` for data)."""
    metadata: Mapping[str, Any]
    """Free-form JSON metadata, canonicalized."""
    origin_step: int | None
    """The step number that produced it, when the draft said."""


@dataclass(frozen=True, kw_only=True)
class ArtifactDraft(ABC):
    """An artifact an operation made, not yet given an id."""

    original_name: str
    """A file name (no directory part); its stem is what lineage matching compares."""
    metadata: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """Free-form JSON metadata."""
    step_number: int | None = None
    """The producing step's number, when known."""

    default_extension: str = field(default="", init=False, repr=False)

    def __post_init__(self) -> None:
        problem = file_name_problem(self.original_name)
        if problem is not None:
            raise ArtifactTypeError(
                f"original_name must be a plain file name, got {self.original_name!r} "
                f"({problem}); it names the file the artifact is written to as an input"
            )

    @property
    @abstractmethod
    def artifact_type(self) -> str:
        """The type key of the artifact this draft becomes."""

    @abstractmethod
    def finalize(self) -> FinalizedArtifact:
        """Compute the id and type-specific fields; pure except for file refs."""

    def _finalized(
        self, *, artifact_id: str, content: bytes | None, size: int, fields: Mapping[str, Any]
    ) -> FinalizedArtifact:
        where = f"{self.artifact_type} artifact {self.original_name!r}"
        return FinalizedArtifact(
            artifact_id=artifact_id,
            artifact_type=self.artifact_type,
            content=content,
            original_name=self.original_name,
            extension=PurePosixPath(self.original_name).suffix or self.default_extension,
            size=size,
            fields=fields,
            metadata=to_canonical(dict(self.metadata), f"{where}.metadata"),
            origin_step=self.step_number,
        )


def _json_bytes(content: Mapping[str, Any], where: str) -> bytes:
    try:
        return _JSON.encode(content).encode()
    except (TypeError, ValueError) as err:
        raise ArtifactTypeError(f"{where}: content is not plain JSON data ({err})") from err


@dataclass(frozen=True, kw_only=True)
class DataDraft(ArtifactDraft):
    """A CSV table; its columns and row count are recorded."""

    content: bytes
    """The CSV bytes (UTF-8)."""
    default_extension: str = field(default=".csv", init=False, repr=False)

    @classmethod
    def draft(cls, content: bytes, original_name: str, **kwargs: Any) -> DataDraft:
        """Draft a data artifact (``metadata=``, ``step_number=`` may follow)."""
        return cls(content=content, original_name=original_name, **kwargs)

    @property
    def artifact_type(self) -> str:  # noqa: D102
        return "data"

    def finalize(self) -> FinalizedArtifact:  # noqa: D102
        try:
            rows = csv.reader(io.StringIO(self.content.decode("utf-8-sig"), newline=""))
            columns: list[str] = next(rows, [])  # pyright: ignore[reportUnknownArgumentType]
            row_count = sum(1 for row in rows if row)
        except (UnicodeDecodeError, csv.Error) as err:
            raise ArtifactTypeError(f"data artifact {self.original_name!r}: {err}") from err
        fields = {"columns": columns, "row_count": row_count}
        return self._finalized(
            artifact_id=content_id(self.content),
            content=self.content,
            size=len(self.content),
            fields=fields,
        )


@dataclass(frozen=True, kw_only=True)
class MetricDraft(ArtifactDraft):
    """A dict of metric values, stored as sorted-key compact JSON."""

    content: Mapping[str, Any]
    """The metric values (plain JSON data)."""
    default_extension: str = field(default=".json", init=False, repr=False)

    @classmethod
    def draft(cls, content: Mapping[str, Any], original_name: str, **kwargs: Any) -> MetricDraft:
        """Draft a metric artifact (``metadata=``, ``step_number=`` may follow)."""
        return cls(content=content, original_name=original_name, **kwargs)

    @property
    def artifact_type(self) -> str:  # noqa: D102
        return "metric"

    def finalize(self) -> FinalizedArtifact:  # noqa: D102
        data = _json_bytes(self.content, f"metric artifact {self.original_name!r}")
        return self._finalized(
            artifact_id=content_id(data), content=data, size=len(data), fields={}
        )


@dataclass(frozen=True, kw_only=True)
class ConfigDraft(ArtifactDraft):
    """A JSON config that may refer to other artifacts as ``{"$artifact": id}``.

    References are resolved to paths when the config is materialized, after everything else.
    """

    content: Mapping[str, Any]
    """The config (plain JSON data)."""
    default_extension: str = field(default=".json", init=False, repr=False)

    @classmethod
    def draft(cls, content: Mapping[str, Any], original_name: str, **kwargs: Any) -> ConfigDraft:
        """Draft a config artifact; malformed ``$artifact`` references are refused here."""
        made = cls(content=content, original_name=original_name, **kwargs)
        made.references()
        return made

    @property
    def artifact_type(self) -> str:  # noqa: D102
        return "config"

    def references(self) -> tuple[str, ...]:
        """The artifact ids referenced, in first-seen order, without duplicates.

        Raises:
            ArtifactTypeError: a ``$artifact`` value is not a 32-hex-character id.
        """
        found: dict[str, None] = {}
        stack: list[tuple[str, Any]] = [("content", self.content)]
        while stack:
            path, value = stack.pop()
            if isinstance(value, Mapping):
                items: Mapping[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
                if "$artifact" in items:
                    ref = items["$artifact"]
                    if len(items) != 1 or not isinstance(ref, str) or not _ID.match(ref):
                        raise ArtifactTypeError(
                            f"config artifact {self.original_name!r}: {path} must be exactly "
                            f'{{"$artifact": "<32 hex id>"}}, got {value!r}'
                        )
                    found[ref] = None
                stack.extend((f"{path}[{k!r}]", v) for k, v in reversed(list(items.items())))
            elif isinstance(value, list | tuple):
                seq: list[Any] = list(value)  # pyright: ignore[reportUnknownArgumentType]
                stack.extend((f"{path}[{i}]", v) for i, v in reversed(list(enumerate(seq))))
        return tuple(found)

    def finalize(self) -> FinalizedArtifact:  # noqa: D102
        data = _json_bytes(self.content, f"config artifact {self.original_name!r}")
        return self._finalized(
            artifact_id=content_id(data),
            content=data,
            size=len(data),
            fields={"references": list(self.references())},
        )


@dataclass(frozen=True, kw_only=True)
class FileRefDraft(ArtifactDraft):
    """A file or directory left where it is, identified by its content, path and size."""

    path: Path
    """The file or directory."""
    relative_to: Path | None = None
    """Record ``path`` relative to this root (absolute when None)."""

    @classmethod
    def draft(cls, path: Path, original_name: str | None = None, **kwargs: Any) -> FileRefDraft:
        """Draft a file ref; ``original_name`` defaults to the file's name."""
        return cls(path=path, original_name=original_name or path.name, **kwargs)

    @property
    def artifact_type(self) -> str:  # noqa: D102
        return "file_ref"

    def finalize(self) -> FinalizedArtifact:
        """Digest the file or tree (the one read this module does) and derive the id."""
        digest = digest_tree(self.path)
        if self.relative_to is None:
            recorded = self.path.absolute().as_posix()
        else:
            recorded = self.path.relative_to(self.relative_to).as_posix()
        return self._finalized(
            artifact_id=file_ref_artifact_id(digest, recorded),
            content=None,
            size=digest.size,
            fields={"path": recorded, "content_hash": digest.content_hash},
        )


@dataclass(frozen=True, kw_only=True)
class CustomDraft(ArtifactDraft):
    """An artifact of a user-registered type: content bytes plus the type's own fields."""

    type_key: str
    """The registered type key."""
    content: bytes
    """The content; its hash is the id."""
    fields: Mapping[str, Any]
    """One value per name in the type's ``schema_fields``."""

    @classmethod
    def draft(
        cls,
        artifact_type: str,
        content: bytes,
        original_name: str,
        fields: Mapping[str, Any],
        **kwargs: Any,
    ) -> CustomDraft:
        """Draft an artifact of a registered user type, checking ``fields`` against its schema.

        Raises:
            ArtifactTypeError: the type is unknown or built in, or fields are missing or extra.
        """
        kind = get_artifact_type(artifact_type)
        if kind.builtin:
            raise ArtifactTypeError(f"{artifact_type!r} is built in; use its own draft class")
        expected, given = set(kind.schema_fields), set(fields)
        if expected != given:
            raise ArtifactTypeError(
                f"{artifact_type} artifact {original_name!r}: fields must be exactly "
                f"{sorted(expected)}; missing {sorted(expected - given)}, "
                f"unknown {sorted(given - expected)}"
            )
        return cls(
            type_key=artifact_type,
            content=content,
            original_name=original_name,
            fields=fields,
            **kwargs,
        )

    @property
    def artifact_type(self) -> str:  # noqa: D102
        return self.type_key

    def finalize(self) -> FinalizedArtifact:  # noqa: D102
        where = f"{self.type_key} artifact {self.original_name!r}"
        return self._finalized(
            artifact_id=content_id(self.content),
            content=self.content,
            size=len(self.content),
            fields=to_canonical(dict(self.fields), f"{where}.fields"),
        )
