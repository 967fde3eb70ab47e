"""``stemma compact`` and ``stemma vacuum``: keeping a root's disk use in check.

Registered under the ``stemma.commands`` entry point group with the other stemma-storage
commands. ``vacuum`` (which also removes each table's commit log entries from before its newest
checkpoint) is a dry run unless given ``--apply``: deleting is the one thing here that cannot be
undone, so it is asked for by name.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from stemma.core.cli import CliError, Command, ExitCode, existing_root
from stemma.core.store.locations import RootLayout
from stemma.storage.maintenance import (
    DEFAULT_RETAIN_HOURS,
    MIN_RETAIN_HOURS,
    MaintenanceError,
    VacuumReport,
    compact_root,
    vacuum_root,
)
from stemma.storage.table_damage import touching_tables


def _root(args: argparse.Namespace) -> Path:
    """The positional ROOT if given, else ``--root``, else the usual default."""
    root = existing_root(args.root_dir if args.root_dir is not None else args.root)
    if not root.is_dir():
        raise CliError(f"no stemma root at {root}; give ROOT or --root", ExitCode.NOT_FOUND)
    return root


def _add_root(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "root_dir",
        nargs="?",
        metavar="ROOT",
        help="the stemma root (default: --root, else as usual)",
    )


def _compact(args: argparse.Namespace) -> int:
    root = _root(args)
    with touching_tables(RootLayout(root)):  # a damaged table: one line, `stemma check`
        done = compact_root(root)
    for table in done:
        print(f"{table.table:<28} {table.files_before:>6} files -> {table.files_after}")
    before = sum(t.files_before for t in done)
    after = sum(t.files_after for t in done)
    print(f"compacted {len(done)} tables: {before} data files -> {after}")
    if before > after:
        print("the replaced files stay until `stemma vacuum --apply` removes them")
    return ExitCode.OK


def _configure_vacuum(parser: argparse.ArgumentParser) -> None:
    _add_root(parser)
    parser.add_argument(
        "--retain-hours",
        type=int,
        default=DEFAULT_RETAIN_HOURS,
        metavar="H",
        help=f"keep everything younger than H hours (default {DEFAULT_RETAIN_HOURS}, "
        f"at least {MIN_RETAIN_HOURS})",
    )
    parser.add_argument(
        "--apply", action="store_true", help="delete (without it: list what would be deleted)"
    )
    parser.add_argument(
        "--force", action="store_true", help="vacuum even while a run is live on the root"
    )


def _vacuum(args: argparse.Namespace) -> int:
    root = _root(args)
    try:
        with touching_tables(RootLayout(root)):  # a damaged table: one line, `stemma check`
            report = vacuum_root(
                root, retain_hours=args.retain_hours, apply=args.apply, force=args.force
            )
    except MaintenanceError as err:  # a live run, or too short a retention: nothing was changed
        raise CliError(str(err), ExitCode.USAGE) from err
    _print_report(report)
    return ExitCode.OK


def _print_report(report: VacuumReport) -> None:
    verb = "removed" if report.applied else "would remove"
    for removal in report.removals:
        print(f"{verb} {removal.kind}: {removal.path} ({removal.size} bytes)")
    # one line per table, not per entry: a busy table has thousands of log entries
    per_table = Counter(entry.kind.removeprefix("log ") for entry in report.log_entries)
    for table, count in sorted(per_table.items()):
        print(f"{verb} {count} log entries of {table} (before its newest checkpoint)")
    if report.removals or not report.log_entries:
        kinds = Counter(removal.kind.split(" ")[0] for removal in report.removals)
        summary = ", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items()))
        print(
            f"{verb} {summary or 'nothing'} older than {report.retain_hours} h: "
            f"{_human(report.bytes)} ({report.bytes} bytes)"
        )
    if report.log_entries:
        tables = f"{len(per_table)} table{'' if len(per_table) == 1 else 's'}"
        print(
            f"{verb} {len(report.log_entries)} log entries of {tables} older than "
            f"{report.retain_hours} h: {_human(report.log_bytes)} ({report.log_bytes} bytes)"
        )
    if not report.applied and (report.removals or report.log_entries):
        print("dry run: nothing was deleted; add --apply to delete")


def _human(size: int) -> str:
    amount = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if amount < 1024 or unit == "GiB":
            return f"{amount:.0f} {unit}" if unit == "B" else f"{amount:.1f} {unit}"
        amount /= 1024
    return f"{size} B"


COMPACT = Command(
    name="compact",
    help="rewrite each Delta table's small files into large ones and checkpoint its log",
    configure=_add_root,
    run=_compact,
)
VACUUM = Command(
    name="vacuum",
    help="remove old files nothing references and old log entries (dry run unless --apply)",
    configure=_configure_vacuum,
    run=_vacuum,
)
