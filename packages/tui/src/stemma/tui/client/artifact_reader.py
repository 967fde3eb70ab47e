"""One artifact read for the dashboard: its index row, a content preview and its lineage edges."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from stemma.core.store import RunStore
from stemma.tui.client.preview import preview_bytes, preview_file
from stemma.tui.client.views import ArtifactView, LineageEdge


def read_artifact(
    root: Path, store: RunStore, artifact_id: str, up: pl.DataFrame, down: pl.DataFrame
) -> ArtifactView:
    """The view of ``artifact_id`` given its lineage edges one hop each way.

    Raises:
        LookupError: the store has no such artifact.
    """
    found = store.load_artifacts([artifact_id]).get(artifact_id)
    if found is None:
        raise LookupError(f"no artifact {artifact_id!r} under {root}")
    if found.content is not None:
        kind, text, rows = preview_bytes(found.content, found.extension)
    elif isinstance(found.fields.get("path"), str):
        kind, text, rows = preview_file(root / str(found.fields["path"]))
    else:
        kind, text, rows = "none", "", ()
    typed = _typed(found.artifact_type, found.metadata.get("type"))
    facts = f"{found.original_name} · {typed} · {found.size:,} bytes"
    return ArtifactView(
        artifact_id=artifact_id,
        artifact_type=found.artifact_type,
        origin=facts,
        size=found.size,
        preview_kind=kind,
        preview_text=text,
        preview_rows=rows,
        up=_edges(up, shown=artifact_id, far="source"),
        down=_edges(down, shown=artifact_id, far="target"),
    )


def _edges(frame: pl.DataFrame, *, shown: str, far: str) -> tuple[LineageEdge, ...]:
    """One edge per row of ``lineage()`` (each is one execution's hop), self-edges first.

    Rows are not merged by the far artifact: the same bytes reached by two steps, or by two
    executions of one step, are different facts, and a self-edge is the only sign that a
    step made the shown artifact from itself.
    """
    edges = [
        LineageEdge(
            depth=int(row["depth"]),
            artifact_id=str(row[f"{far}_artifact_id"]),
            artifact_type=_typed(row[f"{far}_artifact_type"], row.get(f"{far}_type")),
            role=str(row[f"{far}_role"] or ""),
            step_name=str(row.get("step_name") or ""),
            step_run_id=str(row.get("step_run_id") or ""),
            execution_run_id=str(row["execution_run_id"]),
            itself=row[f"{far}_artifact_id"] == shown,
            name=str(row.get(f"{far}_name") or ""),
        )
        for row in frame.iter_rows(named=True)
    ]
    return tuple(
        sorted(
            edges,
            key=lambda e: (not e.itself, e.step_name, e.artifact_id, e.role, e.execution_run_id),
        )
    )


def _typed(artifact_type: object, declared: object) -> str:
    """``json (file_ref)``: the type a lazy step gave its output (``type=``), then the artifact's.

    The step's first, so a narrow lineage column still shows it.
    """
    kind = str(artifact_type or "")
    return f"{declared} ({kind})" if isinstance(declared, str) and declared else kind
