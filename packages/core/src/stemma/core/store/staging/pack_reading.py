"""Finding what a dead worker staged before it died, by content: the contract every store keeps.

A worker stages its pack as one bundle named after an attempt id it draws itself, and reports
the bundle's path when it returns. A worker killed between the two (its sentinel written, its
result not sent) leaves a complete bundle the orchestrator does not know of. Rather than record
the pack's units as crashed (and have the next start's recovery commit the bundle as well: two
execution rows per unit), the orchestrator asks for the bundles holding its units
(:func:`find_staged_pack`): each complete bundle of the step's staging directory is read for the
units it holds. The Delta store (``stemma.storage.staged_packs``) and the SQLite one
(``stemma.core.store.sqlite.staged_packs``) each supply the reading of their own bundle format.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import Protocol, runtime_checkable

from stemma.core.execution_records import ExecutionRecord
from stemma.core.store.locations import RootLayout
from stemma.core.store.staging.tree import staged_bundles

StagedUnitKey = tuple[str, str]
"""A unit of a step run as staging finds it: ``(step_run_id, execution_spec_id)``."""
ANY_STEP_RUN = ""
"""As the ``step_run_id`` of a :data:`StagedUnitKey`: the unit as staged by any run of the step.

An element a rerun adopted computes units of the dead run that sent it, and stages them under
that run's ``step_run_id``, which the rerun does not know: it looks for them by key alone."""


def wanted_as(
    wanted: Collection[StagedUnitKey], step_run_id: str, execution_spec_id: str
) -> StagedUnitKey | None:
    """The key of ``wanted`` that a staged record of this unit answers; None if none does."""
    for key in ((step_run_id, execution_spec_id), (ANY_STEP_RUN, execution_spec_id)):
        if key in wanted:
            return key
    return None


StagedRecords = Callable[[Path, Collection[StagedUnitKey]], list[ExecutionRecord]]
"""A store's reading of one bundle: its staged records of the wanted units (outputs per role, no
artifacts). Raises ``OSError`` or ``ValueError`` for a bundle it cannot read (no sentinel yet,
damaged, or committed and retired while it looked): that bundle is passed over."""


def find_staged_pack(
    layout: RootLayout,
    step_name: str,
    units: Collection[StagedUnitKey],
    *,
    in_step: Callable[[str], bool],
    read: StagedRecords,
) -> dict[StagedUnitKey, tuple[Path, ExecutionRecord]]:
    """Per unit of ``units`` found staged in a bundle of the step: the bundle and its record.

    Args:
        layout: the store root.
        step_name: the step's name: its staging directories are looked in.
        units: the pack's units.
        in_step: whether a staging directory of that name is the step's (the store's naming).
        read: the store's reading of a bundle.

    Returns:
        Per unit found, its bundle and staged record; a unit staged in several bundles gives
        its newest successful record (:func:`keep_best_staged`). A bundle that cannot be read
        is passed over: recovery deals with it (quarantine), and its units are recorded as
        crashed.
    """
    wanted = set(units)
    found: dict[StagedUnitKey, tuple[Path, ExecutionRecord]] = {}
    for bundle in staged_bundles(layout, step_name):
        if not in_step(bundle.parents[2].name):
            continue
        try:
            records = read(bundle, wanted)
        except (OSError, ValueError):
            continue
        keep_best_staged(found, bundle, records, wanted)
    return found


def keep_best_staged(
    found: dict[StagedUnitKey, tuple[Path, ExecutionRecord]],
    bundle: Path,
    records: Iterable[ExecutionRecord],
    wanted: Collection[StagedUnitKey],
) -> None:
    """Add ``bundle``'s records of ``wanted`` units to ``found``, the best one per unit.

    Each is filed under the key of ``wanted`` it answers (:func:`wanted_as`). A unit staged
    more than once (a pack sent again) is taken from its successful record, else its newest: what
    ``staged_pack`` returns in every store.
    """
    for record in records:
        key = wanted_as(wanted, record.step_run_id, record.execution_spec_id)
        if key is None:
            continue
        kept = found.get(key)
        if kept is None or _staged_rank(record) > _staged_rank(kept[1]):
            found[key] = (bundle, record)


def _staged_rank(record: ExecutionRecord) -> tuple[bool, float]:
    return record.success, record.ended_at.timestamp()


@runtime_checkable
class StagedPackReader(Protocol):
    """A store that can find what a dead worker staged before it died.

    Separate from :class:`~stemma.core.store.RunStore` so that a store without it still
    runs steps: a dead worker's units are then recorded as crashed, and its complete bundle is
    committed by the next :meth:`~stemma.core.store.Store.recover`.
    """

    def staged_pack(
        self, step_number: int, step_name: str, units: Collection[StagedUnitKey]
    ) -> dict[StagedUnitKey, tuple[Path, ExecutionRecord]]:
        """The complete bundles staged under one step's staging directory holding ``units``.

        A worker names its pack's bundle after an attempt id it draws itself, so an
        orchestrator whose worker died before reporting finds the bundle by its content: every
        complete bundle of the step directory (``{step_number}_{step_name}``) is read for the
        units it holds. Costly for a step with many uncommitted bundles: call it on a death
        only.

        Args:
            step_number: the number of the step the pack's first unit belongs to (a pack of
                function steps is staged under its first unit's step).
            step_name: that step's name.
            units: the pack's units, as ``(step_run_id, execution_spec_id)``; a
                ``step_run_id`` of :data:`ANY_STEP_RUN` matches the unit staged by any run.

        Returns:
            Per unit found, its bundle and its staged record (outputs per role, no
            artifacts); a unit in several bundles (restaged) gives its newest successful one.
        """
        ...
