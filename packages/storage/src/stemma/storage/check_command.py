"""``stemma check [ROOT] [--repair]``: what is wrong with a root, which file, and the fix.

Registered under the ``stemma.commands`` entry point group with the other stemma-storage
commands. The exit code is for scripts: 0 nothing found, 1 problems that need you (each printed
with its fix), 8 every problem found was repaired (:class:`~stemma.core.cli.ExitCode`).
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from stemma.core.cli import CliError, Command, ExitCode, existing_root
from stemma.storage.check_findings import CheckReport, Finding, relative
from stemma.storage.root_check import check_root

_INDENT = " " * 11


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "root_dir",
        nargs="?",
        metavar="ROOT",
        help="the stemma root (default: --root, else as usual)",
    )
    parser.add_argument(
        "--repair",
        action="store_true",
        help="make the safe repairs (each is said), and say what needs you",
    )


def _check(args: argparse.Namespace) -> int:
    root = existing_root(args.root_dir if args.root_dir is not None else args.root)
    if not root.is_dir():
        raise CliError(f"no stemma root at {root}; give ROOT or --root", ExitCode.NOT_FOUND)
    report = check_root(root, repair=args.repair)
    print_report(report, repair=args.repair)
    return exit_code(report)


def exit_code(report: CheckReport) -> ExitCode:
    """0 nothing found, 1 something still needs the user, 8 everything found was repaired."""
    if report.clean:
        return ExitCode.OK
    return ExitCode.RUN_FAILED if report.needs_you else ExitCode.REPAIRED


def print_report(report: CheckReport, *, repair: bool, stream: TextIO | None = None) -> None:
    """Each problem as its path, what is wrong, and the fix or what was done; then a summary."""
    out = stream if stream is not None else sys.stdout
    for finding in report.findings:
        print(_finding(finding, report, repair=repair), file=out)
    for note in report.notes:
        print(f"note       {note}", file=out)
    print(_summary(report, repair=repair), file=out)


def _finding(finding: Finding, report: CheckReport, *, repair: bool) -> str:
    problem = finding.problem
    label = "repaired" if finding.repaired else problem.severity.value
    lines = [f"{label:<10} {relative(problem.path, report.root)}", f"{_INDENT}{problem.what}"]
    if finding.done is not None:
        lines.append(f"{_INDENT}done: {finding.done}")
    else:
        if finding.failed is not None:
            lines.append(f"{_INDENT}the repair failed: {finding.failed}")
        elif repair:
            lines.append(f"{_INDENT}not repaired: no repair is safe without you")
        lines.append(f"{_INDENT}fix: {problem.fix}")
    return "\n".join(lines)


def _summary(report: CheckReport, *, repair: bool) -> str:
    looked = ", ".join(report.looked_at)
    if report.clean:
        return f"{report.shown}: no problems ({looked} read)"
    parts: list[str] = []
    if report.repaired:
        parts.append(f"{len(report.repaired)} repaired")
    if report.needs_you:
        parts.append(f"{len(report.needs_you)} need you")
    repairable = sum(1 for f in report.needs_you if f.problem.repair is not None)
    hint = (
        f"; `stemma check --repair {report.shown}` repairs {repairable} of them"
        if repairable and not repair
        else ""
    )
    count = len(report.findings)
    return f"{report.shown}: {count} problem{'s' if count > 1 else ''}, {', '.join(parts)}{hint}"


COMMAND = Command(
    name="check",
    help="read every table, staging, runs and locks of a root; name each problem, its file "
    "and fix (--repair: make the safe repairs)",
    configure=_configure,
    run=_check,
)
