"""A pack's units start in a spare sandbox and get their own only when something may use it.

Through ``run_pack`` (what a worker runs) with real files: what an operation sees, what its
record keeps, what the dashboard finds under ``working/`` while it runs, and what is left.
"""

import copy
import dataclasses
import json
import os
import pathlib
import pickle
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from worker_fakes import FakeStore, WtScale, csv_bytes, final, group, make_unit, sandbox_of

from stemma.core.engine.worker.spare_sandboxes import PLACE_AFTER_SECONDS
from stemma.core.engine.worker.worker import run_pack
from stemma.core.operations import (
    ArtifactResult,
    DataDraft,
    ExecuteInput,
    InputSpec,
    MetricDraft,
    OperationDefinition,
    OutputSpec,
    PostprocessInput,
    PreprocessInput,
)
from stemma.core.operations.pairing import GroupBy


class Announce(OperationDefinition):
    """Prints, never reads a sandbox path, and returns a metric naming its input."""

    name = "announce"
    inputs: ClassVar = {"item": InputSpec(artifact_type="any", hydrate=False)}
    outputs: ClassVar = {
        "said": OutputSpec(artifact_type="metric", infer_lineage_from={"inputs": ["item"]})
    }
    group_by = GroupBy.ZIP

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        return {}

    def execute(self, inp: ExecuteInput) -> Any:
        print(f"hello from {os.getpid()}", flush=True)
        return None

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        assert inp.files == []
        return ArtifactResult(artifacts={"said": [MetricDraft.draft({"ok": 1}, "item_said.json")]})


class WriteAndList(OperationDefinition):
    """Writes a file into its execute folder and reports what its sandbox held."""

    name = "write_and_list"
    inputs: ClassVar = {"item": InputSpec(artifact_type="any", hydrate=False)}
    outputs: ClassVar = {
        "data": OutputSpec(artifact_type="data", infer_lineage_from={"inputs": ["item"]})
    }
    group_by = GroupBy.ZIP

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        sandbox = inp.sandbox_dir.parent
        return {"seen": sorted(p.name for p in sandbox.iterdir()), "root": str(sandbox)}

    def execute(self, inp: ExecuteInput) -> Any:
        assert not any(inp.execute_dir.iterdir())  # nothing of the unit before
        (inp.execute_dir / "item_out.txt").write_text(inp.prepared["root"])
        return inp.prepared["seen"]

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        drafts = [DataDraft.draft(p.read_bytes(), p.name) for p in inp.files]
        return ArtifactResult(artifacts={"data": drafts}, metadata={"seen": inp.execute_result})


class CopiesItsInputs(OperationDefinition):
    """Pickles, deep-copies and replaces what it is given, as one handing it on would."""

    name = "copies_its_inputs"
    inputs: ClassVar = {"item": InputSpec(artifact_type="any", hydrate=False)}
    outputs: ClassVar = {
        "data": OutputSpec(artifact_type="data", infer_lineage_from={"inputs": ["item"]})
    }
    group_by = GroupBy.ZIP

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        return {"where": "here"}

    def execute(self, inp: ExecuteInput) -> Any:
        sent = pickle.loads(pickle.dumps(inp))
        assert type(sent) is ExecuteInput
        assert sent == copy.deepcopy(inp) == inp
        changed = dataclasses.replace(inp, prepared={"where": "there"})
        assert isinstance(changed, ExecuteInput)
        assert (changed.execute_dir, changed.prepared) == (inp.execute_dir, {"where": "there"})
        (sent.execute_dir / "item_out.txt").write_text(changed.prepared["where"])

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        assert type(copy.copy(inp)) is PostprocessInput
        drafts = [DataDraft.draft(p.read_bytes(), p.name) for p in inp.files]
        return ArtifactResult(artifacts={"data": drafts})


class SlowPrinter(OperationDefinition):
    """Prints, then runs longer than the placing delay without reading a sandbox path."""

    name = "slow_printer"
    inputs: ClassVar = {"item": InputSpec(artifact_type="any", hydrate=False)}
    group_by = GroupBy.ZIP

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        return {}

    def execute(self, inp: ExecuteInput) -> Any:
        print("still working", flush=True)
        time.sleep(PLACE_AFTER_SECONDS + 1.5)


def _items(count: int) -> list[Any]:
    return [final(MetricDraft.draft({"i": i}, f"item{i}.json")) for i in range(count)]


def _units(op: OperationDefinition, root: Path, items: list[Any]) -> list[Any]:
    return [make_unit(op, root, group(item=[item])) for item in items]


