"""Committing a wave of staged bundles in one SQLite transaction, idempotently.

A wave is the bundles of one step (or part of one) and, optionally, the step's outputs. It is
committed in three stages, none of which a crash can turn into a lost or duplicated row:

1. **Check**, without the database's write lock: each bundle's directory, sentinel and records
   file are looked for, late ones again with backoff up to the staging timeout (a shared
   filesystem shows a remote worker's files late). A bundle still incomplete then stays in
   staging (the next ``recover()`` commits it) and a note goes to ``logs/failures/``; one with
   an unreadable sentinel is quarantined; one that is gone because another committer took it
   (it is committed, or quarantined) is simply not this wave's.
2. **Commit**, in one ``BEGIN IMMEDIATE`` transaction: the bundles already recorded in
   ``committed_bundles`` are skipped; each other bundle's records are read, checked against
   its sentinel's digest and inserted (artifacts ``OR IGNORE`` by id, so duplicates within the
   wave and against the store add nothing), and the bundle is recorded as committed; then the
   edges' unknown artifact types are filled from the artifacts table, and the step outputs are
   inserted (without the artifacts of bundles left out, if any were). A bundle whose records
   turn out damaged is left out of the transaction, and quarantined once it has committed.
   Bundles are read one at a time inside the transaction, so the committer holds one
   bundle's rows at a time, never the whole wave's.
3. **Retire** the committed bundles (and those found committed already: their committer died
   before retiring them), by one rename each out of staging, then removal.

A crash before 2 commits leaves everything staged; SQLite rolls back a transaction that did
not commit; a crash after it leaves bundles that 2 skips next time and 3 retires.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path

from stemma.core.execution_records import StepOutputs
from stemma.core.store.locations import RootLayout
from stemma.core.store.sqlite import table_writes
from stemma.core.store.sqlite.bundle_files import Sentinel, check_bundle, read_rows
from stemma.core.store.sqlite.connections import Connections
from stemma.core.store.sqlite.execution_rows import to_micros
from stemma.core.store.staging.notes import write_staging_note
from stemma.core.store.staging.problems import (
    Backoff,
    ProblemKind,
    StagingProblem,
    WaveReport,
)
from stemma.core.store.staging.removal import is_quarantined, quarantine_bundle, retire_bundles
from stemma.core.store.staging.tree import step_dir_of
from stemma.core.store.staging.worker_logs import read_worker_logs

Ready = dict[Path, tuple[str, Sentinel]]
"""Bundles found whole, with their step directory and sentinel."""


def commit_wave(
    layout: RootLayout,
    connections: Connections,
    bundles: Sequence[Path],
    step_outputs: StepOutputs | None,
    *,
    timeout: float,
    shared: bool = False,
) -> WaveReport:
    """Commit ``bundles`` (and ``step_outputs``) as one transaction; say what was left out.

    With ``shared`` (the root is on a shared filesystem) each bundle's files are opened and
    read, not listed (:mod:`stemma.core.store.staging.visibility`).

    Raises:
        StagedBundleError: a path is not a bundle under staging; nothing is committed.
        sqlite3.Error: the transaction failed (the database stayed locked past the busy
            timeout, the disk is full…); it was rolled back and every bundle stays staged.
    """
    if not bundles and step_outputs is None:
        return WaveReport(committed=0)
    wanted = {path.absolute(): "" for path in bundles}
    for path in wanted:
        wanted[path] = step_dir_of(layout, path)
    backoff = Backoff.for_timeout(timeout)
    ready, problems = _await_bundles(layout, connections, wanted, backoff, shared)
    return commit_ready(layout, connections, ready, step_outputs, problems)


def commit_ready(
    layout: RootLayout,
    connections: Connections,
    ready: Ready,
    step_outputs: StepOutputs | None,
    problems: Sequence[StagingProblem] = (),
) -> WaveReport:
    """Commit bundles already checked whole (stages 2 and 3 of the module's description).

    Args:
        layout: the store root.
        connections: the store's database connections.
        ready: the bundles to commit.
        step_outputs: the step's outputs, committed in the same transaction.
        problems: the bundles of the wave already left out (the outputs then keep only the
            artifacts the store holds).
    """
    found = list(problems)
    if not ready and step_outputs is None:
        return WaveReport(committed=0, problems=tuple(found))
    damaged: list[tuple[StagingProblem, str]] = []
    newly: list[tuple[str, str]] = []
    with connections.writing() as connection:
        done = table_writes.already_committed(connection, {path.name for path in ready})
        mark = table_writes.edge_mark(connection)
        for bundle, (step_dir, sentinel) in sorted(ready.items()):
            if bundle.name in done:
                continue
            try:
                rows = read_rows(bundle, sentinel)
            except FileNotFoundError:
                continue  # quarantined by another committer since it was checked
            if isinstance(rows, StagingProblem):
                damaged.append((rows, step_dir))
                continue
            table_writes.insert_bundle(connection, rows, read_worker_logs([bundle]))
            newly.append((bundle.name, step_dir))
        table_writes.mark_committed(connection, newly, to_micros(dt.datetime.now(dt.UTC)))
        table_writes.fill_edge_types(connection, mark)
        if step_outputs is not None:
            committed_only = bool(found or damaged)
            table_writes.insert_step_outputs(
                connection, step_outputs, committed_only=committed_only
            )
    found.extend(quarantine_bundle(layout, p.bundle, p, step_dir) for p, step_dir in damaged)
    written = done | {name for name, _ in newly}
    retire_bundles(layout, [b for b in ready if b.name in written], background=len(ready) > 1)
    return WaveReport(committed=len(newly), problems=tuple(found))


def _await_bundles(
    layout: RootLayout,
    connections: Connections,
    wanted: dict[Path, str],
    backoff: Backoff,
    shared: bool,
) -> tuple[Ready, list[StagingProblem]]:
    """Stage 1: the bundles found whole, and the problems of those left out."""
    ready: Ready = {}
    problems: list[StagingProblem] = []
    pending = dict(sorted(wanted.items()))
    latest: dict[Path, StagingProblem] = {}
    while pending:
        for bundle, step_dir in list(pending.items()):
            checked = check_bundle(bundle, shared=shared)
            if isinstance(checked, Sentinel):
                ready[bundle] = (step_dir, checked)
                del pending[bundle]
            elif checked.kind is ProblemKind.CORRUPT:
                problems.append(quarantine_bundle(layout, bundle, checked, step_dir))
                del pending[bundle]
            else:
                latest[bundle] = checked
        for bundle in _taken_elsewhere(layout, connections, pending):
            del pending[bundle]
        if pending and not backoff.wait():
            break
    for bundle, step_dir in pending.items():
        write_staging_note(layout, latest[bundle], step_dir)
        problems.append(latest[bundle])
    return ready, problems


def _taken_elsewhere(
    layout: RootLayout, connections: Connections, pending: dict[Path, str]
) -> list[Path]:
    """The pending bundles that are gone because another committer committed or quarantined."""
    gone = {bundle: step_dir for bundle, step_dir in pending.items() if not bundle.is_dir()}
    if not gone:
        return []
    reader = connections.reader()
    committed = (
        table_writes.already_committed(reader, {bundle.name for bundle in gone})
        if reader is not None
        else set[str]()
    )
    return [
        bundle
        for bundle, step_dir in gone.items()
        if bundle.name in committed or is_quarantined(layout, step_dir, bundle.name)
    ]
