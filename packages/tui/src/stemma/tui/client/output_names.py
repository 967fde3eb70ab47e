"""The names of a step's outputs (``data_3.csv``), for the step screen's outputs tab.

A lazy step's output is called by its step (``tutorial/numbers``), as lineage calls it
(:func:`stemma.storage.artifact_names.shown_names`).

Read from the built-in content tables through stemma-storage's reader, from whichever store
holds the history (Delta, or ``core.sqlite`` not imported yet). Blocking I/O: thread workers
only. Without stemma-storage the outputs show by id alone.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from stemma.tui.client.views import StepView


def with_output_names(root: Path, view: StepView) -> StepView:
    """``view`` with :attr:`~StepView.output_names` filled for its outputs."""
    ids = sorted({artifact_id for ids in view.outputs.values() for artifact_id in ids})
    if not ids:
        return view
    try:  # polars and delta-rs: off the paint path, and optional
        from stemma.core.store.locations import RootLayout
        from stemma.storage.artifact_names import shown_names
        from stemma.storage.sqlite_history import table_reader
    except ImportError:
        return view
    names = shown_names(table_reader(RootLayout(root.absolute())), ids)
    return dataclasses.replace(view, output_names=names)
