"""The step screen's error column shows the exception's line, not the traceback's header.

The ``filled`` root's ``example.fail`` step really raised ``ValueError: refusing
dataset_1.csv`` in one unit, so its recorded error is a whole traceback.
"""

from __future__ import annotations

from textual.pilot import Pilot

from stemma.core.runs.error_lines import TRACEBACK_HEADER
from stemma.tui.app import StemmaApp
from stemma.tui.client import DashboardClient
from stemma.tui.screens import StepScreen
from stemma.tui.widgets.tables import table_at

from .conftest import FilledStore, drive, row_count, until
from .test_snapshots import screen_text

FAIL_STEP = 3


def test_step_screen_error_column_shows_the_exception_line(filled: FilledStore) -> None:
    view = DashboardClient(filled.root).step(filled.run_id, FAIL_STEP)
    [failed] = [e for e in view.executions if not e.success]
    assert failed.error.startswith(TRACEBACK_HEADER)  # what the column used to show

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        app.open_step(filled.run_id, FAIL_STEP)
        await until(pilot, lambda: isinstance(app.screen, StepScreen), "the step")
        executions = len(view.executions)
        await until(pilot, lambda: row_count(app, "#executions-table") == executions, "rows")
        table = table_at(app.screen, "#executions-table")
        first = [str(cell) for cell in table.get_row_at(0)]  # failures come first
        assert first[0] == "failed"
        assert first[-1] == "ValueError: refusing dataset_1.csv"
        assert "Traceback" not in screen_text(app)

    drive(filled.root, scenario, (160, 48))
