"""The ``stemma`` command: core's subcommands plus those installed packages register.

Exit codes are listed in :mod:`stemma.core.cli.exit_codes`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from stemma.core.cli.commands import Command, broken_runner, installed_commands
from stemma.core.cli.exit_codes import CliError, ExitCode
from stemma.core.cli.live_commands import CANCEL, RUNS, STATUS, WATCH
from stemma.core.cli.plan_commands import EXPLAIN, PLAN
from stemma.core.cli.reap_command import REAP
from stemma.core.cli.run_commands import DEMO, RUN
from stemma.core.layout import ROOT_ENV

CORE_COMMANDS: tuple[Command, ...] = (RUN, DEMO, RUNS, STATUS, WATCH, CANCEL, REAP, PLAN, EXPLAIN)

_EPILOG = (
    "exit codes: 0 ok, 1 run failed, 2 usage error, 3 not found, 4 a package is missing, "
    "5 run cancelled, 6 run stale, 130 interrupted"
)


def build_parser() -> argparse.ArgumentParser:
    """The parser with every available subcommand (core's and the installed packages')."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--root",
        default=argparse.SUPPRESS,
        help=f"the stemma root (default: ${ROOT_ENV}, else .stemma in the current directory)",
    )
    parser = argparse.ArgumentParser(
        prog="stemma",
        description="Run, watch, explore and cancel stemma pipelines.",
        epilog=_EPILOG,
        parents=[common],
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    plugins, broken = installed_commands()
    taken = {command.name for command in CORE_COMMANDS}
    for command in (*CORE_COMMANDS, *(c for c in plugins if c.name not in taken)):
        child = sub.add_parser(
            command.name,
            help=command.help,
            description=command.description or command.help,
            parents=[common],
            epilog=_EPILOG,
        )
        command.configure(child)
        child.set_defaults(handler=command.run)
    for failed in broken:
        child = sub.add_parser(failed.name, help=f"(unavailable: {failed.target} failed to load)")
        child.set_defaults(handler=broken_runner(failed))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (``sys.argv[1:]`` by default), run the subcommand, return its exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "root"):
        args.root = None
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return ExitCode.USAGE
    try:
        return int(handler(args))
    except CliError as err:
        print(f"stemma {args.command}: {err}", file=sys.stderr)
        return err.code
    except KeyboardInterrupt:
        print(f"stemma {args.command}: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        return ExitCode.OK  # `stemma runs | head`: the reader has all it wanted


if __name__ == "__main__":
    sys.exit(main())
