"""How many store reads a worker's pack makes for its units' inputs, and with what content."""

from __future__ import annotations

import json
import pathlib
import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from worker_fakes import FakeStore, final, group, make_unit

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
