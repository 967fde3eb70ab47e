from __future__ import annotations

from pathlib import Path

from stemma.storage import DeltaStore, artifacts, executions, lineage, steps

from .conftest import FunctionStep, FunctionStepFactory, commit_function_step


def _chain(
    store: DeltaStore, make_step: FunctionStepFactory
) -> tuple[FunctionStep, FunctionStep, FunctionStep]:
    """Three steps, each reading the previous one's output: prepare -> train -> evaluate."""
    prepare = make_step("prepare", value=1)
    train = make_step("train", value=2, inputs={"data": (prepare.output.artifact_id,)})
    evaluate = make_step("evaluate", value=3, inputs={"model": (train.output.artifact_id,)})
    for step in (prepare, train, evaluate):
        commit_function_step(store, step)
    return prepare, train, evaluate


def _out(step: FunctionStep) -> str:
    return step.output.artifact_id


def _edges(frame_rows: list[dict[str, object]]) -> set[tuple[object, object, object]]:
    return {
        (row["source_artifact_id"], row["target_artifact_id"], row["depth"]) for row in frame_rows
    }


def test_lineage_up_walks_to_every_ancestor_with_depth(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    prepare, train, evaluate = _chain(store, make_step)

    found = lineage(store.layout.root, _out(evaluate), "up")

    assert _edges(found.to_dicts()) == {
        (_out(train), _out(evaluate), 1),
        (_out(prepare), _out(train), 2),
    }
    assert set(found.get_column("source_artifact_type").to_list()) == {"file_ref"}


def test_lineage_down_walks_to_every_descendant_with_depth(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    prepare, train, evaluate = _chain(store, make_step)

    found = lineage(store.layout.root, _out(prepare), "down")

    assert _edges(found.to_dicts()) == {
        (_out(prepare), _out(train), 1),
        (_out(prepare), train.value.artifact_id, 1),
        (_out(train), _out(evaluate), 2),
        (_out(train), evaluate.value.artifact_id, 2),
    }
    shallow = lineage(store.layout, _out(prepare), "down", max_depth=1)
    assert set(shallow.get_column("depth").to_list()) == {1}


def test_lineage_of_unknown_artifact_is_empty_with_depth_column(store: DeltaStore) -> None:
    found = lineage(store.layout.root, "0" * 32)

    assert found.is_empty()
    assert "depth" in found.columns


def test_artifacts_joins_type_specific_columns(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    prepare, _, _ = _chain(store, make_step)

    found = artifacts(store.layout.root, step_name="prepare")

    by_type = {row["artifact_type"]: row for row in found.to_dicts()}
    assert set(by_type) == {"file_ref", "metric"}
    assert by_type["metric"]["content"] == "1"
    assert by_type["metric"]["path"] is None
    assert by_type["file_ref"]["path"] == prepare.output_path
    assert by_type["file_ref"]["size"] == prepare.output.size
    assert artifacts(store.layout.root, artifact_type="metric").height == 3


def test_steps_and_executions_filter_by_name(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    _, train, _ = _chain(store, make_step)

    train_steps = steps(store.layout.root, name="train")
    assert train_steps.get_column("step_run_id").to_list() == [train.step_run_id] * 2
    assert train_steps.get_column("status").to_list() == ["running", "completed"]
    assert steps(store.layout.root, status="completed").height == 3
    train_runs = executions(store.layout.root, step_name="train")
    assert train_runs.get_column("execution_run_id").to_list() == [train.execution_run_id]
    assert executions(store.layout.root, success=False).is_empty()


def test_queries_on_missing_root_return_empty_frames(tmp_path: Path) -> None:
    root = tmp_path / "nothing"

    assert steps(root).is_empty()
    assert "status" in steps(root).columns
    assert executions(root).is_empty()
    assert artifacts(root).is_empty()
    assert "content" in artifacts(root).columns
    assert not root.exists()
