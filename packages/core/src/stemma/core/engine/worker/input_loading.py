"""What a worker loads for a unit's inputs, as each role's ``InputSpec`` asks.

* ``hydrate=False``: ids and metadata only; nothing is materialized and curator frames carry no
  values. When no role of a unit hydrates, the content is not even read
  (``load_artifacts(..., content=False)``); otherwise it is read and dropped for these roles.
* ``with_associated=(types…)``: for every input artifact, the artifacts of those types found by
  walking lineage forward from it (a dataset's metrics, say), loaded with their content and
  handed over beside the inputs: ``PreprocessInput.associated`` for creators, an
  ``associated_{type}`` column of id lists in a curator's frame.

Units usually come with their inputs' rows, read by the orchestrator for many units at once
(``ExecutionUnit.input_rows``), with their content when they hydrate a role and their inputs
are small: then the store is not asked at all. Otherwise a worker's pack loads its units'
inputs in windows (:func:`load_pack`): one store call for the inputs of many consecutive units
instead of one per unit (each call is a scan of the artifact index and of each type's table,
whatever the number of ids). A window grows while the content it reads stays small, so a pack
of large artifacts still holds about one unit's inputs at a time; a pack whose units read no
content is read in one window (up to ``MAX_WINDOW`` units).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from typing import cast

from stemma.core.engine.worker.units import ExecutionUnit
from stemma.core.operations.drafts import FinalizedArtifact
from stemma.core.operations.specs import UNDECLARED_INPUT, InputSpec
from stemma.core.store.protocols import RunStore, WorkerStore

FILE_REF_TYPE = "file_ref"
"""The one type whose rows have a size but no content (the bytes stay in the file)."""
Associated = dict[str, dict[str, dict[str, list[FinalizedArtifact]]]]
"""``{role: {input artifact id: {type: [associated artifacts]}}}``."""
Inputs = dict[str, list[FinalizedArtifact]]
"""``{role: [artifacts]}``, hydrated or not as each role asks."""

WINDOW_BYTES = 64 * 2**20
"""About how much input content one window of a pack may read at once."""
FIRST_WINDOW = 8
"""Units in a pack's first window, before the content size per unit is known."""
MAX_WINDOW = 512
"""Units in a window at most (bounds the ids of one scan's predicate)."""


def load_inputs(
    unit: ExecutionUnit,
    store: WorkerStore,
    loaded: Mapping[str, FinalizedArtifact] | None = None,
) -> tuple[Inputs, Associated]:
    """The unit's inputs by role (hydrated or not, per role) and their associated artifacts.

    Args:
        unit: the unit.
        store: where the inputs (and associated artifacts) are read from.
        loaded: the unit's input artifacts already read (by :func:`load_pack`); read from
            ``store`` when None.

    Raises:
        LookupError: input artifacts missing from the store (the message lists some).
    """
    if not unit.operation.loads_inputs:
        return {}, {}
    roles = unit.inputs()
    specs = type(unit.operation).inputs
    wanted = {artifact_id for ids in roles.values() for artifact_id in ids}
    if loaded is None and unit.input_rows is not None:
        # read by the orchestrator (``engine/dispatch/input_rows.py``): large contents are not
        loaded = with_contents([unit], unit.input_rows, store)
    if loaded is None:
        loaded = store.load_artifacts(wanted, content=hydrates(unit)) if wanted else {}
    if missing := sorted(i for i in wanted if i not in loaded):  # (not a set of a whole window)
        shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if missing[10:] else "")
        raise LookupError(f"{len(missing)} input artifacts are not in the store: {shown}")
    inputs: Inputs = {}
    for role, ids in roles.items():
        spec = specs.get(role, UNDECLARED_INPUT)
        artifacts = [loaded[i] for i in ids]
        inputs[role] = artifacts if spec.hydrate else [_dry(a) for a in artifacts]
    return inputs, _associated(roles, specs, store)


def load_pack(
    units: Sequence[ExecutionUnit], store: WorkerStore
) -> Iterator[tuple[ExecutionUnit, tuple[Inputs, Associated] | Exception]]:
    """Each unit of a pack with its loaded inputs, or the error loading them, in pack order.

    The inputs of consecutive units are read together, one ``load_artifacts`` call per window
    (see the module docstring); a window whose read fails is read again unit by unit, so each
    unit gets its own error, exactly as when it is loaded alone.
    """
    # Without content, a window's read costs about the same for 1 unit as for MAX_WINDOW.
    start = 0
    size = _first_window(units) if any(hydrates(unit) for unit in units) else MAX_WINDOW
    while start < len(units):
        window = units[start : start + size]
        start += len(window)
        loaded = _read_window(window, store)
        for unit in window:
            try:
                yield unit, load_inputs(unit, store, loaded)
            except Exception as err:
                yield unit, err
        if loaded is not None:
            size = _next_window(loaded, len(window))


