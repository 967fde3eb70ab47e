"""Every entry-point group stemma reads, and the one place each is looked up.

Installed packages extend stemma-core by registering entry points; core never imports a
sibling package by name. The groups:

| group | what is registered | who reads it |
|---|---|---|
| ``stemma.stores`` | a store class, by kind (``delta``) | :func:`~stemma.core.store.open_store` |
| ``stemma.worker_stores`` | a lighter store a worker opens, by kind | ``open_worker_store`` |
| ``stemma.backends`` | a backend factory, by name (``slurm``) | ``open_backend`` |
| ``stemma.commands`` | a ``stemma`` subcommand (:class:`~stemma.core.cli.Command`) | ``stemma`` |
| ``stemma.reapers`` | a callable cancelling a dead run's cluster jobs | ``stemma reap`` |
| ``stemma.alive_jobs`` | a callable listing a dead run's jobs still held | ``stemma status`` |

Reading the installed distributions' metadata costs tens of milliseconds (``importlib.metadata``
imports ``zipfile``, ``email``, ``csv``…): it is imported only when a group is first read, each
group is read once per process, and a subcommand found by name reads the distributions'
``entry_points.txt`` files instead (:mod:`stemma.core.plugins.entry_point_files`).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

STORES = "stemma.stores"
WORKER_STORES = "stemma.worker_stores"
BACKENDS = "stemma.backends"
COMMANDS = "stemma.commands"
REAPERS = "stemma.reapers"
ALIVE_JOBS = "stemma.alive_jobs"


@functools.cache
def entry_points_of(group: str) -> tuple[EntryPoint, ...]:
    """Every entry point of ``group`` the installed distributions register, in their order.

    Read once per process per group (of two distributions of one name on ``sys.path``, the
    first wins, as in ``importlib.metadata``).
    """
    from importlib.metadata import entry_points

    return tuple(entry_points(group=group))


def registered(group: str) -> dict[str, EntryPoint]:
    """The entry points of ``group``, by name (of two of one name, the later)."""
    return {point.name: point for point in entry_points_of(group)}


def targets(group: str) -> dict[str, str]:
    """What each entry point of ``group`` names (``module:attribute``), by name."""
    return {name: point.value for name, point in registered(group).items()}


def callables(group: str) -> dict[str, Callable[..., Any]]:
    """Each entry point of ``group`` loaded, when what it names is callable, by name.

    Raises:
        Exception: whatever importing a registered module raises (a broken install).
    """
    found: dict[str, Callable[..., Any]] = {}
    for name, point in registered(group).items():
        loaded: object = point.load()
        if callable(loaded):
            found[name] = cast(Callable[..., Any], loaded)
    return found


def load_target(value: str) -> object:
    """What an entry point's value (``module:attribute [extras]``) names, as ``EntryPoint.load``.

    For values read without ``importlib.metadata`` (:func:`command_points`).
    """
    module, _, attributes = value.partition("[")[0].partition(":")
    loaded: object = importlib.import_module(module.strip())
    for attribute in filter(None, attributes.strip().split(".")):
        loaded = getattr(loaded, attribute)
    return loaded


def command_points(name: str | None = None) -> list[tuple[str, str]]:
    """The ``stemma.commands`` entry points (name, value), only those called ``name`` if given.

    A command asked for by name is found in the distributions' files, without
    ``importlib.metadata`` (~35 ms of every ``stemma tui``); what the files cannot show
    (distributions in zip files) is asked of ``importlib.metadata``.
    """
    from stemma.core.plugins.entry_point_files import entry_point_values

    if name is not None and (values := entry_point_values(COMMANDS, name)):
        return [(name, value) for value in values]
    return [
        (point.name, point.value)
        for point in entry_points_of(COMMANDS)
        if name is None or point.name == name
    ]
