"""``stemma check``'s reading of a whole root: tables, staging, runs, job ledgers and locks.

Every problem comes with its file and its fix (:mod:`stemma.storage.check_findings`); with
``repair=True`` the safe repairs are made, tables first (so that staged work can be committed
once they read again), and each says what it did. Nothing here deletes a file: what is damaged
is moved aside.

A root in an object store is read the same way: its tables found by listing the bucket and
checked there (:mod:`stemma.storage.bucket_check`: O(tables + files) requests, nothing written
unless repairing, :mod:`stemma.storage.bucket_repairs`), and the rest (staging, runs, ledgers,
locks) in its local half on this machine, where it lives.

The job ledgers that stemma-slurm writes are read as JSON lines, without importing stemma-slurm:
a root is checked the same wherever stemma-slurm is not installed.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sqlite3
from pathlib import Path

from stemma.core.live import RunStatus, list_states
from stemma.core.live.state import STATE_FILE, RunState
from stemma.core.store.locations import RootLayout, resolve_root
from stemma.core.store.sqlite.schema import DATABASE_FILE
from stemma.core.store.staging.removal import quarantine_dir
from stemma.storage.bucket_check import check_bucket_tables
from stemma.storage.bucket_maintenance import bucket_tables
from stemma.storage.check_findings import CheckReport, Finding, Problem, Severity, relative
from stemma.storage.delta_store import DeltaStore
from stemma.storage.kept_contents import content_problems
from stemma.storage.maintenance import delta_tables
from stemma.storage.staging import WAVES, is_complete, staged_bundles
from stemma.storage.table_check import check_table

LEDGER_NAME = "slurm_jobs.jsonl"
"""stemma-slurm's job ledger in a run's directory (``stemma.slurm.job_ledger.LEDGER_NAME``)."""


def check_root(root: str | os.PathLike[str] | None = None, *, repair: bool = False) -> CheckReport:
    """Read every part of a root, name each problem with its file and fix; repair what is safe.

    On a root in an object store, the tables are read in the bucket with O(tables + files)
    requests (:mod:`stemma.storage.bucket_check` counts them), and nothing is written there
    but the safe repairs, when asked for.

    Args:
        root: the stemma root (default: ``$STEMMA_ROOT``, else ``.stemma``), or its URL.
        repair: make the safe repairs (a checkpoint written, a damaged checkpoint replaced, a
            damaged file of a table whose rows are rebuilt by rerunning moved aside, staged
            work committed) and say what each did.

    Returns:
        What was found, and what was repaired.
    """
    layout = RootLayout(resolve_root(root))
    tables, problems = _tables(layout)
    findings = [_settle(problem, repair) for problem in problems]
    if not any(f.problem.severity is Severity.DAMAGED for f in findings):  # the tables read
        findings.extend(_settle(p, repair) for p in content_problems(layout, _names(layout)))
    states = _run_states(layout)
    live = [s.run_id for s in states if isinstance(s, RunState) and s.status is RunStatus.RUNNING]
    tables_sound = all(f.repaired for f in findings if f.problem.severity is Severity.DAMAGED)
    staged = _staging(layout, live=bool(live), tables_sound=tables_sound)
    findings.extend(_settle(p, repair) for p in staged)
    findings.extend(_settle(p, repair) for p in _core_database(layout))
    findings.extend(_settle(p, repair) for p in _runs(layout, states))
    findings.extend(_settle(p, repair) for p in _ledgers(layout))
    return CheckReport(
        root=layout.root,
        findings=tuple(findings),
        looked_at=(
            _count(tables, "table"),
            "staging",
            _count(len(states), "run"),
            "job ledgers",
            "locks",
        ),
        notes=tuple(_held_locks(layout, live)),
        url=layout.store.url if layout.store is not None else None,
    )


def _tables(layout: RootLayout) -> tuple[int, list[Problem]]:
    """How many tables the root has, and their problems: on this machine, or in the bucket."""
    if layout.store is not None:
        return check_bucket_tables(layout)
    tables = delta_tables(layout)
    return len(tables), [p for name, path in tables for p in check_table(layout, name, path)]


def _names(layout: RootLayout) -> list[str]:
    """The names of the root's tables (listed in the bucket for a root in one)."""
    if layout.store is not None:
        return [place.name for place in bucket_tables(layout)]
    return [name for name, _ in delta_tables(layout)]


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _settle(problem: Problem, repair: bool) -> Finding:
    """The problem, repaired if asked and a repair is safe; a failed repair says why."""
    if not repair or problem.repair is None:
        return Finding(problem=problem)
    try:
        return Finding(problem=problem, done=problem.repair())
    except Exception as err:  # a repair that fails leaves the problem, said, for the next one
        return Finding(problem=problem, failed=f"{type(err).__name__}: {err}"[:300])


