"""A cancel request names who asked, even from a shell without ``$USER`` (tmux, ssh -T, cron)."""

from __future__ import annotations

import os
import pwd
import socket
import subprocess
import sys
from pathlib import Path

from stemma.core.live import pending_requests
from stemma.core.live.state import run_dir

ASK = """
import sys
from stemma.core.live import request_cancel
request_cancel(sys.argv[1], sys.argv[2], 1)
"""


def test_a_cancel_asked_without_user_in_the_environment_names_the_login_user(
    tmp_path: Path,
) -> None:
    run_id = "flow_20261202_010000_00000001"
    run_dir(tmp_path, run_id).mkdir(parents=True)
    names = ("USER", "LOGNAME", "LNAME", "USERNAME")
    env = {key: value for key, value in os.environ.items() if key not in names}
    subprocess.run([sys.executable, "-c", ASK, str(tmp_path), run_id], env=env, check=True)
    [request] = pending_requests(tmp_path, run_id)
    user = pwd.getpwuid(os.getuid()).pw_name
    assert request.requested_by.startswith(f"{user}@{socket.gethostname()} (pid ")
