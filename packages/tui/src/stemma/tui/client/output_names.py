"""The names and types of a step's outputs (``data_3.csv``), for the step screen's outputs tab.

A lazy step's output is called by its step (``tutorial/numbers``), as lineage calls it
(:func:`stemma.storage.artifact_names.shown_names`), and shows the type recorded with it
(``apply(..., type="json")``, :func:`stemma.storage.artifact_names.declared_types`).

Read from the built-in content tables through stemma-storage's reader, from whichever store
holds the history (Delta, or ``core.sqlite`` not imported yet). Blocking I/O: thread workers
only. Without stemma-storage the outputs show by id alone.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from stemma.tui.client.views import StepView


def with_output_names(root: Path, view: StepView) -> StepView:
    """``view`` with :attr:`~StepView.output_names` and :attr:`~StepView.output_types` filled."""
    ids = sorted({artifact_id for ids in view.outputs.values() for artifact_id in ids})
    if not ids:
        return view
    try:  # polars and delta-rs: off the paint path, and optional
        from stemma.core.store.locations import RootLayout
        from stemma.storage.artifact_names import declared_types, shown_names
        from stemma.storage.sqlite_history import table_reader
    except ImportError:
        return view
    read = table_reader(RootLayout(root.absolute()))
    names = shown_names(read, ids)
    types = {
        str(artifact_id): str(kind)
        for artifact_id, kind in declared_types(read, ids).iter_rows()
        if kind is not None
    }
    return dataclasses.replace(view, output_names=names, output_types=types)
