"""Names and versions: path segments, and the ``dev`` convention for mutable steps."""

from __future__ import annotations

import functools
import re

from stemma.core.errors import LoweringError

MUTABLE_VERSION = "dev"
_FORBIDDEN = frozenset({"", ".", ".."})
MAX_NAME_BYTES = 200
"""The longest step name or version, in UTF-8 bytes: each names folders under the root
(``outputs/{name}/{version}-{16 hex}``, ``staging/{number}_{name}``), and a file name longer
than the filesystem's 255 bytes fails only once the step runs."""


def is_mutable(version: str) -> bool:
    """Whether ``version`` marks a step that always reruns: ``dev`` or ending in ``-dev``."""
    return version == MUTABLE_VERSION or version.endswith("-" + MUTABLE_VERSION)


def _segment_problem(segment: str) -> str | None:
    if segment in _FORBIDDEN:
        return "is empty or '.'/'..'"
    if segment != segment.strip():
        return "has leading or trailing whitespace"
    if any(ch in segment for ch in "/\\\0") or not segment.isprintable():
        return "contains '/', '\\', NUL or an unprintable character"
    return None


@functools.lru_cache(maxsize=1024)
def _version_problem(version: str) -> str | None:
    return _segment_problem(version) or _length_problem(version)


def _length_problem(text: str) -> str | None:
    size = len(text.encode("utf-8", "surrogatepass"))
    return f"is {size} bytes long (at most {MAX_NAME_BYTES})" if size > MAX_NAME_BYTES else None


# The common shape of a name, checked in one regex match; anything else gets the full check.
_PLAIN_NAME = re.compile(
    r"(?:[A-Za-z0-9_][A-Za-z0-9_.+=@,-]*)(?:/[A-Za-z0-9_][A-Za-z0-9_.+=@,-]*)*"
)


def _name_problem(name: str) -> tuple[str, str] | None:
    if _PLAIN_NAME.fullmatch(name):
        return None
    for segment in name.split("/"):
        problem = _segment_problem(segment)
        if problem is not None:
            return segment, problem
    return None


def check_version(step: str, version: str) -> None:
    """Refuse a version that is not one non-empty path segment.

    Raises:
        LoweringError: naming the step, the bad version and what a version may be.
    """
    if not isinstance(version, str):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise LoweringError(f"step {step!r}: version must be a str, got {type(version).__name__}")
    problem = _version_problem(version)
    if problem is not None:
        raise LoweringError(
            f"step {step!r}: version {version!r} {problem}; a version is one path segment "
            "such as 'v0' or '2026.07.16' ('dev' or '*-dev' for a step that always reruns)"
        )


def check_name(name: str) -> None:
    """Refuse a step name that is not one or more path segments separated by ``/``.

    Raises:
        LoweringError: naming the bad segment.
    """
    if not isinstance(name, str) or not name:  # pyright: ignore[reportUnnecessaryIsInstance]
        raise LoweringError(f"step name must be a non-empty str, got {name!r}")
    found = _name_problem(name)
    if found is not None:
        segment, problem = found
        raise LoweringError(
            f"step name {name!r}: segment {segment!r} {problem}; use names like 'example/json'"
        )
    too_long = _length_problem(name)
    if too_long is not None:
        raise LoweringError(f"step name {name[:40]!r}… {too_long}; use a shorter name")