def _staging(layout: RootLayout, *, live: bool, tables_sound: bool) -> list[Problem]:
    """Finished work staged but not committed, and bundles quarantined as unreadable."""
    waves = [w for w in (layout.staging / WAVES).glob("wave-*") if w.is_dir()]
    claimed = [b for w in waves for b in (w / "bundles").glob("*/*") if b.is_dir()]
    bundles = [b for b in staged_bundles(layout) if is_complete(b)] + claimed
    problems: list[Problem] = []
    if bundles and not live:  # a live run commits its own as it goes
        count = f"{len(bundles)} bundle{'s' if len(bundles) > 1 else ''}"
        if tables_sound:
            problems.append(
                Problem(
                    severity=Severity.ATTENTION,
                    path=layout.staging,
                    what=f"holds finished work not committed yet ({count})",
                    fix=f"`stemma check --repair {layout.shown}` commits it now; so does the "
                    "next run on this root, at its start",
                    repair=lambda: _commit_staged(layout),
                )
            )
        else:
            problems.append(
                Problem(
                    severity=Severity.ATTENTION,
                    path=layout.staging,
                    what=f"holds finished work not committed yet ({count}): nothing is lost",
                    fix="repair the damaged tables above; the next run (or `stemma check "
                    f"--repair {layout.shown}`) then commits it, once",
                )
            )
    quarantined = quarantine_dir(layout)
    kept = [b for b in quarantined.glob("*/*") if b.is_dir()] if quarantined.is_dir() else []
    if kept:
        problems.append(
            Problem(
                severity=Severity.ATTENTION,
                path=quarantined,
                what=f"holds {len(kept)} staged bundles set aside as unreadable (their notes are "
                f"in {relative(layout.logs / 'failures', layout.root)})",
                fix="nothing is needed: their units run again when asked for; "
                f"`stemma vacuum --apply {layout.shown}` removes them once old",
            )
        )
    return problems


def _commit_staged(layout: RootLayout) -> str:
    committed = DeltaStore(layout.root).recover()  # what every run does at its start
    return f"committed {committed} staged bundle{'s' if committed != 1 else ''}, each once"


def _core_database(layout: RootLayout) -> list[Problem]:
    """``core.sqlite`` (a root stemma-core alone recorded) checked by SQLite, read-only."""
    database = layout.root / DATABASE_FILE
    if not database.is_file():
        return []
    try:
        with contextlib.closing(sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True)) as db:
            verdict = [str(row[0]) for row in db.execute("PRAGMA quick_check")]
    except sqlite3.DatabaseError as err:
        verdict = [str(err)]
    if verdict == ["ok"]:
        return []
    where = relative(database, layout.root)
    return [
        Problem(
            severity=Severity.DAMAGED,
            path=database,
            what=f"is not a sound SQLite database ({'; '.join(verdict[:3])})",
            fix=f"put it back from a backup of the root: `cp -a BACKUP/{where} {database}`; "
            f"without one, `sqlite3 {database} .recover` writes out what it can still read",
        )
    ]


def _run_states(layout: RootLayout) -> list[RunState | Path]:
    """Each run's state, or the path of a state file that does not read."""
    found: list[RunState | Path] = list(list_states(layout.root))
    readable = {state.run_id for state in found if isinstance(state, RunState)}
    runs = layout.runs
    for path in sorted(runs.glob(f"*/{STATE_FILE}")) if runs.is_dir() else []:
        if path.parent.name not in readable:
            found.append(path)
    return found


def _runs(layout: RootLayout, states: list[RunState | Path]) -> list[Problem]:
    problems: list[Problem] = []
    for state in states:
        if isinstance(state, Path):
            problems.append(
                Problem(
                    severity=Severity.DAMAGED,
                    path=state,
                    what="is not a readable run state: the run shows only from the tables",
                    fix=f"if the run is over, remove it (`rm {state}`): its history is in the "
                    "tables; if it is running, it rewrites the file within seconds",
                )
            )
        elif state.status is RunStatus.STALE:
            problems.append(
                Problem(
                    severity=Severity.ATTENTION,
                    path=layout.runs / state.run_id / STATE_FILE,
                    what=f"says run {state.run_id} is running, but its orchestrator is gone",
                    fix=f"`stemma reap {state.run_id} --root {layout.shown}` cancels its "
                    "scheduler jobs, commits what it staged and marks it final",
                )
            )
    return problems


def _ledgers(layout: RootLayout) -> list[Problem]:
    """Job ledgers with lines that do not read (a torn last line is a crash's, and harmless)."""
    problems: list[Problem] = []
    runs = layout.runs
    for ledger in sorted(runs.glob(f"*/{LEDGER_NAME}")) if runs.is_dir() else []:
        try:
            lines = ledger.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as err:
            bad = [f"unreadable ({err})"]
        else:
            bad = [str(n) for n, line in enumerate(lines[:-1], 1) if not _is_entry(line)]
        if bad:
            problems.append(
                Problem(
                    severity=Severity.ATTENTION,
                    path=ledger,
                    what=f"has lines that do not read ({', '.join(bad[:5])}): the jobs they "
                    "recorded are unknown to `stemma reap`",
                    fix=f"`stemma reap {ledger.parent.name} --root {layout.shown}` finds the "
                    "run's jobs by its tag as well, ledger or not",
                )
            )
    return problems


def _is_entry(line: str) -> bool:
    try:
        entry = json.loads(line)
    except ValueError:
        return False
    return isinstance(entry, dict) and "job_id" in entry


def _held_locks(layout: RootLayout, live: list[str]) -> list[str]:
    """Lock files some process holds now. ``flock`` dies with its holder: none can go stale."""
    if not layout.locks.is_dir():
        return []
    held = [relative(p, layout.root) for p in sorted(layout.locks.rglob("*.lock")) if _held(p)]
    if not held:
        return []
    who = f"live run {', '.join(live)}" if live else "a process on this root"
    return [f"{len(held)} locks are held now, by {who} ({', '.join(held[:3])}…)"]


def _held(path: Path) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing releases the lock if we got it
    return False
