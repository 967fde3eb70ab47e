"""How many store reads a worker's pack makes for its units' inputs, and with what content."""

from __future__ import annotations

import json
import pathlib
import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import pytest
from worker_fakes import FakeStore, final, group, make_unit

from stemma.core.engine.dispatch import input_rows
from stemma.core.engine.dispatch.input_rows import SMALL_INPUT_BYTES, with_input_rows
from stemma.core.engine.worker import input_loading
from stemma.core.engine.worker.input_loading import FIRST_WINDOW, MAX_WINDOW
from stemma.core.engine.worker.worker import run_pack
from stemma.core.operations import (
    ArtifactResult,
    DataDraft,
    FinalizedArtifact,
    InputSpec,
    MetricDraft,
    OperationDefinition,
    OutputSpec,
)
from stemma.core.operations.results import ExecuteInput, PostprocessInput, PreprocessInput


class ReadCountingStore(FakeStore):
    """A fake store that remembers each ``load_artifacts`` call: (ids asked, content or not)."""

    def __init__(self, root: Path, artifacts: list[FinalizedArtifact]) -> None:
        super().__init__(root, artifacts)
        self.reads: list[tuple[int, bool]] = []

    def load_artifacts(
        self, artifact_ids: Collection[str], *, content: bool = True
    ) -> dict[str, FinalizedArtifact]:
        self.reads.append((len(artifact_ids), content))
        return super().load_artifacts(artifact_ids, content=content)


class _Seen(OperationDefinition):
    """Reports what each input looked like to ``preprocess``: content or not, and its size."""

    outputs: ClassVar = {
        "seen": OutputSpec(artifact_type="metric", infer_lineage_from={"inputs": []})
    }

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        items = inp.input_artifacts["items"]
        return {"seen": [[a.content is not None, a.size] for a in items]}

    def execute(self, inp: ExecuteInput) -> Any:
        return inp.prepared["seen"]

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        return ArtifactResult(artifacts={"seen": [MetricDraft.draft(inp.execute_result, "s")]})


class SeenDry(_Seen):
    name = "seen_dry"
    inputs: ClassVar = {"items": InputSpec(artifact_type="data", hydrate=False)}


class SeenHydrated(_Seen):
    name = "seen_hydrated"
    inputs: ClassVar = {"items": InputSpec(artifact_type="data")}


def _pack(
    tmp_path: Path, op: OperationDefinition, units: int
) -> tuple[ReadCountingStore, list[list[list[Any]]]]:
    items = [final(DataDraft.draft(f"x\n{i}\n".encode(), f"d{i}.csv")) for i in range(units)]
    store = ReadCountingStore(tmp_path, items)
    pack = [make_unit(op, tmp_path, group(items=[item])) for item in items]
    reports = run_pack(pack, store)
    assert all(r.success for r in reports), [r.error for r in reports]
    seen = [json.loads(a.content or b"") for r in store.staged for a in r.artifacts]
    return store, seen


def test_a_pack_of_dry_inputs_is_read_once_without_content(tmp_path: Path) -> None:
    store, seen = _pack(tmp_path, SeenDry(), 300)

    assert store.reads == [(300, False)]
    assert seen == [[[False, len(f"x\n{i}\n")]] for i in range(300)]


def test_a_pack_of_dry_inputs_larger_than_a_window_reads_one_window_at_a_time(
    tmp_path: Path,
) -> None:
    store, _ = _pack(tmp_path, SeenDry(), MAX_WINDOW + 3)

    assert store.reads == [(MAX_WINDOW, False), (3, False)]


def test_a_pack_of_hydrated_inputs_reads_content_starting_with_a_small_window(
    tmp_path: Path,
) -> None:
    store, seen = _pack(tmp_path, SeenHydrated(), 40)

    assert store.reads[0] == (FIRST_WINDOW, True)
    assert sum(n for n, _ in store.reads) == 40
    assert all(content for _, content in store.reads)
    assert seen == [[[True, len(f"x\n{i}\n")]] for i in range(40)]


