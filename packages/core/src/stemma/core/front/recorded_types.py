"""The type recorded with each output ``run()`` hands back (``apply(..., type=)``).

A step's type is never part of its key, so the type an output carries is the one recorded with
its artifact when it was made (``{"type": "json"}`` in the artifact's metadata), which a step
found built may have been given by an earlier script: it is read from the store, never taken
from the handle asked for.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from stemma.core.artifact import Artifact
from stemma.core.store.protocols import RunStore

TYPE_KEY = "type"
"""The key of the type in an output artifact's metadata (what the worker writes there)."""


def with_recorded_types(store: RunStore, built: Sequence[Artifact]) -> list[Artifact]:
    """``built`` with each function step output's recorded type (None for one without).

    One read of the outputs' rows, their content left unread. An operation step's result (no
    output artifact of its own) is returned as it is.
    """
    ids = sorted({artifact.artifact_id for artifact in built if artifact.artifact_id})
    if not ids:
        return list(built)
    found = store.load_artifacts(ids, content=False)
    typed: list[Artifact] = []
    for artifact in built:
        row = found.get(artifact.artifact_id)
        given = row.metadata.get(TYPE_KEY) if row is not None else None
        kind = given if isinstance(given, str) else None
        typed.append(dataclasses.replace(artifact, type=kind))
    return typed
