"""Finding runs for the commands: live states and history, and a run named by a part of its id.

History (the steps event log) is read from the store the root's contents say holds it
(:func:`~stemma.core.store.history_source.history_kind`: ``core.sqlite`` until it is imported into
the Delta tables, then those), never imported or written. Without one the commands still see live
runs through their state files.
"""

from __future__ import annotations

import difflib
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from stemma.core.errors import DamagedStoreError
from stemma.core.execution_records import StepEvent
from stemma.core.exit_codes import CliError, ExitCode
from stemma.core.live import list_states, run_dir
from stemma.core.live.state import STATE_FILE
from stemma.core.run_ids import check_run_id
from stemma.core.runs.run_rows import RunRow, merge_runs, run_name
from stemma.core.store.history_source import open_history_store


def history_events(root: Path, run_id: str | None = None) -> list[StepEvent]:
    """The steps event log of ``run_id`` (every run when omitted); empty without history."""
    store = open_history_store(root)
    return store.step_events(run_id) if store is not None else []


def all_runs(root: Path) -> list[RunRow]:
    """Every run on ``root``, newest first; only those with a state file if history is damaged.

    A damaged history is said on stderr in one line (the table and ``stemma check``).
    """
    try:
        events = history_events(root)
    except DamagedStoreError as err:
        _warn_damaged(err, "Runs with a state file are still listed.")
        events = []
    return merge_runs(list_states(root), events)


def resolve_run_id(root: Path, given: str) -> str:
    """The run id ``given`` names: itself, a pipeline's newest run, or the one id it starts or ends.

    The end of an id is what the dashboard shows as a run's short id (``f31d428e``,
    :attr:`~stemma.core.runs.run_rows.RunRow.short_id`), so every command takes a run as it is
    shown.

    Raises:
        CliError: no run matches (NOT_FOUND), or several do (USAGE), listing them; ``given``
            cannot be (a part of) a run id: a path, a line break (USAGE).
    """
    try:
        check_run_id(given)
    except ValueError as err:  # never a path: nothing outside runs/ is looked at
        raise CliError(str(err), ExitCode.USAGE) from None
    if (run_dir(root, given) / STATE_FILE).is_file():
        return given
    live = _live_ids(root)
    try:
        events = history_events(root)
    except DamagedStoreError as err:
        _warn_damaged(err, "Runs with a state file are still found.")
        events = []
    known = live | {event.pipeline_run_id for event in events}
    if given in known:
        return given
    named = sorted(run_id for run_id in known if run_name(run_id) == given)
    if named:
        # A pipeline's name: its newest run, by when it started (rows come newest first). The
        # greatest id only where no row says: an id holds the second its run started, and two
        # runs started within one second sort by chance.
        rows = merge_runs(list_states(root), events)
        newest = (row.run_id for row in rows if run_name(row.run_id) == given)
        return next(newest, named[-1])
    matches = sorted(
        run_id for run_id in known if run_id.startswith(given) or run_id.endswith(given)
    )
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise CliError(
            f"no run {given!r} under {root}{_close_ones(given, known)}; "
            f"`stemma runs --root {root}` lists the runs",
            ExitCode.NOT_FOUND,
        )
    shown = ", ".join(matches[:5]) + (" …" if len(matches) > 5 else "")
    raise CliError(
        f"{given!r} names {len(matches)} runs ({shown}); give more of the id", ExitCode.USAGE
    )


def _close_ones(given: str, known: set[str]) -> str:
    """``" (did you mean a, b?)"``: the ids, or pipeline names, that look like a mistyped one."""
    names = {run_name(run_id) for run_id in known}
    close = difflib.get_close_matches(given, sorted(known | names), n=3, cutoff=0.6)
    return f" (did you mean {', '.join(close)}?)" if close else ""


def root_argument(value: str | os.PathLike[str] | None) -> Path:
    """The root a command works on (see :func:`~stemma.core.store.locations.resolve_root`)."""
    from stemma.core.store.locations import resolve_root

    return resolve_root(value)


def _live_ids(root: Path) -> set[str]:
    runs = root / "runs"
    if not runs.is_dir():
        return set()
    return {path.parent.name for path in runs.glob(f"*/{STATE_FILE}")}


def newest_first(rows: Sequence[RunRow], limit: int | None) -> list[RunRow]:
    """The first ``limit`` rows (all when None)."""
    return list(rows) if limit is None else list(rows)[:limit]


def _warn_damaged(error: Exception, still_shown: str) -> None:
    """Say on stderr, in one line, that a table is damaged and what is still shown.

    For a command that goes on with what it can read: the error's message already names the
    table and ``stemma check``.
    """
    print(f"stemma: {error}. {still_shown}", file=sys.stderr)
