"""The step screen's Outputs tab shows the type a lazy step gave its output (``type=``).

At the smallest terminal people use (80x24) and a large one, the type is on screen, after the
output's short id and name; a name too long for the column is cut, never the type.
"""

from __future__ import annotations

import pathlib

import pytest
from textual.pilot import Pilot

from stemma.core import OUT, apply, run
from stemma.tui.app import StemmaApp
from stemma.tui.client import DashboardClient
from stemma.tui.client.views import StepView
from stemma.tui.screens import StepScreen
from stemma.tui.widgets.output_rows import OUTPUT_WIDTH, output_rows
from stemma.tui.widgets.tables import table_at

from .conftest import FilledStore, drive, until

SIZES = [(80, 24), (160, 48)]
LONG = "features/" + "very-long-name-" * 5 + "count"


def write_text(text: str, out_path: str) -> int:
    pathlib.Path(out_path).write_text(text)
    return len(text)


@pytest.fixture(scope="module")
def typed_root(tmp_path_factory: pytest.TempPathFactory) -> FilledStore:
    root = tmp_path_factory.mktemp("typed") / "store"
    typed = apply(LONG, write_text, version="v1", type="csv", text="a,b\n", out_path=OUT)
    run(typed, root=root, name="typed", backend="local-thread")
    [row] = DashboardClient(root).runs()
    return FilledStore(root=root, run_id=row.run_id)


def _outputs(app: StemmaApp) -> list[list[str]]:
    table = table_at(app.screen, "#outputs-table")
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_outputs_tab_shows_the_type_of_a_lazy_steps_output(
    typed_root: FilledStore, size: tuple[int, int]
) -> None:
    view = DashboardClient(typed_root.root).step(typed_root.run_id, 0)
    [output_id] = view.outputs["output"]

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        app.open_step(typed_root.run_id, 0)
        await until(pilot, lambda: isinstance(app.screen, StepScreen), "the step screen")
        await pilot.press("o")
        await until(pilot, lambda: len(_outputs(app)) == 2, "the output and the value")
        output, value = _outputs(app)
        assert output[1].startswith(f"{output_id[:8]} features/very-long-name-")
        assert output[1].endswith("… (csv)")
        assert len(output[1]) == OUTPUT_WIDTH
        assert value[1].endswith(" value.json")  # the value was given no type
        shown = app.export_screenshot().replace("&#160;", " ")
        assert "(csv)" in shown  # on screen, not only in the table's cells

    drive(typed_root.root, scenario, size=size)


def _view(names: dict[str, str], types: dict[str, str]) -> StepView:
    return StepView(
        run_id="r",
        number=0,
        name="s",
        operation="o",
        status="completed",
        params={},
        executions=(),
        outputs={"output": tuple(names)},
        output_names=names,
        output_types=types,
    )


def test_output_rows_name_the_type_after_the_name() -> None:
    artifact = "3f2a91c0" + "0" * 24
    rows = output_rows(_view({artifact: "feat/count"}, {artifact: "csv"}))
    assert rows == [("output", artifact, "3f2a91c0 feat/count (csv)")]


def test_output_rows_without_a_type_show_the_name_alone() -> None:
    artifact = "3f2a91c0" + "0" * 24
    rows = output_rows(_view({artifact: "data_3.csv"}, {}))
    assert rows == [("output", artifact, "3f2a91c0 data_3.csv")]
