"""A detached run's log says where a cancel came from, and how to go further from there.

A cancel asked through the run's control files (``stemma cancel``, the dashboard's ``c``) is
not a Ctrl-C: whoever reads a detached run's log has no terminal to press it in, so the line
names the requester and the next ``stemma cancel`` command instead.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import signal
import time

from stemma.core.live import RunStatus, read_state, request_cancel
from stemma.core.provenance import current_user
from stemma.core.runs.launching import detach
from tests.integration.run_waits import wait_for_run

SCRIPT = pathlib.Path(__file__).with_name("cancellable_pipeline.py")


def _log_has(log: pathlib.Path, text: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        content = log.read_text(errors="replace")
        if text in content:
            return content
        time.sleep(0.1)
    raise AssertionError(f"{text!r} never appeared in {log}:\n{log.read_text(errors='replace')}")


def test_detached_run_cancelled_through_control_files_names_the_cli_not_ctrl_c(
    tmp_path: pathlib.Path,
) -> None:
    root = tmp_path / "root"
    started = detach(root, str(SCRIPT), [str(root), "60"], None)
    [run_id] = started.run_ids
    try:
        wait_for_run(root, lambda s: len(s.steps) >= 2 and s.steps[1].running > 0)
        request_cancel(root, run_id, 1)
        graceful = _log_has(started.log, "graceful: no new work")
        request_cancel(root, run_id, 2)
        wait_for_run(root, lambda s: s.status is RunStatus.CANCELLED, what="the cancelled run")
        log = _log_has(started.log, "force: queued units dropped")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(started.pid, signal.SIGKILL)
    user = current_user()  # as the request records it ($USER is unset under tmux or ssh -T)
    assert "Press Ctrl-C" not in log
    assert f"Asked by {user}@" in graceful
    assert f"For force: `stemma cancel {run_id} --level 2`, or c again in the dashboard" in (
        graceful
    )
    assert f"For hard: `stemma cancel {run_id} --level 3`" in log
    assert read_state(root, run_id).cancel_level == 2
