"""``stemma plan SCRIPT`` (what would run, and why, doing nothing) and ``stemma explain STEP``."""

from __future__ import annotations

import argparse
import ast
import importlib
import os
import runpy
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from stemma.core.cli.commands import Command
from stemma.core.cli.output import OutputFormat, add_format_option, print_rows
from stemma.core.exit_codes import CliError, ExitCode
from stemma.core.graph.step import ArtifactStep
from stemma.core.runs.explaining import explain_step
from stemma.core.runs.roots import existing_root
from stemma.core.runs.run_lookup import history_events, resolve_run_id, root_argument
from stemma.core.runs.script_target import resolve_script
from stemma.core.store.locations import ROOT_ENV

STEPS_FUNCTION = "steps"
PLAN_COLUMNS = ("step", "action", "fingerprint", "reason")


def load_steps(script: str, argv: Sequence[str] = ()) -> list[ArtifactStep]:
    """The lazy steps a script offers: ``steps()`` in a file or module, or ``module:function``.

    The script's ``__main__`` block does not run: only its definitions are loaded, and its
    function is called with ``sys.argv`` set to ``[script, *argv]`` (as a Pipeline script
    would see its arguments).

    Raises:
        CliError: the script or its function is missing, or returns something else.
    """
    saved = sys.argv
    sys.argv = [script, *argv]
    try:
        return _load_steps(script)
    finally:
        sys.argv = saved


def _load_steps(script: str) -> list[ArtifactStep]:
    found = resolve_script(script)
    function = found.function
    if found.path is not None:
        sys.path.insert(0, str(found.path.resolve().parent))
        namespace: dict[str, Any] = runpy.run_path(str(found.path), run_name="stemma_plan")
    else:
        try:
            namespace = vars(importlib.import_module(found.module or ""))
        except ImportError as err:
            raise CliError(f"cannot import {found.module!r}: {err}", ExitCode.NOT_FOUND) from None
    factory: object = namespace.get(function or STEPS_FUNCTION)
    if not callable(factory):
        raise CliError(
            f"{script!r} has no function {function or STEPS_FUNCTION}() returning its steps; "
            "define one, or name it as module:function",
            ExitCode.NOT_FOUND,
        )
    made: object = factory()
    handles = [made] if isinstance(made, ArtifactStep) else list(_iterable(made))
    if not handles or not all(isinstance(h, ArtifactStep) for h in handles):
        raise CliError(f"{script!r}: the function must return ArtifactStep handles", ExitCode.USAGE)
    return [h for h in handles if isinstance(h, ArtifactStep)]


def _offers_steps(script: str) -> bool:
    """Whether ``script`` is planned by its lazy steps (a function to call), not by running it."""
    found = resolve_script(script)
    if found.function:
        return True
    if found.source is None:
        raise CliError(
            f"cannot plan {script!r}: module {found.module!r} has no Python source to read",
            ExitCode.NOT_FOUND,
        )
    tree = ast.parse(found.source.read_text(), str(found.source))
    # Read, not imported: a Pipeline script's top level is run once, by the dry run itself.
    return any(
        isinstance(node, ast.FunctionDef) and node.name == STEPS_FUNCTION for node in tree.body
    )


def _iterable(value: object) -> Iterable[object]:
    if isinstance(value, list | tuple | set | frozenset):
        return list(value)  # pyright: ignore[reportUnknownArgumentType]
    raise CliError("the steps function must return a handle or a list of them", ExitCode.USAGE)


def _configure_plan(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "script",
        help=f"a file or module with a {STEPS_FUNCTION}() function, or a Pipeline script "
        "(run as `stemma run` would, with every step planned and none run)",
    )
    parser.add_argument(
        "args",
        nargs="*",
        help="the script's arguments, in sys.argv (after `--` if one starts with a dash)",
    )
    add_format_option(parser)


def _plan(args: argparse.Namespace) -> int:
    from stemma.core.front.api import plan

    root = root_argument(args.root)
    if not _offers_steps(args.script):
        from stemma.core.cli.pipeline_plan import plan_pipeline_script, print_forecasts

        if args.root is not None:
            os.environ[ROOT_ENV] = str(root)  # as `stemma run` does: the script's default root
        print_forecasts(plan_pipeline_script(args.script, args.args), args.format)
        return ExitCode.OK
    handles = load_steps(args.script, args.args)
    planned = plan(*handles, root=root)
    # a table stays narrow; JSON and CSV are for programs, which get the whole key (as the
    # Pipeline plan's JSON does)
    short = OutputFormat(args.format) is OutputFormat.TABLE
    rows = [
        {
            "step": item.spec.name,
            "action": item.action,
            "fingerprint": item.spec.fingerprint[:12] if short else item.spec.fingerprint,
            "reason": item.reason,
        }
        for item in planned
    ]
    print_rows(rows, PLAN_COLUMNS, args.format)
    return ExitCode.OK


def _configure_explain(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "step",
        help="a step's name, or its number in the run given by --run (as `stemma status` shows "
        "them)",
    )
    parser.add_argument(
        "--run",
        help="explain its attempt in this run: its id, the start or end of it, or its pipeline's "
        "name for the newest (default: the step's newest attempt)",
    )


def _explain(args: argparse.Namespace) -> int:
    root = existing_root(args.root)
    run_id = resolve_run_id(root, args.run) if args.run else None
    try:
        lines = explain_step(history_events(root), args.step, run_id)
    except ValueError as err:  # a step number without a run
        raise CliError(str(err), ExitCode.USAGE) from None
    except LookupError as err:
        raise CliError(
            f"{err}; `stemma status RUN` lists a run's steps", ExitCode.NOT_FOUND
        ) from None
    print("\n".join(lines))
    return ExitCode.OK


PLAN = Command(
    name="plan",
    help="what a script would run, and why (its lazy steps, or its Pipeline's); runs nothing",
    configure=_configure_plan,
    run=_plan,
)
EXPLAIN = Command(
    name="explain",
    help="why a step ran or was a cache hit: its key against the previous attempt's",
    configure=_configure_explain,
    run=_explain,
)
