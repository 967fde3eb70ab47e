"""Where ``stemma tui`` opens: the root, and a run and a step named on the command line.

Everything here runs before Textual loads, so a run or step that does not exist is a one-line
error and an exit code (``stemma.core.exit_codes``), not a dashboard showing an error.
Reads only state files and the steps event log: no Textual, no dashboard client.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from stemma.core.cli import CliError, ExitCode, existing_root
from stemma.core.runs.roots import ROOT_MARKS


@dataclass(frozen=True, kw_only=True)
class Opening:
    """What the dashboard shows first."""

    root: Path
    """The root, as given (its header shows it this way)."""
    run_id: str | None = None
    """The run to open over the runs list, if one was named (its full id)."""
    step: int | None = None
    """The number of the step to open over that run, if one was named."""


def split_target(first: str | None, second: str | None) -> tuple[str | None, str | None]:
    """``stemma tui [ROOT] [RUN]``'s positionals as ``(root, run)``.

    Two arguments are a root and a run. One is the root when it is a path (it holds a ``/``)
    or a directory holding a stemma root's files (``stemma tui .stemma``, as before runs could
    be named), and a run otherwise: run ids, their prefixes and pipeline names hold no ``/``.
    """
    if second is not None:
        return first, second
    if first is None:
        return None, None
    path = Path(first)
    if os.sep in first or "/" in first or any((path / mark).exists() for mark in ROOT_MARKS):
        return first, None
    return None, first


def resolve_opening(
    root_option: str | None,
    target: str | None,
    run: str | None,
    step: str | None,
) -> Opening:
    """The root, the run's full id and the step's number, checked before the app starts.

    A run is named as for every command (its id, the start or the end of it, its pipeline's
    name: see ``stemma.core.runs.run_lookup``); the end is the short id the runs list shows.

    Args:
        root_option: ``--root`` (or None: ``$STEMMA_ROOT``, then ``.stemma``).
        target: the first positional (see :func:`split_target`).
        run: the second positional.
        step: ``--step``: a step's number or name.

    Raises:
        CliError: two different roots (USAGE); no such root, run or step (NOT_FOUND); a run
            prefix, short id or step name that matches several (USAGE); ``--step`` without a
            run (USAGE).
    """
    positional_root, run_given = split_target(target, run)
    if positional_root and root_option and Path(positional_root) != Path(root_option):
        raise CliError(
            f"two roots given: {positional_root} and --root {root_option}; give one",
            ExitCode.USAGE,
        )
    root = existing_root(positional_root or root_option)
    if run_given is None:
        if step is not None:
            raise CliError("--step needs a run: stemma tui RUN --step NAME", ExitCode.USAGE)
        return Opening(root=root)
    run_id = _resolve_run(root, run_given, named_root=positional_root is not None)
    number = None if step is None else resolve_step(root, run_id, step)
    return Opening(root=root, run_id=run_id, step=number)


def _resolve_run(root: Path, given: str, *, named_root: bool) -> str:
    from stemma.core.runs.run_lookup import resolve_run_id  # the store: only now

    try:
        return resolve_run_id(root, given)
    except CliError as err:
        if err.code is ExitCode.NOT_FOUND and not named_root:
            raise CliError(
                f"{err}; to open a root instead, pass it as --root {given}", err.code
            ) from err
        raise


def resolve_step(root: Path, run_id: str, given: str) -> int:
    """The number of the step of ``run_id`` that ``given`` names.

    ``given`` is a step's number, its name (``example.transform``), or the last part of its
    name (``transform``) when only one step's name ends so.

    Raises:
        CliError: no such step (NOT_FOUND, listing the run's steps), or a name several steps
            share (USAGE, listing their numbers).
    """
    steps = run_steps(root, run_id)
    listed = ", ".join(f"{number} {name}" for number, name in sorted(steps.items())) or "none yet"
    if given.isdigit():
        if int(given) in steps:
            return int(given)
        raise CliError(f"run {run_id} has no step {given}; its steps: {listed}", ExitCode.NOT_FOUND)
    exact = sorted(number for number, name in steps.items() if name == given)
    found = exact or sorted(n for n, name in steps.items() if name.rsplit(".", 1)[-1] == given)
    if len(found) == 1:
        return found[0]
    if not found:
        raise CliError(
            f"run {run_id} has no step named {given!r}; its steps: {listed}", ExitCode.NOT_FOUND
        )
    numbers = ", ".join(str(number) for number in found)
    raise CliError(
        f"{given!r} names steps {numbers} of run {run_id}; pass --step with one of the numbers",
        ExitCode.USAGE,
    )


def run_steps(root: Path, run_id: str) -> dict[int, str]:
    """Step number → name for ``run_id``: from its live state, and from history."""
    from stemma.core.live import read_state
    from stemma.core.runs.run_lookup import history_events

    steps = {e.step_number: e.step_name for e in history_events(root, run_id)}
    try:
        state = read_state(root, run_id)
    except (FileNotFoundError, ValueError):  # known only to history
        return steps
    steps.update({step.number: step.name for step in state.steps})
    return steps
