"""``OperationKind``: how an operation runs (the engine dispatches on it).

Apart from ``definition`` so that the declaration checks, which decide an operation's kind,
do not import the class they check.
"""

from __future__ import annotations

from enum import StrEnum


class OperationKind(StrEnum):
    """How an operation runs."""

    CREATOR = "creator"
    """In a sandbox on disk: preprocess, execute, postprocess."""
    CURATOR = "curator"
    """In a subprocess over DataFrames of its inputs: ``execute_curator``."""
    COMPOSITE = "composite"
    """Other operations wired in ``compose(ctx)``: collapsed in one worker, or expanded."""
    FUNCTION = "function"
    """A lazy function step: one unit that calls a plain function and publishes its ``OUT``."""
