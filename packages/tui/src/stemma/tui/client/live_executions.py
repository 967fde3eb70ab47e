"""A running step's executions before they are committed: its running units and staged bundles.

A step commits its executions when it ends, so until then history has none of them. What is
there meanwhile, for both stores:

- a running local unit's sandbox, ``working/{N}_{operation}/{ab}/{cd}/{execution_run_id}/``
  (it goes when the unit ends; units that run without a sandbox, such as a lazy step's
  functions, are counted by the live state only);
- a finished unit's staged bundle, ``staging/{N}_{name}/{ab}/{cd}/{first execution id}/``,
  whose sentinel (a Delta bundle's ``executions.parquet``, a SQLite bundle's ``sentinel.json``
  beside its ``records.json``) is written last. A bundle holds a worker's pack of units: a unit
  that ended before the rest of its pack has no sandbox and no bundle for a while, and stays
  listed as last seen running meanwhile.

Each refresh lists those folders; only bundles not seen before are read, and of a Delta bundle
only its sentinel (the executions rows), never its other tables. A unit seen staged stays
listed after the step's commit takes its bundle away, until the committed rows are read (the
caller drops those then), so the table never flashes empty between the two.

Imports polars: load this module only from a thread worker, off the paint path.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from stemma.core.store.failure_logs import failure_log_path
from stemma.core.store.sqlite.bundle_files import RECORDS, read_rows, read_sentinel
from stemma.core.store.sqlite.execution_rows import from_micros
from stemma.core.store.sqlite.schema import EXECUTION_COLUMNS
from stemma.core.store.staging.problems import StagingProblem
from stemma.core.store.staging.tree import step_dir_name
from stemma.tui.client.dir_tree import DirTree
from stemma.tui.client.views import ExecutionRow

DELTA_SENTINEL = "executions.parquet"
COLUMNS = (  # the executions columns a staged unit's row shows: a Delta sentinel's, read alone
    "execution_run_id",
    "step_run_id",
    "step_number",
    "started_at",
    "ended_at",
    "worker",
    "success",
    "error",
)


class LiveExecutions:
    """One running step's units not committed yet; :meth:`rows` catches up on each call.

    Not thread-safe: one screen's worker asks at a time.
    """

    def __init__(self, root: Path, *, number: int, name: str, operation: str) -> None:
        """Watch step ``number`` (named ``name``, running ``operation``) under ``root``."""
        self._bundles = DirTree(root / "staging" / step_dir_name(number, name), 3)
        self._sandboxes = DirTree(root / "working" / f"{number}_{operation}", 3)
        self._read: set[str] = set()
        """Bundles read (or found unreadable): never read again."""
        self.root = root
        self.number = number
        self.operation = operation
        self._finished: dict[str, tuple[str, ExecutionRow]] = {}
        """Per execution id, its step run and row."""
        self._ran: dict[str, ExecutionRow] = {}
        """Units seen running and not seen staged yet, as last seen."""
        self.bundles_read = 0
        """Bundles read so far (how a test tells an incremental read from a full one)."""

    def rows(self, *, since: dt.datetime, step_run_id: str | None) -> list[ExecutionRow]:
        """The units running now and those finished (staged), newest first.

        Args:
            since: when the step started: older sandboxes and bundles are another run's.
            step_run_id: the step run, when history knows it: staged rows of another are
                left out (a bundle an earlier run left behind).
        """
        new = [Path(b) for b in self._bundles.leaves() if b not in self._read]
        new = [b for b in new if _complete(b)]
        self._read.update(str(b) for b in new)
        for row in _read_bundles(new):
            # (a pack of function steps' units is staged under its first unit's step)
            if row["step_number"] == self.number:
                staged = _staged(row, None if row["success"] else self._failure_log(row))
                self._finished[row["execution_run_id"]] = (row["step_run_id"], staged)
        self.bundles_read += len(new)
        cutoff = since.timestamp() - 1.0  # clocks of a shared filesystem's nodes drift a little
        if step_run_id is not None:
            finished = [e for run, e in self._finished.values() if run == step_run_id]
        else:  # no step run to tell this run's bundles by: their start
            finished = [e for _, e in self._finished.values() if e.started_unix >= cutoff]
        sandboxes = self._sandboxes.leaves()
        running = {
            r.execution_run_id: r
            for r in _running(sandboxes, cutoff)
            if r.execution_run_id not in self._finished
        }
        # A unit's sandbox goes when it ends, but its bundle is staged when its worker's whole
        # pack ends: until then it stays listed as last seen, or the table would shrink.
        for gone in [unit for unit in self._ran if unit in self._finished]:
            del self._ran[gone]
        self._ran.update(running)
        ended = [row for unit, row in self._ran.items() if unit not in running]
        finished.sort(key=lambda e: e.started_at, reverse=True)
        return [*running.values(), *ended, *finished]

    def _failure_log(self, row: dict[str, Any]) -> Path | None:
        """A failed unit's failure log, written before it was staged (when it is there)."""
        execution = str(row["execution_run_id"])
        log = failure_log_path(self.root, self.number, self.operation, execution)
        return log if log.is_file() else None


