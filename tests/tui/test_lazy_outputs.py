"""A lazy step's artifacts on the step screen's Outputs tab: its output and its value, openable.

Its output is named by its step, and the file its first step read ends the lineage up.
"""

from __future__ import annotations

import pathlib

import pytest
from textual.pilot import Pilot

from stemma.core import OUT, apply, run
from stemma.tui.app import StemmaApp
from stemma.tui.client import DashboardClient
from stemma.tui.screens import ArtifactScreen, StepScreen
from stemma.tui.widgets.tables import table_at

from .conftest import FilledStore, drive, until

SIZES = [(80, 24), (160, 48)]


def write(source: str, out_path: str) -> int:
    text = pathlib.Path(source).read_text()
    pathlib.Path(out_path).write_text(text)
    return len(text)


def shout(source: str, out_path: str) -> dict[str, int]:
    loud = pathlib.Path(source).read_text().upper()
    pathlib.Path(out_path).write_text(loud)
    return {"letters": len(loud)}


@pytest.fixture(scope="module")
def lazy_root(tmp_path_factory: pytest.TempPathFactory) -> FilledStore:
    folder = tmp_path_factory.mktemp("lazy")
    root, raw = folder / "store", folder / "hello.txt"
    raw.write_text("hello")
    said = apply(name="words/said", fn=write, version="v1", source=raw, out_path=OUT)
    loud = apply(name="words/loud", fn=shout, version="v1", source=said, out_path=OUT)
    run(loud, root=root, name="words", max_workers=1)
    [row] = DashboardClient(root).runs()
    return FilledStore(root=root, run_id=row.run_id)


def _number(store: FilledStore, name: str) -> int:
    steps = DashboardClient(store.root).run(store.run_id).steps
    [number] = [step.number for step in steps if step.name == name]
    return number


def _outputs(app: StemmaApp) -> list[list[str]]:
    table = table_at(app.screen, "#outputs-table")
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


def test_a_lazy_steps_outputs_are_its_output_file_and_its_value(lazy_root: FilledStore) -> None:
    view = DashboardClient(lazy_root.root).step(lazy_root.run_id, _number(lazy_root, "words/loud"))
    assert sorted(view.outputs) == ["output", "value"]
    assert all(len(ids) == 1 for ids in view.outputs.values())


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_outputs_tab_of_a_lazy_step_lists_its_artifacts_and_opens_them(
    lazy_root: FilledStore, size: tuple[int, int]
) -> None:
    number = _number(lazy_root, "words/loud")
    view = DashboardClient(lazy_root.root).step(lazy_root.run_id, number)
    [output_id], [value_id] = view.outputs["output"], view.outputs["value"]

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        app.open_step(lazy_root.run_id, number)
        await until(pilot, lambda: isinstance(app.screen, StepScreen), "the step screen")
        await pilot.pause()
        await until(pilot, lambda: len(_outputs(app)) == 2, "the output and the value")
        rows = _outputs(app)
        assert [row[0] for row in rows] == ["output", "value"]
        assert rows[0][1] == f"{output_id[:8]} words/loud"  # named by its step, not v1-<key>
        assert rows[1][1] == f"{value_id[:8]} value.json"
        await pilot.press("o", "down", "enter")  # the value
        await until(pilot, lambda: isinstance(app.screen, ArtifactScreen), "the value artifact")
        screen = app.screen
        assert isinstance(screen, ArtifactScreen)
        assert screen.artifact_id == value_id
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, StepScreen), "back on the step")
        await pilot.pause()
        await pilot.press("o", "up", "enter")  # the output file
        await until(pilot, lambda: isinstance(app.screen, ArtifactScreen), "the output artifact")
        output = app.screen
        assert isinstance(output, ArtifactScreen)
        assert output.artifact_id == output_id
        await until(pilot, lambda: table_at(output, "#up").row_count == 1, "made from words/said")

    drive(lazy_root.root, scenario, size=size)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_first_lazy_steps_output_shows_the_file_it_read_up_its_lineage(
    lazy_root: FilledStore, size: tuple[int, int]
) -> None:
    number = _number(lazy_root, "words/said")
    view = DashboardClient(lazy_root.root).step(lazy_root.run_id, number)
    [output_id] = view.outputs["output"]
    raw = str((lazy_root.root.parent / "hello.txt").absolute())

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        app.open_artifact(output_id)
        await until(pilot, lambda: isinstance(app.screen, ArtifactScreen), "the artifact")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ArtifactScreen)
        up = table_at(screen, "#up")
        await until(pilot, lambda: up.row_count == 1, "the file it was made from")
        assert screen.view is not None
        [edge] = screen.view.up
        assert (edge.artifact_type, edge.name, edge.role) == ("input_file", raw, "source")
        cells = " ".join(str(cell) for cell in up.get_row_at(0))
        assert edge.artifact_id[:6] in cells
        await pilot.press("u", "enter")  # a file has no artifact screen: it is said instead
        await pilot.pause()
        assert app.screen is screen
        shown = [n.message for n in app._notifications]  # pyright: ignore[reportPrivateUsage]
        assert any(f"made from input file {raw}" in message for message in shown), shown

    drive(lazy_root.root, scenario, size=size)
