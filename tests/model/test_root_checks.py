"""The model test's checks name each broken promise: tables made by hand, one fault each.

The state machine trusts these checks to fail when a promise breaks; here each is shown a small
set of tables (plain polars frames, no root) with exactly one fault, and a clean set with none.
"""

from __future__ import annotations

import json
import pathlib

import polars as pl
import pytest

from tests.model import root_checks
from tests.model.root_checks import EXECUTION_EDGES, EXECUTIONS, INDEX, STEP_OUTPUTS, STEPS


def _step(step_run: str, status: str = "completed", **metadata: object) -> dict[str, object]:
    return {
        "step_run_id": step_run,
        "pipeline_run_id": "run",
        "step_number": 1,
        "step_name": "slow",
        "status": status,
        "total_count": 1,
        "succeeded_count": 1,
        "failed_count": 0,
        "metadata": json.dumps(metadata),
    }


def _tables(
    *,
    index: list[str],
    steps: list[dict[str, object]],
    offered: list[tuple[str, str]],
    executions: list[tuple[str, str, str, bool]],
    outputs: list[tuple[str, str]],
) -> dict[str, pl.DataFrame]:
    """Tables with ``executions`` as (execution run, key, step run, success) and ``outputs`` as
    (execution run, artifact)."""
    return {
        INDEX: pl.DataFrame({"artifact_id": index}, schema={"artifact_id": pl.String}),
        STEPS: pl.DataFrame(steps),
        STEP_OUTPUTS: pl.DataFrame(offered, schema=["step_run_id", "artifact_id"], orient="row"),
        EXECUTIONS: pl.DataFrame(
            executions,
            schema=["execution_run_id", "execution_spec_id", "step_run_id", "success"],
            orient="row",
        ),
        EXECUTION_EDGES: pl.DataFrame(
            [(run, "output", artifact) for run, artifact in outputs],
            schema=["execution_run_id", "direction", "artifact_id"],
            orient="row",
        ),
    }


def _clean() -> dict[str, pl.DataFrame]:
    """Step run ``s1`` made ``a`` (key ``k``); step run ``s2`` offered it from an execution hit."""
    return _tables(
        index=["a"],
        steps=[_step("s1"), _step("s2", execution_cache_hits=1)],
        offered=[("s1", "a"), ("s2", "a")],
        executions=[("e1", "k", "s1", True)],
        outputs=[("e1", "a")],
    )


def test_clean_tables_break_no_promise(tmp_path: pathlib.Path) -> None:
    tables = _clean()
    assert root_checks.executed_twice(tables) == []
    assert root_checks.uncommitted_hits(tmp_path, tables) == []


def test_a_key_that_succeeded_twice_is_named() -> None:
    tables = _clean()
    tables[EXECUTIONS] = pl.concat(
        [
            tables[EXECUTIONS],
            tables[EXECUTIONS].with_columns(pl.lit("e2").alias("execution_run_id")),
        ]
    )
    (problem,) = root_checks.executed_twice(tables)
    assert "ran again after it succeeded" in problem


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        ("unindexed", "never indexed"),
        ("failed source", "from a hit on no committed success"),
        ("step hit on a failure", "not a committed success"),
    ],
)
def test_a_hit_on_work_not_committed_is_named(
    tmp_path: pathlib.Path, fault: str, expected: str
) -> None:
    tables = _clean()
    if fault == "unindexed":
        tables[INDEX] = tables[INDEX].clear()
    elif fault == "failed source":
        tables[EXECUTIONS] = tables[EXECUTIONS].with_columns(pl.lit(False).alias("success"))
    else:
        tables[STEPS] = pl.DataFrame(
            [_step("s1", "cancelled"), _step("s2", cache="step", outputs_from="s1")]
        )
    found = "\n".join(root_checks.uncommitted_hits(tmp_path, tables))
    assert expected in found
