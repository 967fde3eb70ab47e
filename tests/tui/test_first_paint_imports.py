"""What the runs list's first frame does not need is not imported before it: the run, step and
artifact views, step trees, ETAs, log following and sqlite3 load when a screen asks for them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import stemma.tui.client

PROBE = """
import json, sys
import stemma.tui.app
later = ("stemma.tui.client.views", "stemma.tui.client.step_reader", "stemma.tui.client.eta",
         "stemma.tui.client.step_tree", "stemma.tui.client.log_follow", "sqlite3")
print(json.dumps(sorted(m for m in later if m in sys.modules)))
"""


def test_the_app_loads_no_view_step_eta_log_or_sqlite_module_before_the_first_frame() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(done.stdout.splitlines()[-1]) == []


def test_the_clients_view_types_load_when_first_asked_for() -> None:
    from stemma.tui.client import ExecutionRow, StepView
    from stemma.tui.client.views import ExecutionRow as Defined

    assert ExecutionRow is Defined
    assert StepView.__module__ == "stemma.tui.client.views"
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        _ = stemma.tui.client.Nothing  # pyright: ignore[reportAttributeAccessIssue]
