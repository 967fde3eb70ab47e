"""What a ``stemma`` subcommand is, and how installed packages add theirs.

A package adds subcommands by naming :class:`Command` objects under the ``stemma.commands`` entry
point group, so ``stemma tui`` exists exactly when stemma-tui is installed::

    [project.entry-points."stemma.commands"]
    tui = "stemma.tui.cli_command:COMMAND"
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass

from stemma.core import plugins
from stemma.core.exit_codes import ExitCode

COMMAND_GROUP = plugins.COMMANDS


@dataclass(frozen=True, kw_only=True)
class Command:
    """One subcommand: its name, its options, and what it does."""

    name: str
    """What follows ``stemma`` on the command line."""
    help: str
    """One line for ``stemma --help``."""
    configure: Callable[[argparse.ArgumentParser], None]
    """Adds the command's arguments to its parser."""
    run: Callable[[argparse.Namespace], int]
    """Does the work; returns an exit code (see :mod:`stemma.core.exit_codes`) or raises
    :class:`~stemma.core.exit_codes.CliError`."""
    description: str | None = None
    """Longer text for ``stemma NAME --help``; ``help`` when omitted."""


@dataclass(frozen=True, kw_only=True)
class BrokenCommand:
    """An entry point that could not be loaded: listed, and explained when used."""

    name: str
    target: str
    error: str


@functools.cache
def installed_commands(
    name: str | None = None,
) -> tuple[tuple[Command, ...], tuple[BrokenCommand, ...]]:
    """The commands other installed packages register, and those that failed to load.

    A package whose command fails to import must not take the whole ``stemma`` command down, so
    failures are collected instead of raised.

    Args:
        name: only the entry points of this name: ``stemma tui`` imports the dashboard's
            command alone, not every package's (storage's import polars and pyarrow: 0.5 s).
    """
    points = plugins.command_points(name)
    found: list[Command] = []
    broken: list[BrokenCommand] = []
    for point_name, value in points:
        try:
            loaded = plugins.load_target(value)
        except Exception as err:
            broken.append(BrokenCommand(name=point_name, target=value, error=repr(err)))
            continue
        if isinstance(loaded, Command):
            found.append(loaded)
        else:
            message = f"{type(loaded).__name__} is not a stemma.core.cli.Command"
            broken.append(BrokenCommand(name=point_name, target=value, error=message))
    return tuple(sorted(found, key=lambda c: c.name)), tuple(broken)


def broken_runner(broken: BrokenCommand) -> Callable[[argparse.Namespace], int]:
    """A ``run`` that explains why the command is unusable."""

    def run(_: argparse.Namespace) -> int:
        print(
            f"stemma {broken.name}: its package failed to load ({broken.target}: {broken.error}); "
            "reinstall the package that provides it",
            file=sys.stderr,
        )
        return ExitCode.UNAVAILABLE

    return run