def test_a_unit_alone_reads_its_dry_inputs_without_content(tmp_path: Path) -> None:
    store, seen = _pack(tmp_path, SeenDry(), 1)

    assert store.reads == [(1, False)]
    assert seen == [[[False, len(b"x\n0\n")]]]


def _dry_units(
    tmp_path: Path, op: OperationDefinition, units: int
) -> tuple[ReadCountingStore, list[Any]]:
    items = [final(DataDraft.draft(f"x\n{i}\n".encode(), f"d{i}.csv")) for i in range(units)]
    store = ReadCountingStore(tmp_path, items)
    return store, [make_unit(op, tmp_path, group(items=[item])) for item in items]


def test_the_orchestrator_reads_a_windows_dry_inputs_once_and_the_workers_never(
    tmp_path: Path,
) -> None:
    store, units = _dry_units(tmp_path, SeenDry(), 300)

    units = with_input_rows(store, units)
    assert store.reads == [(300, False)]  # one read for the window, without content
    for pack in (units[:1], units[1:]):  # a unit alone, and a pack of many
        reports = run_pack(pack, store)
        assert all(r.success for r in reports), [r.error for r in reports]
    assert store.reads == [(300, False)]  # no worker asked the store again
    seen = [json.loads(a.content or b"") for r in store.staged for a in r.artifacts]
    assert seen == [[[False, len(f"x\n{i}\n")]] for i in range(300)]  # as when a worker reads


def test_the_orchestrator_ships_small_inputs_content_and_the_workers_never_read(
    tmp_path: Path,
) -> None:
    store, units = _dry_units(tmp_path, SeenHydrated(), 300)

    units = with_input_rows(store, units)
    assert store.reads == [(300, False), (300, True)]  # the rows (sizes), then the contents
    for pack in (units[:1], units[1:]):
        reports = run_pack(pack, store)
        assert all(r.success for r in reports), [r.error for r in reports]
    assert store.reads == [(300, False), (300, True)]  # no worker asked the store again
    seen = [json.loads(a.content or b"") for r in store.staged for a in r.artifacts]
    assert seen == [[[True, len(f"x\n{i}\n")]] for i in range(300)]  # as when a worker reads


def test_a_unit_with_a_large_input_gets_its_row_and_its_worker_reads_only_the_content(
    tmp_path: Path,
) -> None:
    store, units = _dry_units(tmp_path, SeenHydrated(), 2)
    large = final(DataDraft.draft(b"y" * (SMALL_INPUT_BYTES + 1), "large.csv"))
    store.artifacts[large.artifact_id] = large
    units.insert(1, make_unit(SeenHydrated(), tmp_path, group(items=[large])))

    units = with_input_rows(store, units)
    assert [u.input_rows is not None for u in units] == [True, True, True]
    assert units[1].input_rows is not None
    assert units[1].input_rows[large.artifact_id].content is None  # its row, not its content
    assert store.reads == [(3, False), (2, True)]  # the large content is never read here
    reports = run_pack(units, store)
    assert all(r.success for r in reports), [r.error for r in reports]
    assert store.reads[2:] == [(1, True)]  # the worker reads the large input alone
    seen = [json.loads(a.content or b"") for r in store.staged for a in r.artifacts]
    assert seen[1] == [[True, SMALL_INPUT_BYTES + 1]]


def test_a_pack_of_large_inputs_reads_one_units_content_at_a_time_from_the_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, units = _dry_units(tmp_path, SeenHydrated(), 5)  # 4 bytes each ("x\n0\n")
    monkeypatch.setattr(input_rows, "SMALL_INPUT_BYTES", 2)  # all "large": rows only
    monkeypatch.setattr(input_loading, "WINDOW_BYTES", 6)  # a window holds one unit's

    units = with_input_rows(store, units)
    assert store.reads == [(5, False)]
    reports = run_pack(units, store)
    assert all(r.success for r in reports), [r.error for r in reports]
    assert store.reads[1:] == [(1, True)] * 5  # never two large contents in memory at once


