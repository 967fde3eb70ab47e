"""`stemma run --detach` and the dashboard's `n` outlive the terminal session that started them.

Started from a shell inside a real tmux session, whose server is then killed (every pane's
terminal hangs up: SIGHUP to the shell and its process groups, as when an SSH connection
drops): the detached run still finishes and commits.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stemma.core.live import RunStatus, read_state

STEMMA = Path(sys.executable).parent / "stemma"
TMUX = shutil.which("tmux") or "tmux"
SCRIPT = """
import sys
from stemma.core.examples import DataGenerator, SlowCopy
from stemma.core.front.pipeline import Pipeline

if __name__ == "__main__":
    pipeline = Pipeline.create("hangup", max_workers=2)
    generated = pipeline.run(DataGenerator, params={"count": int(sys.argv[1]), "rows": 2})
    pipeline.run(SlowCopy, inputs={"dataset": generated.output("datasets")},
                 params={"seconds": 0.5}, execution={"units_per_worker": 1})
    pipeline.finalize()
"""


def _in_tmux(tmp_path: Path, socket: Path, line: str) -> None:
    """Run ``line`` in a shell in a new detached tmux session (its own server, on ``socket``)."""
    env = {key: value for key, value in os.environ.items() if key != "TMUX"}
    subprocess.run(
        [TMUX, "-S", str(socket), "new-session", "-d", "-s", "ssh", "-x", "120", "-y", "30"],
        cwd=tmp_path,
        env=env,
        check=True,
        timeout=30,
    )
    # The shell stays in the pane after the command: the session dies under a live shell.
    subprocess.run(
        [TMUX, "-S", str(socket), "send-keys", "-t", "ssh", f"{line}; sleep 600", "Enter"],
        check=True,
        timeout=30,
    )


def _wait_for_text(path: Path, seconds: float = 120) -> str:
    deadline = time.monotonic() + seconds
    while not (path.is_file() and path.read_text().strip()):
        assert time.monotonic() < deadline, f"nothing was written to {path}"
        time.sleep(0.1)  # polling a file another process writes: nothing to await
    return path.read_text().strip()


# The dashboard's `n` in a process that stays open after launching, as the dashboard does until
# the tmux server's SIGHUP ends it.
DASHBOARD_LAUNCH = """
import sys, time
from pathlib import Path
from stemma.tui.client import DashboardClient

started = DashboardClient(Path(sys.argv[1])).launch("hangup.py 8")
print(*started.run_ids, flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("launcher", ["stemma run --detach", "dashboard n"])
def test_a_run_started_in_tmux_finishes_after_the_tmux_server_is_killed(
    tmp_path: Path, launcher: str
) -> None:
    (tmp_path / "hangup.py").write_text(SCRIPT)
    root = tmp_path / "store"
    socket = tmp_path / "tmux"
    out, err = tmp_path / "out", tmp_path / "err"
    if launcher == "dashboard n":
        command = shlex.join([sys.executable, "-c", DASHBOARD_LAUNCH, str(root)])
    else:
        command = shlex.join(
            [str(STEMMA), "--root", str(root), "run", "--detach", "hangup.py", "8"]
        )
    _in_tmux(tmp_path, socket, f"{command} > {out} 2> {err}")
    try:
        run_id = _wait_for_text(out).splitlines()[0]
        assert read_state(root, run_id).status is RunStatus.RUNNING, err.read_text()
    finally:
        subprocess.run([TMUX, "-S", str(socket), "kill-server"], check=False, timeout=30)

    deadline = time.monotonic() + 120
    while read_state(root, run_id).status is RunStatus.RUNNING:
        assert time.monotonic() < deadline, "the detached run never finished"
        time.sleep(0.2)  # polling another process's state file: nothing to await
    final = read_state(root, run_id)
    assert final.status is RunStatus.COMPLETED, _log_of(root)
    assert final.steps[1].succeeded == 8
    assert final.steps[1].failed == 0
    # What `stemma resume` would run again: the detached process's own command line, and where.
    assert final.launch == (sys.executable, "-m", "stemma.core.cli.main", "run", "hangup.py", "8")
    assert final.cwd == str(tmp_path)


def _log_of(root: Path) -> str:
    logs = sorted((root / "logs" / "detached").glob("*.log"))
    return logs[-1].read_text() if logs else "(no detached log)"
