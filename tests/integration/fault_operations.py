"""Operations that kill their own worker, for the fault tests: importable by name in workers."""

import os
import signal
import time
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel
from stubborn_markers import STUBBORN_MARKERS_ENV

from stemma.core.examples import CopyUnlessRefused
from stemma.core.operations import InputSpec, OperationDefinition, OutputSpec, PassthroughResult


class DieOnMatch(CopyUnlessRefused):
    """Copy each dataset, but SIGKILL the worker on one whose name contains ``match``.

    With ``megabytes`` it first holds that much memory, so the death looks like the OOM
    killer's: a SIGKILL to a worker with a large peak resident size, killed before the
    orchestrator could sample it (its peak is the kernel's, as the worker is reaped).
    """

    class Params(BaseModel):
        match: str
        megabytes: int = 0
        pause: float = 0.5
        """Seconds each other unit takes (0: quick units, which share packs)."""
        deaths: str = ""
        """A file to append a line to each time the matching unit kills its worker."""

    name = "test.die_on_match"
    params: Params

    def refusal(self, path: Path) -> str | None:
        if self.params.match in path.name:
            _ballast = _hold(self.params.megabytes)  # killed at once: no sample can see it
            if self.params.deaths:
                with open(self.params.deaths, "a") as deaths:
                    deaths.write(f"{os.getpid()}\n")
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(self.params.pause)  # the other units are still running when one worker dies
        return None


class StubbornSlowCopy(CopyUnlessRefused):
    """Copy each dataset after sleeping ``seconds``, ignoring SIGTERM meanwhile: a tool that a
    force cancel's SIGTERM does not stop, so only the SIGKILL after the grace period (or a hard
    cancel) does. A test waits for its marker (``STUBBORN_MARKERS_ENV``) before a force press: a
    unit sent is not yet a unit that ignores SIGTERM (its worker may still be reading inputs)."""

    class Params(BaseModel):
        seconds: float = 60.0

    name = "test.stubborn_slow_copy"
    params: Params = Params()

    def refusal(self, path: Path) -> str | None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if folder := os.environ.get(STUBBORN_MARKERS_ENV):
            Path(folder, str(os.getpid())).touch()
        time.sleep(self.params.seconds)
        return None


class SlowFailOn(CopyUnlessRefused):
    """Fail at once on the dataset whose name contains ``match``; copy the others slowly."""

    class Params(BaseModel):
        match: str
        seconds: float = 1.0

    name = "test.slow_fail_on"
    params: Params

    def refusal(self, path: Path) -> str | None:
        if self.params.match in path.name:
            return f"refusing {path.name}"
        time.sleep(self.params.seconds)
        return None


class DieCurating(OperationDefinition):
    """A curator that holds ``megabytes`` of memory, then SIGKILLs its own process (OOM-like)."""

    class Params(BaseModel):
        megabytes: int

    name = "test.die_curating"
    inputs: ClassVar = {"dataset": InputSpec(artifact_type="data")}
    outputs: ClassVar = {"dataset": OutputSpec(artifact_type="data")}
    params: Params

    def execute_curator(self, inputs: Any, step_number: int, store: Any) -> PassthroughResult:
        _ballast = _hold(self.params.megabytes)  # resident as the process is killed
        os.kill(os.getpid(), signal.SIGKILL)
        return PassthroughResult(passthrough={})


def hold_and_die(megabytes: int, out_path: str) -> None:
    """A lazy step's function that holds ``megabytes`` of memory, then SIGKILLs its worker."""
    _ballast = _hold(megabytes)  # resident as the process is killed
    os.kill(os.getpid(), signal.SIGKILL)


def _hold(megabytes: int) -> bytearray:
    """``megabytes`` of memory, every page touched: resident, as a real allocation's."""
    ballast = bytearray(megabytes * 1024 * 1024)
    ballast[::4096] = b"x" * len(ballast[::4096])
    return ballast
