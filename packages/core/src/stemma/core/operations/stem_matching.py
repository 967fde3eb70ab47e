"""Lineage by filename stem: which input each output of an execution was made from.

An output's stem (its name with every extension stripped) is matched against the stems of the
candidate inputs. The full stem is tried first, then ever shorter prefixes of it, and the first
prefix that equals some candidate's stem decides: one candidate is the source, several are an
ambiguity. Only the output's stem is ever truncated, and never right before a digit, so
``design_1_relaxed`` finds ``design_1`` (not ``design_10``) and ``design_10`` never finds
``design_1``. Matching is pure: no I/O, one dictionary lookup per prefix.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from stemma.core.errors import LineageError

_SHOWN_CANDIDATES = 10
_FIX = (
    "name each output so that it starts with the stem of the input it was made from "
    "(for 'design_1.pdb', e.g. 'design_1_relaxed.pdb'), or record the lineage explicitly"
)


@dataclass(frozen=True, kw_only=True, slots=True)
class NamedArtifact:
    """An artifact as stem matching sees it: its id and the file name it was made under."""

    artifact_id: str
    """The artifact's content id (32 hex characters)."""
    original_name: str
    """The file name the artifact had when it was written or read (``design_1.pdb``)."""


def filename_stem(name: str) -> str:
    """Return ``name`` without its directory and every extension (``a.tar.gz`` → ``a``).

    Leading dots belong to the stem, so a hidden file keeps its name (``.env`` → ``.env``).
    """
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    start = len(base) - len(base.lstrip("."))
    dot = base.find(".", start)
    return base if dot < 0 else base[:dot]


def stem_prefixes(stem: str) -> Iterator[str]:
    """Yield the prefixes of ``stem`` that may name a source, longest (the stem itself) first.

    A cut is never made right before a digit: dropping it would turn ``design_10`` into
    ``design_1``, another artifact's stem.
    """
    for end in range(len(stem), 0, -1):
        if end == len(stem) or not stem[end].isdigit():
            yield stem[:end]


def match_lineage(
    outputs: Sequence[NamedArtifact],
    candidates: Sequence[NamedArtifact],
    *,
    context: str | None = None,
) -> dict[str, str]:
    """Map each output to the one candidate it was made from, by filename stem.

    Args:
        outputs: the artifacts an execution produced.
        candidates: the inputs they may come from (the roles named in ``infer_lineage_from``).
        context: where this happens (``"step 3 'relax', output role 'structures'"``), put in
            front of error messages.

    Returns:
        ``{output artifact id: source artifact id}`` for every output.

    Raises:
        LineageError: an output matches no candidate, or several candidates share the stem it
            matched, or one output id (identical content under two names) matched two sources.
            The message names the first such output, the candidates and the fix; every output
            is checked before raising.
    """
    unique: list[NamedArtifact] = []
    by_stem: dict[str, list[NamedArtifact]] = {}
    seen: set[str] = set()
    for candidate in candidates:
        if candidate.artifact_id not in seen:
            seen.add(candidate.artifact_id)
            unique.append(candidate)
            by_stem.setdefault(filename_stem(candidate.original_name), []).append(candidate)
    sources: dict[str, str] = {}
    problems: list[tuple[NamedArtifact, str]] = []
    for output in outputs:
        source, problem = _match_one(output, by_stem, unique)
        if source is not None and sources.setdefault(output.artifact_id, source) != source:
            problem = _conflict(output)
        if problem is not None:
            problems.append((output, problem))
    if problems:
        output, problem = problems[0]
        more = len(problems) - 1
        tail = f" ({more} more output{'s' if more != 1 else ''} failed too)" if more else ""
        where = f"{context}: " if context else ""
        raise LineageError(
            f"{where}{problem}{tail}; fix: {_FIX}",
            output_name=output.original_name,
            candidate_names=[candidate.original_name for candidate in unique],
        )
    return sources


def infer_lineage(
    outputs: Sequence[NamedArtifact],
    candidates: Sequence[NamedArtifact],
    *,
    generated: bool = False,
    context: str | None = None,
) -> dict[str, str]:
    """Infer lineage as an ``OutputSpec.infer_lineage_from`` declaration asks.

    Args:
        outputs: the artifacts an execution produced for one output role.
        candidates: the artifacts of the declared source roles.
        generated: True for ``infer_lineage_from={"inputs": []}``: the outputs were made from
            nothing, so they have no lineage edges at all.
        context: where this happens, put in front of error messages.

    Returns:
        ``{output artifact id: source artifact id}``: empty when ``generated``; every output
        mapped to the single candidate when there is exactly one (names do not matter then);
        otherwise what :func:`match_lineage` finds.

    Raises:
        LineageError: as :func:`match_lineage`.
    """
    if generated or not outputs:
        return {}
    distinct = {candidate.artifact_id for candidate in candidates}
    if len(distinct) == 1:
        (only,) = distinct
        return {output.artifact_id: only for output in outputs}
    return match_lineage(outputs, candidates, context=context)


def _match_one(
    output: NamedArtifact,
    by_stem: dict[str, list[NamedArtifact]],
    candidates: Sequence[NamedArtifact],
) -> tuple[str | None, str | None]:
    """Return ``(source id, None)`` for a match, or ``(None, problem)`` explaining the failure."""
    stem = filename_stem(output.original_name)
    for prefix in stem_prefixes(stem):
        found = by_stem.get(prefix)
        if not found:
            continue
        if len(found) == 1:
            return found[0].artifact_id, None
        # Shorter prefixes can only reach candidates further from the output's name: stop here.
        return None, (
            f"output {output.original_name!r} is ambiguous: its stem prefix {prefix!r} is the "
            f"stem of {len(found)} candidates: {_listing(found)}"
        )
    return None, (
        f"output {output.original_name!r} (stem {stem!r}) matches none of the "
        f"{len(candidates)} candidates by stem: {_listing(candidates)}"
    )


def _conflict(output: NamedArtifact) -> str:
    return (
        f"output {output.original_name!r} has the same content (artifact id "
        f"{output.artifact_id}) as another output that matched a different source, so its "
        "lineage is ambiguous"
    )


def _listing(candidates: Sequence[NamedArtifact]) -> str:
    shown = ", ".join(repr(c.original_name) for c in candidates[:_SHOWN_CANDIDATES])
    hidden = len(candidates) - _SHOWN_CANDIDATES
    return f"{shown}, … and {hidden} more" if hidden > 0 else (shown or "(none)")
