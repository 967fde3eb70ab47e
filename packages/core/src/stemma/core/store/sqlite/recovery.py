"""Recovery in the SQLite store: what dead processes staged, committed a chunk at a time.

The staging protocol finds what they left (:mod:`~stemma.core.store.staging.recovery`); this
store takes every whole bundle it is handed and commits them after the scan, a chunk of bundles
per transaction (so another process's writes wait for one chunk, not for the whole backlog),
then removes the abandoned bundles (those still without a sentinel). A bundle with an
unreadable file is quarantined at once; one whose records file is not there is left alone while
young (a shared filesystem may show it late) and quarantined once older. Bundles staged by the
Delta store (they hold ``executions.parquet``) are left for it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from stemma.core.store.locations import RootLayout
from stemma.core.store.sqlite.bundle_files import RECORDS, SENTINEL, Sentinel
from stemma.core.store.sqlite.connections import Connections
from stemma.core.store.sqlite.staging import SQLITE_BUNDLES
from stemma.core.store.sqlite.wave_commit import Ready, commit_ready
from stemma.core.store.staging.problems import ProblemKind, StagingProblem
from stemma.core.store.staging.recovery import INCOMPLETE_GRACE_SECONDS, recover_bundles
from stemma.core.store.staging.removal import quarantine_bundle, retire_bundles

__all__ = ["INCOMPLETE_GRACE_SECONDS", "RECOVERY_CHUNK", "recover_staged"]

RECOVERY_CHUNK = 1000
"""Bundles committed per transaction by recovery."""


def recover_staged(
    layout: RootLayout,
    connections: Connections,
    *,
    step_name: str | None = None,
    grace_seconds: float = INCOMPLETE_GRACE_SECONDS,
    now: float | None = None,
    shared: bool = False,
) -> int:
    """Commit every complete bundle left in staging (see the module); how many this call did.

    ``connections`` are the store's; the rest is :func:`~stemma.core.store.staging.recovery.
    recover_bundles`'s.
    """
    return recover_bundles(
        layout,
        SQLITE_BUNDLES,
        _Recovery(layout, connections),
        step_name=step_name,
        grace_seconds=grace_seconds,
        now=now,
        shared=shared,
    )


class _Recovery:
    """This store's side of recovery: whole bundles gathered, committed in :meth:`finish`."""

    def __init__(self, layout: RootLayout, connections: Connections) -> None:
        self._layout = layout
        self._connections = connections
        self._ready: Ready = {}
        self._abandoned: list[Path] = []

    def commit(self, bundle: Path, step_dir: str, sentinel: Sentinel) -> int:
        self._ready[bundle] = (step_dir, sentinel)
        return 0

    def left_out(
        self, bundle: Path, step_dir: str, problem: StagingProblem, old: Callable[[], bool]
    ) -> None:
        if problem.kind is ProblemKind.CORRUPT or (problem.files == (RECORDS,) and old()):
            quarantine_bundle(self._layout, bundle, problem, step_dir)

    def abandon(self, bundle: Path) -> None:
        self._abandoned.append(bundle)

    def finish(self) -> int:
        committed = 0
        items: Sequence[tuple[Path, tuple[str, Sentinel]]] = sorted(self._ready.items())
        for start in range(0, len(items), RECOVERY_CHUNK):
            chunk = dict(items[start : start + RECOVERY_CHUNK])
            committed += commit_ready(self._layout, self._connections, chunk, None).committed
        # (a writer that finished since it was listed holds its sentinel now: keep its bundle)
        still = [bundle for bundle in self._abandoned if not (bundle / SENTINEL).exists()]
        retire_bundles(self._layout, still, background=False)
        return committed
