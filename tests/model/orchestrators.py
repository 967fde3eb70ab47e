"""Starting, cancelling, killing and waiting for the model pipeline's orchestrators.

Each orchestrator is a real ``python model_pipeline.py`` process in its own session, so a
``kill -9`` can take its whole process group (the orchestrator and its local workers) at once,
as a power cut would. Nothing here sleeps for a fixed time: it polls the live state with
generous deadlines, so it holds on a loaded machine.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

from stemma.core.live import RunState, read_state
from tests.integration.process_tree import alive, descendants

SCRIPT = pathlib.Path(__file__).with_name("model_pipeline.py")
SLOW_STEP = "example.slow_scale"
RUN_SECONDS = 180.0
"""The most a run of the model pipeline may take on a loaded 2-core machine (it takes ~10 s)."""


@dataclass(frozen=True, kw_only=True)
class Ended:
    """An orchestrator that has ended: its exit code, output and the run's summary."""

    run_id: str
    returncode: int
    stderr: str
    summary: dict[str, Any] | None
    """``finalize()``'s summary, or None when the run did not get that far."""


class Orchestrator:
    """One running ``model_pipeline.py`` process on a root."""

    def __init__(
        self,
        root: pathlib.Path,
        inputs: pathlib.Path,
        scale: float,
        seconds: float,
        resume: str | None = None,
        *,
        script: pathlib.Path = SCRIPT,
    ) -> None:
        argv = [sys.executable, str(script), str(root), str(inputs), str(scale), str(seconds)]
        self.root = root
        self.process = subprocess.Popen(
            [*argv, *([resume] if resume else [])],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            cwd=root.parent,  # whatever a run might leave in its working directory stays in tmp
        )
        assert self.process.stdout is not None
        # The script prints its run id as soon as the run is open (a second or two).
        self.run_id = self.process.stdout.readline().strip()
        if not self.run_id:
            self.process.kill()
            err = self.process.communicate()[1]
            raise AssertionError(f"the model pipeline ended before opening its run:\n{err}")

    def state(self) -> RunState | None:
        """The run's live state now, or None before its first write."""
        try:
            return read_state(self.root, self.run_id)
        except (FileNotFoundError, ValueError):
            return None

    def wait_until_slow_units_run(self) -> bool:
        """Wait until a slow unit runs (True), or the run ended first (False)."""
        deadline = time.monotonic() + RUN_SECONDS
        while time.monotonic() < deadline:
            state = self.state()
            if state is not None and any(s.name == SLOW_STEP and s.running for s in state.steps):
                return True
            if self.process.poll() is not None:
                return False
            time.sleep(0.05)
        raise AssertionError(f"run {self.run_id}: no slow unit ran within {RUN_SECONDS} s")

    def wait(self) -> Ended:
        """Wait for the process to end (killing it past the deadline, and failing)."""
        try:
            out, err = self.process.communicate(timeout=RUN_SECONDS)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"run {self.run_id} did not end in {RUN_SECONDS} s") from None
        lines = out.strip().splitlines()
        summary: dict[str, Any] | None = None
        if lines and lines[-1].startswith("{"):
            summary = json.loads(lines[-1])
        return Ended(
            run_id=self.run_id, returncode=self.process.returncode, stderr=err, summary=summary
        )

    def kill(self) -> None:
        """``kill -9`` the orchestrator and its workers; return once none of them lives."""
        tree = descendants(self.process.pid) | {self.process.pid}
        with contextlib.suppress(ProcessLookupError):  # it had ended already
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.communicate()
        deadline = time.monotonic() + 30
        while alive(tree) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(tree), f"processes outlived kill -9: {sorted(alive(tree))}"