def _staged(row: dict[str, Any], failure_log: Path | None) -> ExecutionRow:
    started, ended = row["started_at"], row["ended_at"]
    return ExecutionRow(
        execution_run_id=str(row["execution_run_id"]),
        success=bool(row["success"]),
        started_at=f"{started:%H:%M:%S}" if started is not None else "",  # UTC, as committed
        duration_s=(ended - started).total_seconds() if started and ended else None,
        worker=str(row["worker"] or ""),
        error=str(row["error"] or ""),
        failure_log=failure_log,
        worker_log="",
        stage="staged",
        started_unix=started.timestamp() if started is not None else 0.0,
    )


def _running(sandboxes: list[str], cutoff: float) -> Iterator[ExecutionRow]:
    now = dt.datetime.now(dt.UTC).timestamp()
    for folder in sandboxes:
        sandbox = Path(folder)
        try:  # a sandbox folder is dated by its unit's start (the log changes as it is written)
            started = os.stat(sandbox).st_mtime
        except OSError:
            continue  # ending: its sandbox is going away
        if started < cutoff:
            continue
        yield ExecutionRow(
            execution_run_id=sandbox.name,
            success=None,
            started_at=f"{dt.datetime.fromtimestamp(started, dt.UTC):%H:%M:%S}",
            duration_s=max(0.0, now - started),
            worker="",
            error="",
            failure_log=None,
            worker_log="",
            stage="running",
            started_unix=started,
        )


def _read_bundles(bundles: list[Path]) -> list[dict[str, Any]]:
    """The executions rows of complete bundles; none of one that went or cannot be read."""
    delta = [b / DELTA_SENTINEL for b in bundles if (b / DELTA_SENTINEL).is_file()]
    rows = _delta_rows(delta)
    for bundle in bundles:
        if not (bundle / DELTA_SENTINEL).is_file():
            rows += _sqlite_rows(bundle)
    return rows


def _delta_rows(sentinels: list[Path]) -> list[dict[str, Any]]:
    """The sentinels' rows, read together (polars reads them in parallel: ~5x faster)."""
    import polars as pl

    if not sentinels:
        return []
    try:
        # (paths, never patterns: a bundle path holding "[" is read as it is)
        frame = pl.scan_parquet(sentinels, glob=False).select(COLUMNS).collect()
    except (OSError, pl.exceptions.PolarsError):  # one was committed meanwhile: one by one
        rows: list[dict[str, Any]] = []
        for sentinel in sentinels:
            try:
                rows += pl.read_parquet(sentinel, columns=list(COLUMNS)).to_dicts()
            except (OSError, pl.exceptions.PolarsError):
                continue  # committed and removed, or damaged: the step's commit says so
        return rows
    return frame.to_dicts()


def _sqlite_rows(bundle: Path) -> list[dict[str, Any]]:
    try:
        read = read_rows(bundle, read_sentinel(bundle))
    except (OSError, ValueError):
        return []
    if isinstance(read, StagingProblem):
        return []
    rows: list[dict[str, Any]] = []
    for values in read.get("executions", []):
        row = dict(zip(EXECUTION_COLUMNS, values, strict=False))
        for column in ("started_at", "ended_at"):
            if isinstance(row[column], int):
                row[column] = from_micros(row[column])
        rows.append(row)
    return rows


def _complete(bundle: Path) -> bool:
    return (bundle / DELTA_SENTINEL).is_file() or (
        (bundle / "sentinel.json").is_file() and (bundle / RECORDS).is_file()
    )
