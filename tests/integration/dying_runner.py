"""A runner that is killed (SIGKILL) after staging a step and before committing it.

Run as ``python dying_runner.py ROOT COUNTER_FILE GO_FILE``: the step's function records its
execution in COUNTER_FILE, waits for GO_FILE (so a second runner can line up behind the step's
lock), and the process then dies the moment the store would commit the staged work.
"""

import os
import pathlib
import signal
import sys
import time
from collections.abc import Sequence

from stemma.core import OUT, ArtifactStep, apply, resolve
from stemma.core.execution_records import StepOutputs
from stemma.storage import DeltaStore, WaveReport

COMMIT_WAVE = DeltaStore.commit_wave


def build(counter: str, go: str, out_path: str) -> int:
    with open(counter, "a") as stream:
        stream.write(f"{os.getpid()}\n")
    deadline = time.monotonic() + 60
    while not os.path.exists(go) and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.5)  # let the second runner reach the lock and block on it
    pathlib.Path(out_path).write_text("built once")
    return 7


def die_instead_of_committing(
    self: DeltaStore, bundles: Sequence[pathlib.Path], *, step_outputs: StepOutputs | None = None
) -> WaveReport:
    if not bundles:  # a step with nothing staged: nothing to die before
        return COMMIT_WAVE(self, bundles, step_outputs=step_outputs)
    os.kill(os.getpid(), signal.SIGKILL)
    raise AssertionError("unreachable")


def step(counter: str, go: str) -> ArtifactStep:
    return apply(name="dying/step", fn=build, version="v0", counter=counter, go=go, out_path=OUT)


if __name__ == "__main__":
    root, counter, go = sys.argv[1:4]
    DeltaStore.commit_wave = die_instead_of_committing  # type: ignore[method-assign]
    resolve(step(counter, go), root=root)
