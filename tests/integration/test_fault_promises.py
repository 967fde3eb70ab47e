"""The promises under faults (docs/concepts/store.md), each proven on real processes and tables.

``kill -9`` of the orchestrator at many points of a pipeline, several pipelines writing one
root at once, a corrupt staged file, and staged files that appear late, as on a slow shared
filesystem.
"""

from __future__ import annotations

import json
import pathlib
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

import polars as pl
import pytest
from deltalake import DeltaTable

from stemma.core.execution_records import StepOutputs
from stemma.storage import DeltaStore
from stemma.storage.staging_checks import STAGING_TIMEOUT_ENV, ProblemKind, WaveReport

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))
from fault_pipeline import run_pipeline  # noqa: E402

Outputs = dict[str, list[str]]

_WAVE = "stemma.storage.waves"
_CLAIM = "stemma.storage.wave_claim"
_STORE = "stemma.storage.delta_store:DeltaStore"
_BACKEND = "stemma.core.backends.local:LocalBackend"
# (target, nth call, before/after). The pipeline's three steps commit one wave each: step 0's
# is one bundle (5 tables), step 1's three bundles (6 tables: its lineage too), step 2's three.
KILL_POINTS: dict[str, tuple[str, int, str]] = {
    "before-the-first-lookup": (f"{_STORE}.completed_steps", 1, "before"),
    "after-the-first-running-event": (f"{_STORE}.record_events", 1, "after"),
    "while-workers-run-and-stage": (f"{_BACKEND}.submit_wave", 1, "after"),
    "staged-before-the-commit": (f"{_STORE}.commit_wave", 1, "before"),
    "committed-before-the-final-event": (f"{_STORE}.record_events", 2, "before"),
    "mid-claim-one-bundle-moved": (f"{_CLAIM}:bundle_lock", 3, "before"),
    "outputs-staged-wave-unsealed": (f"{_CLAIM}:write_durably", 2, "after"),
    "sealed-before-any-append": (f"{_WAVE}:claim", 2, "after"),
    "after-the-first-append": ("stemma.storage.commit:append_rows", 6, "after"),
    "between-appends": ("stemma.storage.commit:append_rows", 8, "after"),
    "all-appended-not-retired": ("stemma.storage.commit:append_rows", 11, "after"),
    "retired-before-the-final-event": (f"{_WAVE}:retire_bundle", 2, "after"),
    "resolving-the-last-steps-inputs": (f"{_STORE}.step_outputs", 3, "before"),
    "inside-the-last-wave": ("stemma.storage.commit:append_rows", 14, "after"),
    "before-the-last-final-event": (f"{_STORE}.record_events", 6, "before"),
}


def delta_tables(root: pathlib.Path) -> dict[str, pl.DataFrame]:
    """Every Delta table under the root, by its path under ``delta/``, read with deltalake."""
    found: dict[str, pl.DataFrame] = {}
    for log in sorted((root / "delta").glob("*/*/_delta_log")):
        name = log.parent.relative_to(root / "delta").as_posix()
        found[name] = pl.DataFrame(DeltaTable(str(log.parent)).to_pyarrow_table())
    return found


def duplicates(name: str, frame: pl.DataFrame) -> int:
    """How many rows of a table repeat a key that must be unique in it."""
    if name.startswith("artifacts/"):
        key = ["artifact_id"]
    elif name == "orchestration/executions":
        key = ["execution_run_id"]
    elif name == "orchestration/steps":
        key = ["step_run_id", "status"]
    else:  # edges and step outputs: a whole row repeated
        key = frame.columns
    return frame.height - frame.select(key).unique().height


def rows(frame: pl.DataFrame) -> set[str]:
    """Each row of a table as a canonical JSON line."""
    return {json.dumps(row, sort_keys=True, default=str) for row in frame.iter_rows(named=True)}


def assert_no_duplicates(root: pathlib.Path) -> dict[str, pl.DataFrame]:
    tables = delta_tables(root)
    assert {name: duplicates(name, frame) for name, frame in tables.items()} == dict.fromkeys(
        tables, 0
    )
    return tables


