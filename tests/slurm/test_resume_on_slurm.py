"""`stemma resume` of a SLURM run whose orchestrator was killed: same script, root and backend.

The script names no backend: `stemma run --detach --backend slurm` chose it. Its orchestrator is
killed while its slow step's elements are in the queue; `stemma resume` starts the recorded
command again, and the new run runs on SLURM too, records that it resumes the dead one, and
completes with every unit.
"""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest
from slurm_testing import queued, wait_until

from stemma.core.exit_codes import ExitCode
from stemma.core.live import RunStatus, read_state
from stemma.slurm.reap import reap

pytestmark = pytest.mark.slurm

STEMMA = pathlib.Path(sys.executable).parent / "stemma"
UNITS = 3
SCRIPT = f"""
from stemma.core.examples import DataGenerator, SlowCopy
from stemma.core.front.pipeline import Pipeline

if __name__ == "__main__":
    pipeline = Pipeline.create("resumed_on_slurm")
    generated = pipeline.run(DataGenerator, params={{"count": {UNITS}, "rows": 2}})
    pipeline.run(SlowCopy, inputs={{"dataset": generated.output("datasets")}},
                 params={{"seconds": 4}}, execution={{"units_per_worker": 1}})
    pipeline.finalize()
"""


def _stemma(root: pathlib.Path, cwd: pathlib.Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(STEMMA), "--root", str(root), *argv],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_slurm_resume_runs_the_recorded_command_again_on_the_same_backend(
    slurm_cluster: None, tmp_path: pathlib.Path
) -> None:
    (tmp_path / "flow.py").write_text(SCRIPT)
    root = tmp_path / "store"
    started = _stemma(root, tmp_path, "run", "--detach", "--backend", "slurm", "flow.py")
    assert started.returncode == ExitCode.OK, started.stderr
    old = started.stdout.strip()
    tag = f"stemma-{old[-8:]}"
    new = ""
    try:
        wait_until(lambda: any("-s1-" in line for line in queued(tag)), 120, "the slow step")
        os.kill(read_state(root, old).pid, signal.SIGKILL)
        wait_until(lambda: read_state(root, old).status is RunStatus.STALE, 30, "the run stale")

        resumed = _stemma(root, pathlib.Path("/"), "resume", old)  # from anywhere
        assert resumed.returncode == ExitCode.OK, resumed.stderr
        new = resumed.stdout.strip()
        assert f"resuming {old} as {new}" in resumed.stderr

        deadline = time.monotonic() + 240
        while read_state(root, new).status is RunStatus.RUNNING:
            assert time.monotonic() < deadline, "the resumed run never finished"
            time.sleep(0.5)  # polling another process's state file: nothing to await
        final = read_state(root, new)
        assert final.status is RunStatus.COMPLETED, final
        assert (final.backend, final.resumes, final.cwd) == ("slurm", old, str(tmp_path))
        assert final.steps[1].succeeded == UNITS
    finally:
        reap(old, root=root, wait_seconds=0)  # what the dead run left, if the test failed early
        if new:
            reap(new, root=root, wait_seconds=0)
