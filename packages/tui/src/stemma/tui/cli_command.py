"""``stemma tui [ROOT] [RUN] [--step NAME]``: registered under ``stemma.commands``.

Textual loads only once the dashboard really starts: a missing terminal, run or step is
refused first, in a few milliseconds, with an exit code from ``stemma.core.exit_codes``.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, TextIO

from stemma.core.cli import CliError, Command, ExitCode
from stemma.tui import collector

if TYPE_CHECKING:
    from stemma.tui.opening import Opening

NO_TERMINAL = (
    "needs a terminal, but {streams} (`ssh host stemma tui` without -t gives none). "
    "Over SSH: `ssh -t host stemma tui`. Without a terminal: `stemma status RUN` or "
    "`stemma watch RUN` for a run's progress, `stemma tui --once [RUN] [--step NAME]` for the "
    "dashboard's screen as plain text."
)


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path",
        nargs="?",
        default=None,
        metavar="ROOT_OR_RUN",
        help="a run to open: its id, the start or the end of it (the runs list's short id), or "
        "its pipeline's name (its newest run); a path (holding a /) or a directory holding a "
        "stemma root is the root instead, as --root",
    )
    parser.add_argument(
        "run",
        nargs="?",
        default=None,
        metavar="RUN",
        help="the run to open, after a root given as ROOT_OR_RUN",
    )
    parser.add_argument(
        "--step", default=None, metavar="NAME", help="open this step of RUN: its name or number"
    )
    parser.add_argument(
        "--readonly",
        action="store_true",
        help="hide launching (n) and cancelling (c): for a shared or unattended screen",
    )
    parser.add_argument(
        "--once",
        action="store_true",
        help="print the screen as plain text and exit (no terminal needed)",
    )
    parser.add_argument(
        "--size",
        default=None,
        metavar="WxH",
        help="with --once: columns x lines (default: $COLUMNS x $LINES, the terminal's, 120x40)",
    )


def _run(args: argparse.Namespace) -> int:
    from stemma.tui.opening import resolve_opening

    once: bool = getattr(args, "once", False)
    size = _size(getattr(args, "size", None), once=once)
    if not once:
        _require_terminal()
        collector.pause()  # until the first frame: see stemma.tui.collector
    opening = resolve_opening(
        args.root, args.path, getattr(args, "run", None), getattr(args, "step", None)
    )
    readonly: bool = getattr(args, "readonly", False)
    if size is not None:
        return _print_once(opening, size, readonly=readonly)
    from stemma.tui.app import run_dashboard  # Textual loads only when the dashboard starts

    try:
        run_dashboard(opening.root, run_id=opening.run_id, step=opening.step, readonly=readonly)
    finally:
        collector.resume()  # the dashboard failed or quit before its first frame
    return ExitCode.OK


def _require_terminal() -> None:
    """Refuse at once without a terminal: Textual would spin on a closed stdin, drawing.

    All three streams: keys come on stdin, and Textual draws on stderr (stdout is where a
    script would expect output it could read; ``--once`` writes there).
    """
    streams = {"stdin": sys.stdin, "stdout": sys.stdout, "stderr": sys.stderr}
    missing = [name for name, stream in streams.items() if not _is_tty(stream)]
    if missing:
        said = ", ".join(missing) + (" are not terminals" if missing[1:] else " is not one")
        raise CliError(NO_TERMINAL.format(streams=said), ExitCode.USAGE)


def _is_tty(stream: TextIO | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except ValueError:  # closed
        return False


def _size(given: str | None, *, once: bool) -> tuple[int, int] | None:
    if not once:
        if given is not None:
            raise CliError("--size goes with --once (a terminal has its own size)", ExitCode.USAGE)
        return None
    from stemma.tui.snapshot import terminal_size

    try:
        return terminal_size(given)
    except ValueError as err:
        raise CliError(str(err), ExitCode.USAGE) from err


def _print_once(opening: Opening, size: tuple[int, int], *, readonly: bool) -> int:
    from stemma.tui.app import StemmaApp
    from stemma.tui.snapshot import snapshot

    app = StemmaApp(opening.root, run_id=opening.run_id, step=opening.step, readonly=readonly)
    text, loaded = snapshot(app, size)
    sys.stdout.write(text)
    sys.stdout.flush()
    if not loaded:
        print("stemma tui --once: the screen was still loading; shown as it was", file=sys.stderr)
    return ExitCode.OK


COMMAND = Command(
    name="tui",
    help="the dashboard: watch, explore and cancel runs (keyboard first; ? for help)",
    configure=_configure,
    run=_run,
    description=(
        "The dashboard: watch, explore and cancel runs (keyboard first; ? for help). Opens on "
        "the runs list, on RUN, or on its step with --step; each screen's header shows the "
        "command that reopens it. It needs a terminal (over SSH: ssh -t); --once prints the "
        "screen as plain text instead."
    ),
)