def test_content_shipped_with_a_window_stops_at_its_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, units = _dry_units(tmp_path, SeenHydrated(), 10)  # 4 bytes each ("x\n0\n")
    monkeypatch.setattr(input_rows, "WINDOW_CONTENT_BYTES", 4 * 4)

    units = with_input_rows(store, units)
    assert [u.input_rows is not None for u in units] == [True] * 10  # every unit's rows
    assert [all(a.content is not None for a in (u.input_rows or {}).values()) for u in units] == (
        [True] * 4 + [False] * 6  # the contents up to the budget
    )
    assert store.reads == [(10, False), (4, True)]
    reports = run_pack(units, store)
    assert all(r.success for r in reports), [r.error for r in reports]
    assert sum(n for n, _ in store.reads[2:]) == 6  # the workers read the rest


def test_a_hydrated_input_missing_from_the_store_fails_its_unit_as_a_worker_read_would(
    tmp_path: Path,
) -> None:
    store, units = _dry_units(tmp_path, SeenHydrated(), 2)
    gone = final(DataDraft.draft(b"never stored\n", "gone.csv"))
    units.append(make_unit(SeenHydrated(), tmp_path, group(items=[gone])))

    units = with_input_rows(store, units)
    assert [u.input_rows is not None for u in units] == [True, True, False]
    reports = run_pack(units, store)
    assert [r.success for r in reports] == [True, True, False]
    assert f"1 input artifacts are not in the store: {gone.artifact_id}" in (reports[2].error or "")


def test_a_failed_content_read_leaves_the_hydrating_units_to_their_workers(
    tmp_path: Path,
) -> None:
    store, units = _dry_units(tmp_path, SeenHydrated(), 2)

    class NoContent(ReadCountingStore):
        def load_artifacts(
            self, artifact_ids: Collection[str], *, content: bool = True
        ) -> dict[str, FinalizedArtifact]:
            if content:
                raise OSError("the metrics table cannot be read")
            return super().load_artifacts(artifact_ids, content=content)

    shipped = with_input_rows(NoContent(tmp_path, list(store.artifacts.values())), units)
    rows = [u.input_rows or {} for u in shipped]
    assert all(r and all(a.content is None for a in r.values()) for r in rows)  # rows only
    reports = run_pack(shipped, store)
    assert all(r.success for r in reports), [r.error for r in reports]
    assert store.reads == [(2, True)]  # the workers read the contents


def test_a_dry_input_missing_from_the_store_fails_its_unit_as_a_worker_read_would(
    tmp_path: Path,
) -> None:
    store, units = _dry_units(tmp_path, SeenDry(), 2)
    gone = final(DataDraft.draft(b"never stored\n", "gone.csv"))
    units.append(make_unit(SeenDry(), tmp_path, group(items=[gone])))

    reports = run_pack(with_input_rows(store, units), store)
    assert [r.success for r in reports] == [True, True, False]
    assert f"1 input artifacts are not in the store: {gone.artifact_id}" in (reports[2].error or "")


def test_a_failed_read_leaves_the_inputs_to_the_workers(tmp_path: Path) -> None:
    store, units = _dry_units(tmp_path, SeenDry(), 2)

    class Unreadable(ReadCountingStore):
        def load_artifacts(
            self, artifact_ids: Collection[str], *, content: bool = True
        ) -> dict[str, FinalizedArtifact]:
            raise OSError("the artifact index cannot be read")

    assert with_input_rows(Unreadable(tmp_path, []), units) == units
    reports = run_pack(units, store)  # the workers read them as before
    assert all(r.success for r in reports)
    assert store.reads == [(2, False)]
