"""A run on a root with a damaged table: its work stays staged, and is committed once repaired."""

from __future__ import annotations

import pathlib
from pathlib import Path

import pytest
from deltalake.exceptions import DeltaError

from stemma.core import OUT, ArtifactStep, apply, run
from stemma.core.errors import StepFailedError
from stemma.core.examples import DataGenerator
from stemma.core.front.pipeline import Pipeline
from stemma.storage import executions
from stemma.storage.check_findings import Severity
from stemma.storage.damage_signs import cause
from stemma.storage.errors import DamagedTableError
from stemma.storage.root_check import check_root


def make(seed: int, out_path: str) -> dict[str, int]:
    """Write the seed; return it."""
    pathlib.Path(out_path).write_text(str(seed))
    return {"seed": seed}


def _steps(batch: str, count: int) -> list[ArtifactStep]:
    return [
        apply(name=f"t/{batch}/{i}", fn=make, version="v1", seed=i, out_path=OUT)
        for i in range(count)
    ]


def _run(root: Path, batch: str, count: int = 2) -> list[bool]:
    """Run a batch of ``count`` steps; whether each was a cache hit."""
    return [a.cached for a in run(*_steps(batch, count), root=root, backend="local-thread")]


def test_run_on_a_table_missing_a_commit_keeps_its_work_staged_then_commits_it_once(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    for step in _steps("first", 3):  # a run each: the artifact index has commits 0, 1 and 2
        run(step, root=root, backend="local-thread")
    commit = root / "delta" / "artifacts" / "index" / "_delta_log" / f"{1:020d}.json"
    backup = tmp_path / "backup.json"
    commit.rename(backup)

    with pytest.raises(StepFailedError) as failure:
        _run(root, "second")

    said = str(failure.value)
    assert "table artifacts/index of" in said
    assert f"`stemma check {root}`" in said
    assert "Nothing is lost: the work is staged" in said
    cause = failure.value.__cause__
    assert isinstance(cause, DamagedTableError)
    assert cause.staged
    assert cause.table == "artifacts/index"
    assert any((root / "staging" / ".waves").iterdir())  # the work, kept

    before = check_root(root, repair=True)  # nothing to repair safely until the file is back
    assert [f.problem.path for f in before.needs_you if f.problem.severity is Severity.DAMAGED] == [
        commit
    ]
    assert "committed" not in " ".join(f.done or "" for f in before.findings)

    backup.rename(commit)  # the documented fix: the file back from a backup
    after = check_root(root, repair=True)
    assert not after.needs_you, after.findings
    assert [f.done for f in after.repaired] == ["committed 2 staged bundles, each once"]

    rows = executions(root).get_column("step_name").to_list()
    assert sorted(rows) == ["t/first/0", "t/first/1", "t/first/2", "t/second/0", "t/second/1"]
    assert _run(root, "second") == [True, True]  # committed work is a cache hit: nothing reruns
    assert len(executions(root)) == 5
    assert check_root(root).clean


def _generate(root: Path, seed: int) -> bool:
    """One DataGenerator step of a Pipeline on ``root``; whether its unit was a cache hit."""
    pipeline = Pipeline.create("gen", root=root, backend="local-thread")
    try:
        result = pipeline.run(DataGenerator, params={"count": 2, "rows": 5, "seed": seed})
    finally:
        pipeline.finalize()
    assert result.success
    return result.cached_count == result.total_count


def test_pipeline_on_a_damaged_table_raises_it_named_then_commits_once_after_the_fix(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    for seed in (0, 1, 2):  # the artifact index: commits 0, 1 and 2
        _generate(root, seed)
    commit = root / "delta" / "artifacts" / "index" / "_delta_log" / f"{1:020d}.json"
    backup = tmp_path / "backup.json"
    commit.rename(backup)

    with pytest.raises(DamagedTableError, match="Nothing is lost") as failure:
        _generate(root, 3)
    assert failure.value.table == "artifacts/index"
    with pytest.raises(DamagedTableError, match="artifacts/index"):  # the next start says it too
        Pipeline.create("gen", root=root, backend="local-thread")

    backup.rename(commit)
    assert _generate(root, 3)  # its start committed the staged unit: a cache hit
    seeds = executions(root, step_name="example.generate").get_column("success")
    assert seeds.to_list() == [True] * 4  # one execution row per unit run, none twice
    assert check_root(root).clean


def test_a_run_on_a_table_missing_its_first_commit_names_that_commit(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _run(root, "first")
    first = root / "delta" / "artifacts" / "index" / "_delta_log" / f"{0:020d}.json"
    first.unlink()  # the commit that made the table, with its metadata (no checkpoint yet)

    with pytest.raises(StepFailedError) as failure:
        _run(root, "second")

    said = str(failure.value)
    assert f"commit {0:020d}.json of its log, the first, is missing" in said
    assert "Nothing is lost: the work is staged" in said


@pytest.mark.parametrize(
    ("said", "named"),
    [
        ("Kernel error: No table metadata or protocol found in delta log.", 0),
        ("Kernel error: File not found: /r/delta/t/_delta_log/00000000000000000000.json", 0),
        ("Kernel error: File not found: /r w é/delta/t/_delta_log/00000000000000000007.json", 7),
    ],
)
def test_each_way_delta_rs_says_a_commit_is_gone_names_that_commit(said: str, named: int) -> None:
    # delta-rs says it in the words of how it met the loss: a fresh open finds no metadata, a
    # handle that had listed the commit finds its file gone.
    first = ", the first," if named == 0 else ""
    assert cause(DeltaError(said)) == f"commit {named:020d}.json of its log{first} is missing"
