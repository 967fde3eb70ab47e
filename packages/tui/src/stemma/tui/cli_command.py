"""``stemma tui [ROOT]``: registered under the ``stemma.commands`` entry point group."""

from __future__ import annotations

import argparse

from stemma.core.cli import Command, ExitCode, existing_root


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path",
        nargs="?",
        default=None,
        help="the stemma root (default: --root, $STEMMA_ROOT, .stemma)",
    )


def _run(args: argparse.Namespace) -> int:
    from stemma.tui.app import run_dashboard  # Textual loads only when the dashboard starts

    run_dashboard(existing_root(args.path or args.root))
    return ExitCode.OK


COMMAND = Command(
    name="tui",
    help="the dashboard: watch, explore and cancel runs (keyboard first; ? for help)",
    configure=_configure,
    run=_run,
)
