"""The dashboard's headless client: reads and cancel requests, never Textual.

An import-linter contract and a subprocess test keep Textual out of this package, so the same
reads serve scripts, tests and other front ends.
"""

from typing import TYPE_CHECKING, Any

from stemma.tui.client.dashboard import DashboardClient, params_text

if TYPE_CHECKING:
    from stemma.tui.client.views import (
        ArtifactView,
        ExecutionRow,
        LineageEdge,
        RunView,
        StepView,
    )

_VIEWS = frozenset({"ArtifactView", "ExecutionRow", "LineageEdge", "RunView", "StepView"})
"""Loaded when first asked for (PEP 562): the runs list's first frame needs none of them."""


def __getattr__(name: str) -> Any:
    if name not in _VIEWS:
        raise AttributeError(f"module 'stemma.tui.client' has no attribute {name!r}")
    from stemma.tui.client import views

    value = getattr(views, name)
    globals()[name] = value  # the next access is a plain attribute
    return value


__all__ = [
    "DashboardClient",
    "params_text",
    "ArtifactView",
    "ExecutionRow",
    "LineageEdge",
    "RunView",
    "StepView",
]