def _read_window(
    window: Sequence[ExecutionUnit], store: WorkerStore
) -> dict[str, FinalizedArtifact] | None:
    """The inputs of a window's units; None if the read failed (then read per unit).

    The store is asked only for the units that came without their inputs (``input_rows``),
    with content only if one of them hydrates a role (the others' roles drop it again).
    """
    shipped = {i: row for unit in window for i, row in (unit.input_rows or {}).items()}
    unread = [u for u in window if u.input_rows is None and u.operation.loads_inputs]
    if not unread:  # the orchestrator read them all (all but large contents)
        try:
            return with_contents(window, shipped, store)
        except Exception:
            return None
    if len(window) == 1:
        return None
    wanted = {i for unit in unread for ids in unit.inputs().values() for i in ids}
    if not wanted:
        return shipped
    try:
        found = store.load_artifacts(wanted, content=any(hydrates(u) for u in unread))
    except Exception:
        return None
    return {**shipped, **{i: found[i] for i in wanted if i in found}}


def with_contents(
    units: Sequence[ExecutionUnit], rows: Mapping[str, FinalizedArtifact], store: WorkerStore
) -> dict[str, FinalizedArtifact]:
    """``rows`` (shipped by the orchestrator), with the contents ``units`` hydrate, in one read.

    The orchestrator ships every input's row, but the content only of small ones: a row with no
    content though it has bytes (a file reference has none to read) is read here. A store that
    keeps large contents as files reads just those (``load_contents``, stemma-storage's), with
    no table read; any other store reads the artifacts again, with content.
    """
    unread = sorted(
        {
            i
            for unit in units
            for i in _hydrated_ids(unit)
            if (row := rows.get(i)) is not None
            and row.content is None
            and row.size
            and row.artifact_type != FILE_REF_TYPE
        }
    )
    if not unread:
        return dict(rows)
    found = read_contents(store, {i: rows[i] for i in unread})
    return {**rows, **{i: found[i] for i in unread if i in found}}


def read_contents(
    store: WorkerStore | RunStore, rows: Mapping[str, FinalizedArtifact]
) -> dict[str, FinalizedArtifact]:
    """``rows`` (read without content) with their contents, by the cheapest read ``store`` has.

    stemma-storage's stores read the contents alone (``load_contents``: a large one from its
    file, the others from their tables' content columns); any other store reads the artifacts
    again, with content.
    """
    reader = getattr(store, "load_contents", None)
    if reader is not None:
        return cast("dict[str, FinalizedArtifact]", reader(rows))
    return store.load_artifacts(list(rows))


def _hydrated_ids(unit: ExecutionUnit) -> set[str]:
    """The input ids of ``unit``'s roles that load content."""
    if not unit.operation.loads_inputs:
        return set()
    specs = type(unit.operation).inputs
    return {
        i
        for role, ids in unit.inputs().items()
        if specs.get(role, UNDECLARED_INPUT).hydrate
        for i in ids
    }


def _first_window(units: Sequence[ExecutionUnit]) -> int:
    """Units in a hydrating pack's first window: fewer than :data:`FIRST_WINDOW` for large inputs.

    The rows the orchestrator sent say the contents' sizes, so a window holds about
    :data:`WINDOW_BYTES` from the start (eight 100 MB inputs were read at once before).
    """
    sized = [u for u in units[:FIRST_WINDOW] if u.input_rows is not None]
    if not sized:
        return FIRST_WINDOW
    rows = [(u.input_rows or {}, _hydrated_ids(u)) for u in sized]
    per_unit = sum(rows_of[i].size for rows_of, ids in rows for i in ids if i in rows_of)
    per_unit /= len(sized)
    return max(1, min(FIRST_WINDOW, int(WINDOW_BYTES // max(per_unit, 1.0))))


def _next_window(loaded: Mapping[str, FinalizedArtifact], units: int) -> int:
    per_unit = sum(len(a.content or b"") for a in loaded.values()) / max(units, 1)
    return max(1, min(MAX_WINDOW, int(WINDOW_BYTES // max(per_unit, 1.0))))


def hydrates(unit: ExecutionUnit, roles: Mapping[str, tuple[str, ...]] | None = None) -> bool:
    """Whether any role of ``unit`` with inputs loads their content (``InputSpec.hydrate``).

    ``roles`` is ``unit.inputs()`` when the caller has it already.
    """
    if not unit.operation.loads_inputs:
        return False
    specs = type(unit.operation).inputs
    roles = unit.inputs() if roles is None else roles
    return any(specs.get(role, UNDECLARED_INPUT).hydrate for role, ids in roles.items() if ids)


def _dry(artifact: FinalizedArtifact) -> FinalizedArtifact:
    return dataclasses.replace(artifact, content=None) if artifact.content is not None else artifact


def _associated(
    roles: Mapping[str, tuple[str, ...]], specs: Mapping[str, InputSpec], store: WorkerStore
) -> Associated:
    found: Associated = {}
    for role, ids in roles.items():
        spec = specs.get(role, UNDECLARED_INPUT)
        if not spec.with_associated or not ids:
            continue
        per_input: dict[str, dict[str, list[str]]] = {i: {} for i in ids}
        for artifact_type in spec.with_associated:
            for source, targets in store.descendants(ids, artifact_type=artifact_type).items():
                per_input[source][artifact_type] = sorted(targets)
        every = {t for types in per_input.values() for ts in types.values() for t in ts}
        content = store.load_artifacts(every) if every else {}
        found[role] = {
            source: {kind: [content[t] for t in ts if t in content] for kind, ts in types.items()}
            for source, types in per_input.items()
        }
    return found
