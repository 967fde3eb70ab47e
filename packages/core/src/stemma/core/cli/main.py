"""The ``stemma`` command: core's subcommands plus those installed packages register.

Exit codes are listed in :mod:`stemma.core.exit_codes`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence

from stemma.core.cli.commands import BrokenCommand, Command, broken_runner, installed_commands
from stemma.core.cli.missing_packages import (
    SIBLING_COMMANDS,
    check_requirements,
    install_hint,
    missing_command,
)
from stemma.core.errors import DamagedStoreError, RootURLError
from stemma.core.exit_codes import CliError, ExitCode
from stemma.core.store.locations import ROOT_ENV

CORE_COMMANDS: dict[str, str] = {
    "run": "stemma.core.cli.run_commands:RUN",
    "demo": "stemma.core.cli.run_commands:DEMO",
    "runs": "stemma.core.cli.live_commands:RUNS",
    "status": "stemma.core.cli.live_commands:STATUS",
    "watch": "stemma.core.cli.live_commands:WATCH",
    "cancel": "stemma.core.cli.live_commands:CANCEL",
    "resume": "stemma.core.cli.resume_command:RESUME",
    "reap": "stemma.core.cli.reap_command:REAP",
    "plan": "stemma.core.cli.plan_commands:PLAN",
    "explain": "stemma.core.cli.plan_commands:EXPLAIN",
}
"""Core's subcommands, in ``--help`` order: name → ``module:attribute`` of its
:class:`Command`. Each module is imported only when its command runs or ``--help`` lists them
all: ``plan``'s alone imports the step specs and pydantic (~0.1 s), which ``stemma tui`` and
``stemma watch`` need not pay for."""

_EPILOG = (
    "exit codes: 0 ok, 1 run failed, 2 usage error, 3 not found, 4 a package is missing, "
    "5 run cancelled, 6 run stale, 7 a table is damaged (stemma check), 8 check repaired all, "
    "130 interrupted"
)


def core_command(name: str) -> Command:
    """Core's subcommand ``name`` (a key of :data:`CORE_COMMANDS`), importing its module."""
    module, _, attribute = CORE_COMMANDS[name].partition(":")
    command: object = getattr(importlib.import_module(module), attribute)
    if not isinstance(command, Command) or command.name != name:
        raise TypeError(f"{CORE_COMMANDS[name]} is not the stemma.core.cli.Command {name!r}")
    return command


def requested_command(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names, when that is certain without parsing; else None.

    Only ``--root VALUE`` may come before the name: after any other option (``-h``, an
    abbreviation argparse would accept) the full parser decides.
    """
    tokens = iter(argv)
    for token in tokens:
        if token == "--root":
            next(tokens, None)
        elif not token.startswith("--root="):
            return None if token.startswith("-") else token
    return None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser with every available subcommand (core's and the installed packages').

    Args:
        only: the subcommand about to run: the parser gets just that one, so only its module
            is imported (every package's command modules cost ~0.8 s together). Unknown names
            get the full parser, whose error lists every choice.
    """
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
    commands, broken = _available(only)
    for command in commands:
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
    offered = {c.name for c in commands} | {b.name for b in broken}
    if only not in offered:  # the full list: what is missing shows too, with what to install
        for name, package in SIBLING_COMMANDS.items():
            if name not in offered:
                child = sub.add_parser(name, help=f"(needs {package}: {install_hint(package)})")
                child.set_defaults(handler=_missing_runner(name))
    return parser


def _available(only: str | None) -> tuple[tuple[Command, ...], tuple[BrokenCommand, ...]]:
    """The commands to offer, in ``--help`` order (core's win a name clash), and the broken."""
    if only in CORE_COMMANDS:
        return (core_command(only),), ()
    if only is not None:
        plugins, broken = installed_commands(only)
        if plugins or broken:
            return plugins, broken
    plugins, broken = installed_commands()
    core = tuple(core_command(name) for name in CORE_COMMANDS)
    return (*core, *(c for c in plugins if c.name not in CORE_COMMANDS)), broken


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (``sys.argv[1:]`` by default), run the subcommand, return its exit code."""
    if argv is None:
        argv = sys.argv[1:]
    requested = requested_command(argv)
    if requested in SIBLING_COMMANDS and not any(installed_commands(requested)):
        # before parsing: the missing command's own options would be "unrecognized"
        print(f"stemma {requested}: {missing_command(requested)}", file=sys.stderr)
        return ExitCode.UNAVAILABLE
    parser = build_parser(only=requested)
    args = parser.parse_args(argv)
    if not hasattr(args, "root"):
        args.root = None
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return ExitCode.USAGE
    try:
        if args.command in CORE_COMMANDS:
            check_requirements(args.command, args)
        return int(handler(args))
    except CliError as err:
        print(f"stemma {args.command}: {err}", file=sys.stderr)
        return err.code
    except RootURLError as err:  # a root written as a URL that cannot be used here
        print(f"stemma {args.command}: {err}", file=sys.stderr)
        return ExitCode.USAGE
    except DamagedStoreError as err:  # a store's table cannot be read: its message says the fix
        print(f"stemma {args.command}: {err}", file=sys.stderr)
        return ExitCode.DAMAGED
    except KeyboardInterrupt:
        print(f"stemma {args.command}: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        return ExitCode.OK  # `stemma runs | head`: the reader has all it wanted


def _missing_runner(name: str) -> Callable[[argparse.Namespace], int]:
    def run(_: argparse.Namespace) -> int:
        raise missing_command(name)

    return run


def entry() -> None:
    """The ``stemma`` command: :func:`main`, then leave with its exit code.

    A command that met a damaged table leaves with ``os._exit`` once its output is flushed:
    after a native reader failed on garbage Parquet, the interpreter's own teardown can meet
    native threads left mid-task and abort (SIGABRT, "terminate called without an active
    exception") or segfault, turning the promised exit 7 into -6 or -11. Nothing is left to
    write by then; every commit happened under its own lock and completed or never started.
    """
    code = main()
    if code == ExitCode.DAMAGED:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    entry()
