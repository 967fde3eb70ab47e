"""What a command needs that stemma-core alone lacks, said before anything runs (exit 4).

stemma-core installs the ``stemma`` command; the sibling packages add commands (``artifacts``,
``tui``…), a store (``delta``) and backends (``slurm``). Without them argparse would answer
"invalid choice", and a detached script would die with the reason only in its log, so the
command checks what it was asked for against what is installed, and names the package to
install.
"""

from __future__ import annotations

import argparse
import os

from stemma.core import plugins
from stemma.core.exit_codes import CliError, ExitCode

SIBLING_COMMANDS: dict[str, str] = {
    "artifacts": "stemma-storage",
    "lineage": "stemma-storage",
    "compact": "stemma-storage",
    "vacuum": "stemma-storage",
    "check": "stemma-storage",
    "tui": "stemma-tui",
}
"""The commands the sibling packages register under ``stemma.commands``, and their package
(a test checks this against the installed packages' entry points)."""
SIBLING_STORES: dict[str, str] = {"delta": "stemma-storage"}
SIBLING_BACKENDS: dict[str, str] = {"slurm": "stemma-slurm", "slurm-intra": "stemma-slurm"}
BUILT_IN_BACKENDS = ("local", "local-thread")

_NO_STORE = frozenset({"cancel"})
"""Core commands that never open a store (a live run's files are enough)."""
_BACKEND_COMMANDS = frozenset({"run", "demo"})
"""Core commands that start a pipeline, so need the backend ``--backend``/``$STEMMA_BACKEND``
names."""


def install_hint(package: str) -> str:
    """How to install ``package``."""
    return f"pip install {package} (or uv pip install {package})"


def missing_command(name: str) -> CliError:
    """The error for a sibling package's command that is not installed here."""
    package = SIBLING_COMMANDS[name]
    return CliError(
        f"this command comes with {package}, which is not installed here; {install_hint(package)}",
        ExitCode.UNAVAILABLE,
    )


def check_requirements(command: str, args: argparse.Namespace) -> None:
    """Refuse, before it runs, a core command whose store or backend is not installed.

    Raises:
        CliError: (UNAVAILABLE) ``$STEMMA_STORE`` names a store no installed package provides,
            or ``--backend``/``$STEMMA_BACKEND`` a backend, naming the package to install.
    """
    from stemma.core.store.opening import STORE_ENV, available_stores

    store = os.environ.get(STORE_ENV)
    if command not in _NO_STORE and store and store not in available_stores():
        raise CliError(
            f"${STORE_ENV}={store} names a store that is not installed "
            f"(installed: {', '.join(sorted(available_stores()))}); "
            f"{_how_to_get(store, SIBLING_STORES)}, or unset {STORE_ENV} for the default",
            ExitCode.UNAVAILABLE,
        )
    if command not in _BACKEND_COMMANDS:
        return
    from stemma.core.runs.launching import BACKEND_ENV

    given = getattr(args, "backend", None)
    backend = given or os.environ.get(BACKEND_ENV)
    installed = installed_backends()
    if backend and backend not in installed:
        source = "--backend" if given else f"${BACKEND_ENV}"
        raise CliError(
            f"{source} {backend}: no such backend is installed "
            f"(installed: {', '.join(installed)}); {_how_to_get(backend, SIBLING_BACKENDS)}",
            ExitCode.UNAVAILABLE,
        )


def installed_backends() -> tuple[str, ...]:
    """The backends a pipeline can use here: the built-in ones and those registered."""
    registered = set(plugins.registered(plugins.BACKENDS))
    return (*BUILT_IN_BACKENDS, *sorted(registered - set(BUILT_IN_BACKENDS)))


def _how_to_get(name: str, known: dict[str, str]) -> str:
    package = known.get(name)
    if package is None:
        return f"install the package that registers {name!r}"
    return f"{name!r} comes with {package}: {install_hint(package)}"
