"""A run whose last write fails still ends: the error is raised, and the run is not left live."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from stemma.core import Pipeline
from stemma.core.examples import DataGenerator
from stemma.core.execution_records import StepEvent
from stemma.core.live.state import list_states
from stemma.storage import DeltaStore


def test_a_run_whose_deferred_events_cannot_be_written_says_so_and_still_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    first = Pipeline.create("gen", root=root)
    first.run(DataGenerator, params={"count": 2})
    first.finalize()
    again = Pipeline.create("gen", root=root)
    again.run(DataGenerator, params={"count": 2})  # cached: its event waits for the next write

    def stopped_answering(store: DeltaStore, events: Sequence[StepEvent]) -> None:
        raise OSError("the store stopped answering")

    monkeypatch.setattr(DeltaStore, "record_events", stopped_answering)
    with pytest.raises(OSError, match="stopped answering"):
        again.finalize()

    newest = list_states(root)[0]
    assert newest.run_id == again.run_id
    assert newest.status.value == "completed", newest.status  # not left "running"
