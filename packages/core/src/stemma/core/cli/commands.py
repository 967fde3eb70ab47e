"""What a ``stemma`` subcommand is, and how installed packages add theirs.

A package adds subcommands by naming :class:`Command` objects under the ``stemma.commands`` entry
point group, so ``stemma tui`` exists exactly when stemma-tui is installed::

    [project.entry-points."stemma.commands"]
    tui = "stemma.tui.cli_command:COMMAND"
"""

from __future__ import annotations

import argparse
import functools
import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass

from stemma.core.cli.entry_point_files import entry_point_values
from stemma.core.exit_codes import ExitCode

COMMAND_GROUP = "stemma.commands"


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
    points: list[tuple[str, str]]
    if name is not None and (values := entry_point_values(COMMAND_GROUP, name)):
        points = [(name, value) for value in values]  # without importlib.metadata: ~35 ms
    else:
        # Imported here: importlib.metadata costs ~35 ms, and importing stemma.core.cli (as
        # the dashboard does for its row types) must not pay it.
        from importlib.metadata import entry_points

        points = [(p.name, p.value) for p in entry_points(group=COMMAND_GROUP)]
    found: list[Command] = []
    broken: list[BrokenCommand] = []
    for point_name, value in points:
        if name is not None and point_name != name:
            continue
        try:
            loaded = _load(value)
        except Exception as err:
            broken.append(BrokenCommand(name=point_name, target=value, error=repr(err)))
            continue
        if isinstance(loaded, Command):
            found.append(loaded)
        else:
            message = f"{type(loaded).__name__} is not a stemma.core.cli.Command"
            broken.append(BrokenCommand(name=point_name, target=value, error=message))
    return tuple(sorted(found, key=lambda c: c.name)), tuple(broken)


def _load(value: str) -> object:
    """What an entry point's ``module:attribute [extras]`` names, as ``EntryPoint.load``."""
    module, _, attributes = value.partition("[")[0].partition(":")
    loaded: object = importlib.import_module(module.strip())
    for attribute in filter(None, attributes.strip().split(".")):
        loaded = getattr(loaded, attribute)
    return loaded


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
