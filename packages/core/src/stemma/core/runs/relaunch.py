"""What ``stemma resume RUN`` starts: the run's recorded command, checked, or why it cannot.

Pure over a :class:`~stemma.core.live.RunState` and the files it names: nothing is started here.
The command is the one its orchestrator was started with (``RunState.launch``), run again in its
working directory on the same root and backend; every reason it cannot be run again says what to
do instead.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path, PurePath

from stemma.core.exit_codes import CliError, ExitCode
from stemma.core.live import RunState, RunStatus
from stemma.core.live.launch_record import RESUMES_ENV
from stemma.core.runs.launching import BACKEND_ENV
from stemma.core.store.locations import ROOT_ENV

NOT_A_SCRIPT = ("", "-c", "-")
"""``sys.argv[0]`` of a run started from an interactive Python, ``python -c`` or stdin."""
KERNELS = ("ipykernel", "jupyter", "colab")
"""Words in ``sys.argv[0]`` of a notebook's kernel: starting one again runs no cell."""


@dataclass(frozen=True, kw_only=True)
class Relaunch:
    """A stale run's command, ready to start again."""

    command: tuple[str, ...]
    """The program and its arguments (the recorded ``launch``)."""
    cwd: Path
    """Where it ran, and runs again."""
    env: dict[str, str]
    """Set on top of the caller's environment: the root, the backend and the run resumed."""

    def shown(self) -> str:
        """The command as one shell line, for the user to read."""
        return f"cd {shlex.quote(str(self.cwd))} && {shlex.join(self.command)}"


def relaunch_of(state: RunState, root: Path) -> Relaunch:
    """The command that resumes ``state``'s run on ``root``.

    Raises:
        CliError: the run is alive (USAGE: cancel it first), completed (USAGE: nothing to
            resume), recorded no command (NOT_FOUND: what to run by hand), was started from a
            notebook or an interactive session (USAGE), or its directory, interpreter or
            script is gone (NOT_FOUND: what is missing, and where it was).
    """
    run_id = state.run_id
    if state.status is RunStatus.RUNNING:
        raise CliError(
            f"run {run_id} is still alive (pid {state.pid} on {state.host}): nothing to resume; "
            f"stop it first with `stemma cancel {run_id}`, or follow it with "
            f"`stemma watch {run_id}`",
            ExitCode.USAGE,
        )
    if state.status is RunStatus.COMPLETED and not any(step.failed for step in state.steps):
        raise CliError(
            f"run {run_id} completed: nothing to resume (run its script again for a new run)",
            ExitCode.USAGE,
        )
    if not state.launch:
        raise CliError(
            f"run {run_id} recorded no command to run again (it started before stemma kept "
            f"them); start it again by hand: {by_hand(state, root)}",
            ExitCode.NOT_FOUND,
        )
    script = state.command[0] if state.command else ""
    if script in NOT_A_SCRIPT or any(word in script.lower() for word in KERNELS):
        raise CliError(
            f"run {run_id} was started from a notebook or an interactive Python "
            f"({shlex.join(state.launch)}): there is no script to run again; run its cells "
            "again (its finished units are answered from the cache)",
            ExitCode.USAGE,
        )
    cwd = Path(state.cwd) if state.cwd else None
    if cwd is None or not cwd.is_dir():
        raise CliError(
            f"run {run_id} ran in {state.cwd or 'a directory it did not record'}, which is gone; "
            f"start it again by hand from where its script is: {by_hand(state, root)}",
            ExitCode.NOT_FOUND,
        )
    if not Path(state.launch[0]).is_file():
        raise CliError(
            f"the Python that ran {run_id}, {state.launch[0]}, is gone (a removed virtual "
            f"environment?); recreate it, or start the run by hand: {by_hand(state, root)}",
            ExitCode.NOT_FOUND,
        )
    missing = _missing_script(script, cwd)
    if missing is not None:
        raise CliError(
            f"the script of run {run_id}, {missing}, no longer exists; restore it (its finished "
            f"units are answered from the cache), or start the pipeline by hand",
            ExitCode.NOT_FOUND,
        )
    env = {ROOT_ENV: str(root), RESUMES_ENV: run_id}
    if state.backend:
        env[BACKEND_ENV] = state.backend  # (a script that names its backend keeps its own)
    return Relaunch(command=state.launch, cwd=cwd, env=env)


def by_hand(state: RunState, root: Path) -> str:
    """The ``stemma run`` line that starts the run's script again, from what its state says."""
    options = ["--root", str(root)] + (["--backend", state.backend] if state.backend else [])
    words = state.command or ("SCRIPT",)
    where = f"cd {shlex.quote(state.cwd)} && " if state.cwd else ""
    return where + shlex.join(["stemma", "run", "--detach", *options, *words])


def _missing_script(script: str, cwd: Path) -> str | None:
    """The script file ``sys.argv[0]`` named, if it was a file and is gone; else None.

    A module's run (``python -m``) names its file too; ``module:function`` (``stemma run``)
    names none, and its module is looked for when it runs.
    """
    target = script.partition(":")[0] if ":" in PurePath(script).name else script
    if not target.endswith(".py"):
        return None
    path = cwd / target
    return None if path.is_file() else str(path)