def staging_is_empty(root: pathlib.Path) -> bool:
    """No bundle, wave or quarantined bundle is left under ``staging/``."""
    staging = root / "staging"
    bundles = [path for path in staging.glob("*/*/*/*") if path.parts[-4] != ".retired"]
    waves = list(staging.glob(".waves/*"))
    return not bundles and not waves and not (staging / ".quarantine").exists()


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> tuple[Outputs, set[str]]:
    root = tmp_path_factory.mktemp("clean") / "root"
    outputs = run_pipeline(str(root))
    index = delta_tables(root)["artifacts/index"]
    return outputs, set(index.get_column("artifact_id").to_list())


@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_kill_9_of_the_orchestrator_then_restart_recovers_loses_and_duplicates_nothing(
    tmp_path: pathlib.Path, clean: tuple[Outputs, set[str]], point: str
) -> None:
    root = tmp_path / "root"
    target, nth, when = KILL_POINTS[point]
    killed = subprocess.run(
        [sys.executable, str(HERE / "fault_pipeline.py"), str(root), target, str(nth), when],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    committed = assert_no_duplicates(root)

    outputs = run_pipeline(str(root))  # Pipeline.create recovers, then the same pipeline

    expected_outputs, expected_ids = clean
    assert outputs == expected_outputs
    after = assert_no_duplicates(root)
    for name, frame in committed.items():
        assert rows(frame) <= rows(after[name]), f"{name} lost committed rows"
    assert set(after["artifacts/index"].get_column("artifact_id").to_list()) == expected_ids
    executions = after["orchestration/executions"]
    assert executions.filter(pl.col("success")).select("execution_spec_id").n_unique() == 7
    assert staging_is_empty(root)


# ---------------------------------------------------------------- several pipelines, one root


@pytest.mark.parametrize(
    "variants",
    [("shared", "other-scale"), ("shared", "shared-again", "other-seed", "other-scale")],
    ids=["two", "four"],
)
def test_pipelines_writing_one_root_at_once_all_succeed_and_every_commit_lands_once(
    tmp_path: pathlib.Path, clean: tuple[Outputs, set[str]], variants: tuple[str, ...]
) -> None:
    root = tmp_path / "root"
    script = str(HERE / "fault_pipeline.py")
    children = [
        subprocess.Popen(
            [sys.executable, script, str(root), "--variant", variant],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for variant in variants
    ]
    finished = [child.communicate(timeout=280) for child in children]

    assert [child.returncode for child in children] == [0] * len(variants), [
        err[-2000:] for _, err in finished
    ]
    outputs = dict(zip(variants, (json.loads(out) for out, _ in finished), strict=True))
    assert outputs["shared"] == clean[0]  # as if it had run alone
    assert outputs["other-scale"]["generate"] == clean[0]["generate"]
    assert outputs["other-scale"]["transform"] != clean[0]["transform"]
    tables = assert_no_duplicates(root)
    offered = {a for result in outputs.values() for ids in result.values() for a in ids}
    assert offered <= set(tables["artifacts/index"].get_column("artifact_id").to_list())
    executions = tables["orchestration/executions"].filter(pl.col("success"))
    assert executions.get_column("execution_spec_id").is_unique().all()  # each key ran once
    completed = tables["orchestration/steps"].filter(pl.col("status") == "completed")
    assert completed.group_by("pipeline_run_id").len().get_column("len").to_list() == [3] * len(
        variants
    )
    assert staging_is_empty(root)


# ---------------------------------------------------------------- damaged and late staged files

_TRANSFORM = "1_example.transform"


def _content_file(bundle: pathlib.Path) -> pathlib.Path:
    """A staged file of the bundle other than its sentinel."""
    return next(f for f in sorted(bundle.glob("*.parquet")) if f.name != "executions.parquet")


def _on_transform_wave(
    monkeypatch: pytest.MonkeyPatch, damage: Any
) -> list[tuple[list[pathlib.Path], WaveReport]]:
    """Call ``damage(bundles)`` just before the transform step's wave is committed."""
    seen: list[tuple[list[pathlib.Path], WaveReport]] = []
    original = DeltaStore.commit_wave

    def commit_wave(
        self: DeltaStore,
        bundles: Sequence[pathlib.Path],
        *,
        step_outputs: StepOutputs | None = None,
    ) -> WaveReport:
        if any(_TRANSFORM in str(b) for b in bundles) and not seen:
            damage(sorted(bundles))
        report = original(self, bundles, step_outputs=step_outputs)
        if any(_TRANSFORM in str(b) for b in bundles):
            seen.append((sorted(bundles), report))
        return report

    monkeypatch.setattr(DeltaStore, "commit_wave", commit_wave)
    return seen


def _transform_event_problems(root: pathlib.Path) -> tuple[int, list[str]]:
    """The transform step's final event: its failed count and the bundles its wave left out."""
    (final,) = [
        e
        for e in DeltaStore(root).step_events()
        if e.step_name == "example.transform" and e.status != "running"
    ]
    problems: list[dict[str, Any]] = final.metadata.get("staging_problems", [])
    return final.failed_count, [str(p["bundle"]) for p in problems]


def _transform_successes(root: pathlib.Path) -> int:
    executions = delta_tables(root)["orchestration/executions"]
    return executions.filter(pl.col("success") & (pl.col("step_number") == 1)).height


def test_pipeline_with_a_truncated_staged_file_quarantines_that_bundle_and_commits_the_rest(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"

    def truncate(bundles: list[pathlib.Path]) -> None:
        file = _content_file(bundles[0])
        file.write_bytes(file.read_bytes()[:40])

    seen = _on_transform_wave(monkeypatch, truncate)

    outputs = run_pipeline(str(root), must_succeed=False)  # one unit lost in staging

    ((bundles, report),) = seen
    (problem,) = report.problems
    assert (problem.kind, problem.bundle, problem.files) == (
        ProblemKind.CORRUPT,
        bundles[0],
        (_content_file(root / "staging" / ".quarantine" / _TRANSFORM / bundles[0].name).name,),
    )
    assert report.committed == 2
    note = root / "logs" / "failures" / f"step_{_TRANSFORM}" / f"{bundles[0].name}.staging.log"
    assert str(bundles[0]) in note.read_text()
    assert problem.files[0] in note.read_text()
    assert (len(outputs["transform"]), len(outputs["score"])) == (2, 2)  # the rest went on
    assert _transform_successes(root) == 2
    assert _transform_event_problems(root) == (1, [str(bundles[0])])  # no cache hit next time
    assert_no_duplicates(root)


def test_pipeline_waits_for_a_staged_file_that_appears_late(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, clean: tuple[Outputs, set[str]]
) -> None:
    root = tmp_path / "root"
    monkeypatch.setenv(STAGING_TIMEOUT_ENV, "60")
    threads: list[threading.Thread] = []

    def hide_for_a_while(bundles: list[pathlib.Path]) -> None:
        file = _content_file(bundles[1])
        hidden = file.rename(tmp_path / "hidden")

        def reappear() -> None:
            time.sleep(1.0)
            hidden.rename(file)

        threads.append(threading.Thread(target=reappear))
        threads[0].start()

    seen = _on_transform_wave(monkeypatch, hide_for_a_while)

    outputs = run_pipeline(str(root))
    threads[0].join()

    ((_, report),) = seen
    assert report.problems == ()
    assert outputs == clean[0]
    assert _transform_successes(root) == 3


def test_pipeline_gives_up_on_a_staged_file_at_the_timeout_and_the_next_start_commits_it(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    monkeypatch.setenv(STAGING_TIMEOUT_ENV, "1")
    moved: list[tuple[pathlib.Path, pathlib.Path]] = []

    def hide(bundles: list[pathlib.Path]) -> None:
        file = _content_file(bundles[2])
        moved.append((file, file.rename(tmp_path / "hidden")))

    seen = _on_transform_wave(monkeypatch, hide)

    started = time.monotonic()
    outputs = run_pipeline(str(root), must_succeed=False)  # one unit lost in staging

    assert time.monotonic() - started < 120
    ((bundles, report),) = seen
    (problem,) = report.problems
    (file, hidden) = moved[0]
    assert (problem.kind, problem.bundle, problem.files) == (
        ProblemKind.MISSING,
        bundles[2],
        (file.name,),
    )
    note = root / "logs" / "failures" / f"step_{_TRANSFORM}" / f"{bundles[2].name}.staging.log"
    assert file.name in note.read_text()
    assert len(outputs["transform"]) == 2
    assert bundles[2].is_dir()  # left in staging for the next start
    assert _transform_event_problems(root) == (1, [str(bundles[2])])

    hidden.rename(file)  # the filesystem catches up
    assert DeltaStore(root).recover() == 1
    assert _transform_successes(root) == 3
    assert staging_is_empty(root)
    assert_no_duplicates(root)
