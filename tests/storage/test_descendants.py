"""``DeltaStore.descendants``: walking lineage forward, optionally keeping one artifact type."""

from __future__ import annotations

from collections.abc import Callable

from stemma.core.execution_records import ExecutionRecord, LineageEdge
from stemma.core.operations.drafts import DataDraft, FinalizedArtifact
from stemma.storage import DeltaStore

RecordFactory = Callable[..., ExecutionRecord]
MetricFactory = Callable[..., FinalizedArtifact]


def _edge(source: FinalizedArtifact, target: FinalizedArtifact) -> LineageEdge:
    return LineageEdge(
        source_artifact_id=source.artifact_id,
        target_artifact_id=target.artifact_id,
        source_role="in",
        target_role="out",
    )


def _data(name: str) -> FinalizedArtifact:
    return DataDraft.draft(f"x\n{name}\n".encode(), f"{name}.csv", step_number=1).finalize()


def test_descendants_walks_every_generation_down_and_filters_by_type(
    store: DeltaStore, make_record: RecordFactory, make_metric: MetricFactory
) -> None:
    # raw -> scaled -> m_scaled; raw -> m_raw; other -> m_other; lonely has no children.
    raw, scaled, other, lonely = _data("raw"), _data("scaled"), _data("other"), _data("lonely")
    m_raw, m_scaled, m_other = make_metric(1), make_metric(2), make_metric(3)
    first = make_record([raw, other, lonely])
    second = make_record([scaled, m_raw, m_other], edges=[_edge(raw, scaled), _edge(raw, m_raw)])
    third = make_record([m_scaled], edges=[_edge(scaled, m_scaled), _edge(other, m_other)])
    store.commit_wave([store.stage_execution(first), store.stage_execution(second)])
    store.commit_wave([store.stage_execution(third)])
    ids = [raw.artifact_id, scaled.artifact_id, lonely.artifact_id]

    every = store.descendants(ids)
    metrics = store.descendants(ids, artifact_type="metric")

    assert every == {
        raw.artifact_id: frozenset({scaled.artifact_id, m_raw.artifact_id, m_scaled.artifact_id}),
        scaled.artifact_id: frozenset({m_scaled.artifact_id}),
        lonely.artifact_id: frozenset(),
    }
    assert metrics[raw.artifact_id] == frozenset({m_raw.artifact_id, m_scaled.artifact_id})
    assert store.descendants(ids, artifact_type="config")[raw.artifact_id] == frozenset()


def test_descendants_of_nothing_is_empty_on_a_fresh_store(store: DeltaStore) -> None:
    assert store.descendants([]) == {}
    assert store.descendants(["0" * 32]) == {"0" * 32: frozenset()}
