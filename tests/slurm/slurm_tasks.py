"""Units of work for the SLURM tests: importable by name inside the jobs."""

import os
import pathlib
import signal
import time

from pydantic import BaseModel

from stemma.core.examples import CopyUnlessRefused


def square(value: int) -> int:
    return value * value


def fail(message: str) -> None:
    raise ValueError(message)


def die(_: object) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def wait_for_file(path: str) -> str:
    """Report that it started (``path + '.started'``), then wait up to 2 minutes for ``path``."""
    flag = pathlib.Path(path)
    started = pathlib.Path(f"{path}.started.{os.environ.get('SLURM_ARRAY_TASK_ID', '-')}")
    with started.open("a") as log:  # one line per start: a requeued element starts twice
        log.write(f"{os.environ.get('SLURM_RESTART_COUNT', '0')}\n")
    deadline = time.monotonic() + 120
    while not flag.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    return "released" if flag.exists() else "gave up"


def where(_: object) -> tuple[str | None, str | None]:
    """The job and step this unit ran in."""
    return os.environ.get("SLURM_JOB_ID"), os.environ.get("SLURM_STEP_ID")


class StallOnSecondUnit(CopyUnlessRefused):
    """Copy the first dataset a worker gets at once, then stall past any test's time limit.

    When the stall begins, ``{marker}.stalled`` appears, so a test knows the first unit is done.
    """

    class Params(BaseModel):
        marker: str

    name = "test.stall_on_second_unit"
    params: Params

    def refusal(self, path: pathlib.Path) -> str | None:
        _STARTED.append(path.name)  # units of a pack run one after another in one process
        if len(_STARTED) == 2:
            pathlib.Path(f"{self.params.marker}.stalled").touch()
            time.sleep(600)
        return None


_STARTED: list[str] = []


class MarkThenSleep(CopyUnlessRefused):
    """Copy each dataset after sleeping ``seconds``; ``{marker}.started.{element id}`` appears
    as a unit begins, so a test knows which element's operation (and its signal handlers) is
    running: another element of the step may still be starting Python."""

    class Params(BaseModel):
        marker: str
        seconds: float = 4.0

    name = "test.mark_then_sleep"
    params: Params

    def refusal(self, path: pathlib.Path) -> str | None:
        element = f"{os.environ['SLURM_ARRAY_JOB_ID']}_{os.environ['SLURM_ARRAY_TASK_ID']}"
        pathlib.Path(f"{self.params.marker}.started.{element}").touch()
        time.sleep(self.params.seconds)
        return None