def _all_below(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


def test_units_that_never_use_their_sandbox_keep_their_output_and_leave_nothing(
    tmp_path: Path,
) -> None:
    root = tmp_path / "a root with spaces"
    items = _items(5)
    store = FakeStore(root, items)
    reports = run_pack(_units(Announce(), root, items), store)
    assert all(r.success for r in reports)
    assert [r.tool_output for r in store.staged] == [f"hello from {os.getpid()}"] * 5
    assert _all_below(root / "working") == []  # no sandbox, spare or empty {ab}/{cd} folder


def test_a_unit_that_reads_a_sandbox_path_gets_its_own_sandbox_as_made(tmp_path: Path) -> None:
    items = _items(3)
    store = FakeStore(tmp_path, items)
    reports = run_pack(_units(WriteAndList(), tmp_path, items), store)
    assert all(r.success for r in reports), [r.error for r in store.staged]
    for record in store.staged:
        assert record.metadata["seen"] == [
            "execute",
            "materialized_inputs",
            "postprocess",
            "preprocess",
            "tool_output.log",
        ]
        (out,) = record.artifacts
        own = sandbox_of(tmp_path, 1, "write_and_list", record.execution_run_id)
        assert out.content == str(own).encode()  # the unit's own path, by its execution id
    assert _all_below(tmp_path / "working") == []


def test_a_unit_with_inputs_as_files_runs_in_its_own_sandbox(tmp_path: Path) -> None:
    sources = [final(DataDraft.draft(csv_bytes([(i, 1)]), f"design_{i}.csv")) for i in (1, 2)]
    store = FakeStore(tmp_path, sources)
    units = [make_unit(WtScale(), tmp_path, group(data=[source])) for source in sources]
    reports = run_pack(units, store)
    assert all(r.success for r in reports), [r.error for r in store.staged]
    assert [a.content for r in store.staged for a in r.artifacts] == [
        csv_bytes([(1, 2)]),
        csv_bytes([(2, 2)]),
    ]
    assert _all_below(tmp_path / "working") == []


def test_inputs_pickled_copied_or_replaced_are_plain_and_point_at_the_placed_sandbox(
    tmp_path: Path,
) -> None:
    items = _items(2)
    store = FakeStore(tmp_path, items)
    reports = run_pack(_units(CopiesItsInputs(), tmp_path, items), store)
    assert all(r.success for r in reports), [r.error for r in store.staged]
    assert [a.content for r in store.staged for a in r.artifacts] == [b"there", b"there"]
    assert _all_below(tmp_path / "working") == []


def test_a_long_unit_is_moved_to_its_own_path_where_the_dashboard_looks(tmp_path: Path) -> None:
    items = _items(1)
    store = FakeStore(tmp_path, items)
    step = tmp_path / "working" / "1_slow_printer"
    seen: list[tuple[Path, str, float]] = []

    def look() -> None:  # as the dashboard does: {ab}/{cd}/{execution}/tool_output.log
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not seen:
            for log in step.glob("*/*/*/tool_output.log"):
                try:
                    seen.append((log, log.read_text(), log.parent.stat().st_mtime))
                except OSError:
                    continue
            time.sleep(0.05)

    watcher = threading.Thread(target=look)
    started = time.time()
    watcher.start()
    [report] = run_pack(_units(SlowPrinter(), tmp_path, items), store)
    watcher.join()
    assert report.success
    [(log, text, dated)] = seen[:1]
    assert log.parent.name == store.record.execution_run_id
    assert text == "still working\n"  # what it printed before it was moved
    assert abs(dated - started) < 1.0  # dated by the unit's start, not by the move
    assert store.record.tool_output == "still working"
    assert _all_below(tmp_path / "working") == []


def test_preserve_working_keeps_every_unit_s_own_sandbox(tmp_path: Path) -> None:
    items = _items(2)
    store = FakeStore(tmp_path, items)
    units = [make_unit(Announce(), tmp_path, group(item=[i]), preserve_working=True) for i in items]
    run_pack(units, store)
    for record in store.staged:
        sandbox = sandbox_of(tmp_path, 1, "announce", record.execution_run_id)
        assert (sandbox / "tool_output.log").read_text() == f"hello from {os.getpid()}\n"
        assert (sandbox / "execute").is_dir()


def test_workers_starting_and_ending_packs_side_by_side_never_trip_on_each_other(
    tmp_path: Path,
) -> None:
    # Each pack makes its spare's folders and removes those it leaves empty when it ends: two
    # workers doing so at once, pack after pack, on one step's folders.
    items = _items(4)
    store = FakeStore(tmp_path, items)
    failures: list[str] = []

    def worker() -> None:
        for _ in range(150):
            for report in run_pack(_units(WriteAndList(), tmp_path, items[:1]), store):
                if not report.success:
                    failures.append(str(report.error))

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert _all_below(tmp_path / "working") == []


class ReadsContent(OperationDefinition):
    """Reads its input's content in memory; reports what its materialized inputs folder held."""

    name = "reads_content"
    inputs: ClassVar = {"item": InputSpec(artifact_type="any")}
    outputs: ClassVar = {
        "seen": OutputSpec(artifact_type="metric", infer_lineage_from={"inputs": ["item"]})
    }
    group_by = GroupBy.ZIP
    read_paths: ClassVar = False

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        (item,) = inp.input_artifacts["item"]
        paths = inp.materialized_paths["item"] if self.read_paths else []
        return {"i": json.loads(item.content or b"{}")["i"], "paths": [str(p) for p in paths]}

    def execute(self, inp: ExecuteInput) -> Any:
        folder = inp.execute_dir.parent / "materialized_inputs"  # (places the sandbox)
        return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        seen = {"files": inp.execute_result}
        return ArtifactResult(artifacts={"seen": [MetricDraft.draft(seen, "item_seen.json")]})


class ReadsPaths(ReadsContent):
    name = "reads_paths"
    read_paths: ClassVar = True


def test_inputs_are_written_as_files_only_when_the_unit_asks_for_their_paths(
    tmp_path: Path,
) -> None:
    # A unit reading its input's content never pays for a file per input and a sandbox to
    # hold it (issue 34: that was half of such a unit's time); one reading the paths gets them.
    items = _items(2)
    store = FakeStore(tmp_path, items)
    reports = run_pack(_units(ReadsContent(), tmp_path, items), store)
    reports += run_pack(_units(ReadsPaths(), tmp_path, items), store)
    assert all(r.success for r in reports), [r.error for r in store.staged]
    seen = [json.loads(a.content or b"") for r in store.staged for a in r.artifacts]
    assert seen[:2] == [{"files": []}, {"files": []}]
    assert seen[2:] == [
        {"files": ["item", "item/item0.json"]},
        {"files": ["item", "item/item1.json"]},
    ]
    assert _all_below(tmp_path / "working") == []


class PrintsByItem(OperationDefinition):
    """What it prints, and how, depends on its input's number: the pack's units differ."""

    name = "prints_by_item"
    inputs: ClassVar = {"item": InputSpec(artifact_type="any")}
    group_by = GroupBy.ZIP

    def preprocess(self, inp: PreprocessInput) -> dict[str, Any]:
        (item,) = inp.input_artifacts["item"]
        return {"i": json.loads(item.content or b"{}")["i"]}

    def execute(self, inp: ExecuteInput) -> Any:
        i = inp.prepared["i"]
        kind = i % 4
        if kind == 1:  # two lines, one by a subprocess writing to the inherited descriptor
            print(f"unit {i} says", flush=True)
            subprocess.run(["echo", f"unit {i} again"], check=True)
        elif kind == 2:  # closes sys.stdout (the next unit still has its own)
            print(f"unit {i} closes", flush=True)
            sys.stdout.close()
        elif kind == 3:  # reads a sandbox path (moved to its own path), then prints
            assert inp.execute_dir.is_dir()
            print(f"unit {i} placed", flush=True)


def _open_descriptors() -> set[str]:
    """What this process's descriptors point at (the listing's own is gone by the readlink)."""
    found: set[str] = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            found.add(os.readlink(f"/proc/self/fd/{fd}"))
        except FileNotFoundError:
            continue
    return found


def test_a_pack_s_units_each_keep_only_their_own_output_and_no_log_stays_open(
    tmp_path: Path,
) -> None:
    # A spare's log stays open from unit to unit of a pack (issue 34): what one unit printed
    # must never reach the next one's tail, however it printed or left its streams.
    items = _items(12)
    store = FakeStore(tmp_path, items)
    before = _open_descriptors()
    reports = run_pack(_units(PrintsByItem(), tmp_path, items), store)
    assert all(r.success for r in reports), [r.error for r in store.staged]
    expected = {
        0: None,
        1: "unit {i} says\nunit {i} again",
        2: "unit {i} closes",
        3: "unit {i} placed",
    }
    said = [(expected[i % 4] or "").format(i=i) or None for i in range(12)]
    assert [r.tool_output for r in store.staged] == said
    assert not [p for p in _open_descriptors() - before if "tool_output" in p]
    assert _all_below(tmp_path / "working") == []
