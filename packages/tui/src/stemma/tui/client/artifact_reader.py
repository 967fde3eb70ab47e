"""One artifact read for the dashboard: its index row, a content preview and its lineage hops."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from stemma.core.store import PipelineStore
from stemma.tui.client.preview import preview_bytes, preview_file
from stemma.tui.client.views import ArtifactView, LineageEdge


def read_artifact(
    root: Path, store: PipelineStore, artifact_id: str, up: pl.DataFrame, down: pl.DataFrame
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
    facts = f"{found.artifact_type} · {found.size} bytes · {found.original_name}"
    return ArtifactView(
        artifact_id=artifact_id,
        artifact_type=found.artifact_type,
        origin=facts,
        size=found.size,
        preview_kind=kind,
        preview_text=text,
        preview_rows=rows,
        up=_edges(up, far="source"),
        down=_edges(down, far="target"),
    )


def _edges(frame: pl.DataFrame, *, far: str) -> tuple[LineageEdge, ...]:
    seen: dict[str, LineageEdge] = {}
    for row in frame.iter_rows(named=True):
        artifact_id = str(row[f"{far}_artifact_id"])
        seen.setdefault(
            artifact_id,
            LineageEdge(
                depth=int(row["depth"]),
                artifact_id=artifact_id,
                artifact_type=str(row[f"{far}_artifact_type"] or ""),
                role=str(row[f"{far}_role"] or ""),
            ),
        )
    return tuple(seen.values())
