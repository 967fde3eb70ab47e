"""A unit crosses to its worker pickled: every field comes back, and older states still load."""

from __future__ import annotations

import pickle
from dataclasses import fields
from pathlib import Path
from typing import Any, cast

import pytest

from stemma.core.engine.worker.units import ExecutionUnit, UnitGroup
from stemma.core.examples.operations import MetricCalculator
from stemma.core.operations import MetricDraft


def _unit(tmp_path: Path) -> ExecutionUnit:
    artifact = MetricDraft.draft({"loss": 0.5}, "loss").finalize()
    return ExecutionUnit(
        operation=MetricCalculator(),
        step_run_id="a" * 32,
        step_spec_id="b" * 32,
        step_name="metrics",
        step_number=3,
        version="v2",
        execution_spec_id="c" * 32,
        groups=(
            UnitGroup(group_id="g1", inputs={"data": (artifact.artifact_id, "d" * 32)}),
            UnitGroup(group_id=None, inputs={"data": ("e" * 32,)}),
        ),
        root=str(tmp_path / "root with space é"),
        backend="local",
        preserve_working=True,
        provenance={"git": "abc", "user": "me"},
        store_kind="delta",
        fail_fast_file=str(tmp_path / "failed"),
        input_rows={artifact.artifact_id: artifact},
    )


def test_every_field_of_a_unit_survives_pickling(tmp_path: Path) -> None:
    unit = _unit(tmp_path)
    back = pickle.loads(pickle.dumps(unit))
    for name in (f.name for f in fields(ExecutionUnit)):
        if name != "operation":  # (a configured instance: compared by its params below)
            assert getattr(back, name) == getattr(unit, name), name
    assert back.operation.model_dump() == unit.operation.model_dump()
    assert back.groups[0].group_id == "g1"
    assert back.inputs() == unit.inputs()


def test_a_state_pickled_the_dataclass_way_still_loads(tmp_path: Path) -> None:
    # What ``dataclass(slots=True)`` wrote before: the field values as a list, in field order.
    unit = _unit(tmp_path)
    state = [getattr(unit, f.name) for f in fields(ExecutionUnit)]
    back = object.__new__(ExecutionUnit)
    cast(Any, back).__setstate__(state)
    assert back.execution_spec_id == unit.execution_spec_id
    assert back.input_rows == unit.input_rows


def test_a_state_of_another_shape_is_refused(tmp_path: Path) -> None:
    state = [getattr(_unit(tmp_path), f.name) for f in fields(ExecutionUnit)][:-1]
    with pytest.raises(ValueError, match="zip"):
        cast(Any, object.__new__(ExecutionUnit)).__setstate__(state)
