"""The artifact screen's lineage names the step and execution of every edge, self-edges too.

A copy step outputs its input's very bytes, which content addressing makes the same artifact:
the generated dataset is then "made from itself" by the copy. Two copy steps make two such
edges, different only by step and execution; both must show, and say who made them.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest
from textual.pilot import Pilot

from stemma.core.examples import DataGenerator, SlowCopy, Transform
from stemma.core.front.pipeline import Pipeline
from stemma.storage.queries import lineage
from stemma.tui.app import StemmaApp
from stemma.tui.client import ArtifactView, DashboardClient, LineageEdge
from stemma.tui.screens import ArtifactScreen
from stemma.tui.widgets.lineage_columns import LineageColumn, edge_cells, lineage_columns
from stemma.tui.widgets.tables import table_at

from .conftest import FilledStore, drive, row_count, until
from .test_snapshots import check, screen_text, settled

MASK = "<exec #>"
"""Stands in for a short execution id (fresh on every run) in a kept snapshot."""


class CopiedRoot:
    """generate (one CSV) → copy → copy again (another step) → transform the copy."""

    def __init__(self, root: Path) -> None:
        pipeline = Pipeline.create("copies", root=root, max_workers=1)
        generated = pipeline.run(DataGenerator, params={"count": 1, "rows": 3})
        copied = pipeline.run(
            SlowCopy, inputs={"dataset": generated.output("datasets")}, params={"seconds": 0}
        )
        pipeline.run(
            SlowCopy,
            inputs={"dataset": generated.output("datasets")},
            params={"seconds": 0.001},
            name="example.copy_again",
        )
        pipeline.run(Transform, inputs={"dataset": copied.output("dataset")}, params={"scale": 3.0})
        pipeline.finalize()
        self.root = root
        client = DashboardClient(root)
        [self.generated] = client.step(pipeline.run_id, 0).outputs["datasets"]
        [self.transformed] = client.step(pipeline.run_id, 3).outputs["dataset"]


@pytest.fixture(scope="module")
def copied(tmp_path_factory: pytest.TempPathFactory) -> CopiedRoot:
    return CopiedRoot(tmp_path_factory.mktemp("copies") / "store")


def _shown(app: StemmaApp) -> ArtifactView | None:
    return (
        cast("ArtifactScreen", app.screen).view if isinstance(app.screen, ArtifactScreen) else None
    )


async def _open(app: StemmaApp, pilot: Pilot[None], artifact_id: str) -> ArtifactView:
    app.open_artifact(artifact_id)
    await until(pilot, lambda: _shown(app) is not None, f"artifact {artifact_id}")
    view = _shown(app)
    assert view is not None
    await until(pilot, lambda: row_count(app, "#down") == len(view.down), "the lineage rows")
    return view


def _masked(text: str, view: ArtifactView) -> str:
    for edge in (*view.up, *view.down):
        text = text.replace(edge.short_execution, MASK)
    return text


def _truth(root: Path, artifact_id: str, direction: str) -> set[tuple[str, str, str]]:
    """(far artifact, step, execution) of each edge, as ``stemma.storage.lineage`` reads them."""
    far = "source_artifact_id" if direction == "up" else "target_artifact_id"
    frame = lineage(root, artifact_id, "up" if direction == "up" else "down", max_depth=1)
    return {
        (str(row[far]), str(row["step_name"]), str(row["execution_run_id"]))
        for row in frame.iter_rows(named=True)
    }


def _facts(edges: tuple[LineageEdge, ...]) -> set[tuple[str, str, str]]:
    return {(e.artifact_id, e.step_name, e.execution_run_id) for e in edges}


def test_client_copied_artifact_keeps_each_steps_self_edge_apart(copied: CopiedRoot) -> None:
    view = DashboardClient(copied.root).artifact(copied.generated)
    assert [(e.itself, e.step_name) for e in view.up] == [
        (True, "example.copy_again"),
        (True, "example.slow_copy"),
    ]
    assert [(e.itself, e.step_name) for e in view.down] == [
        (True, "example.copy_again"),
        (True, "example.slow_copy"),
        (False, "example.transform"),
    ]
    assert _facts(view.up) == _truth(copied.root, copied.generated, "up")
    assert _facts(view.down) == _truth(copied.root, copied.generated, "down")
    assert view.up[1].sentence("up") == (
        f"made from itself by step example.slow_copy, execution {view.up[1].short_execution}"
    )


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_artifact_screen_copied_artifact_shows_self_edges_by_step(
    copied: CopiedRoot, size: tuple[int, int]
) -> None:
    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        view = await _open(app, pilot, copied.generated)
        assert (row_count(app, "#up"), row_count(app, "#down")) == (2, 3)
        up = table_at(app.screen, "#up")
        first = [str(cell) for cell in up.get_row_at(0)]
        assert first[:2] == ["itself", _step_cell(size, "copy_again")]
        if size[0] > 80:  # at 80 the execution gives way to the names (Enter names it)
            assert first[2] == view.up[0].short_execution
        await settled(app, pilot)
        check(f"artifact_copied_{size[0]}x{size[1]}", _masked(screen_text(app), view))

    drive(copied.root, scenario, size)


def _step_cell(size: tuple[int, int], name: str) -> str:
    return f"…{name}" if size[0] == 80 else f"example.{name}"


def test_artifact_screen_enter_on_self_edge_says_who_made_it_and_stays(
    copied: CopiedRoot,
) -> None:
    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        view = await _open(app, pilot, copied.generated)
        screen = app.screen
        await pilot.press("u", "down", "enter")
        sentence = view.up[1].sentence("up")
        assert sentence.startswith("made from itself by step example.slow_copy, execution ")
        # A toast is drawn on a layer the screen's text leaves out: read the app's notices.
        notices = app._notifications  # pyright: ignore[reportPrivateUsage]
        await until(pilot, lambda: len(notices) == 1, "a notice")
        assert [notice.message for notice in notices] == [sentence]
        assert app.screen is screen
        await pilot.press("d", "down", "down", "enter")
        await until(pilot, lambda: app.screen is not screen, "the transformed artifact")
        assert cast("ArtifactScreen", app.screen).artifact_id == copied.transformed

    drive(copied.root, scenario)


def test_artifact_screen_resized_narrower_keeps_name_and_step(copied: CopiedRoot) -> None:
    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        view = await _open(app, pilot, copied.generated)
        down = table_at(app.screen, "#down")
        assert [str(c.label) for c in down.ordered_columns] == [
            "artifact",
            "step",
            "execution",
            "role",
        ]
        await pilot.resize_terminal(80, 24)
        await until(pilot, lambda: len(down.ordered_columns) == 2, "the narrow columns")
        assert [str(c.label) for c in down.ordered_columns] == ["artifact", "step"]
        assert down.row_count == 3
        transformed = view.down[2]
        # 80 columns: a short id, the name cut at its end, the step's last part
        assert [str(cell) for cell in down.get_row_at(2)] == [
            f"{transformed.artifact_id[:6]} dataset_0_sca…",
            "…transform",
        ]

    drive(copied.root, scenario, (160, 48))


def test_artifact_screen_normal_root_names_step_and_execution(filled: FilledStore) -> None:
    outputs = DashboardClient(filled.root).step(filled.run_id, 1).outputs
    artifact_id = sorted(outputs["dataset"])[0]

    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        view = await _open(app, pilot, artifact_id)
        assert _facts(view.up) == _truth(filled.root, artifact_id, "up")
        assert _facts(view.down) == _truth(filled.root, artifact_id, "down")
        assert not any(edge.itself for edge in (*view.up, *view.down))
        text = screen_text(app)
        for edge in (*view.up, *view.down):
            assert edge.name
            assert f"{edge.artifact_id[:8]} {edge.name}"[:31] in text  # cut to its column
            assert edge.short_execution in text
        assert "example.transform" in text
        assert "example.metrics" in text

    drive(filled.root, scenario, (160, 48))


@pytest.mark.parametrize(
    ("width", "keys"),
    [
        (30, ["id", "step"]),
        (38, ["id", "step"]),
        (48, ["id", "step"]),
        (78, ["id", "step", "execution", "role"]),
        (96, ["id", "step", "execution", "role", "type"]),
    ],
)
def test_lineage_columns_fill_the_width_keeping_step_and_execution(
    width: int, keys: list[str]
) -> None:
    columns = lineage_columns(width)
    assert [column.key for column in columns] == keys
    if width >= 38:
        assert sum(column.width + 2 for column in columns) == width - 2


@pytest.mark.parametrize(
    ("name", "width", "cell"),
    [
        ("example.slow_copy", 32, "example.slow_copy"),
        ("example.slow_copy", 13, "…slow_copy"),
        ("a.b.slow_copy", 11, "…slow_copy"),
        ("example.a_very_long_step_name", 10, "…a_very_l…"),
        ("undotted_long_name", 10, "undotted_…"),
    ],
)
def test_edge_cells_cut_a_long_step_name_from_the_left(name: str, width: int, cell: str) -> None:
    edge = LineageEdge(
        depth=1,
        artifact_id="ab" * 16,
        artifact_type="data",
        role="dataset",
        step_name=name,
        execution_run_id="cd" * 16,
    )
    cells = edge_cells(edge, (LineageColumn(key="step", title="step", width=width),))
    assert cells == (cell,)
    assert len(cell) <= width


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_artifact_screen_slash_filters_both_lineage_lists_and_enter_opens_the_kept_row(
    copied: CopiedRoot, size: tuple[int, int]
) -> None:
    async def scenario(app: StemmaApp, pilot: Pilot[None]) -> None:
        await _open(app, pilot, copied.generated)
        await pilot.press("slash", *"transform")
        await until(pilot, lambda: row_count(app, "#down") == 1, "the filtered made-into list")
        assert row_count(app, "#up") == 0  # both copies: neither is a transform
        assert table_at(app.screen, "#down").border_subtitle == "1 of 3"
        await pilot.press("enter", "d", "enter")  # keep the filter, go to the list, open
        await until(
            pilot,
            lambda: _shown(app) is not None and _shown(app).artifact_id == copied.transformed,  # pyright: ignore[reportOptionalMemberAccess]
            "the transformed artifact",
        )
        app.pop_screen()
        await until(pilot, lambda: row_count(app, "#down") == 1, "the filter kept")
        screen = app.screen
        await pilot.press("d", "escape")  # on the table: the first Escape clears the filter
        await until(pilot, lambda: row_count(app, "#down") == 3, "every edge back")
        assert app.screen is screen
        await pilot.press("slash", *"!copy")
        await until(pilot, lambda: row_count(app, "#down") == 1, "the inverted filter")
        assert row_count(app, "#up") == 0

    drive(copied.root, scenario, size)
