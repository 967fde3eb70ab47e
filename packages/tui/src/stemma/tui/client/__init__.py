"""The dashboard's headless client: reads and cancel requests, never Textual.

An import-linter contract and a subprocess test keep Textual out of this package, so the same
reads serve scripts, tests and other front ends.
"""

from stemma.tui.client.dashboard import DashboardClient, params_text
from stemma.tui.client.views import ArtifactView, ExecutionRow, LineageEdge, RunView, StepView

__all__ = [
    "DashboardClient",
    "params_text",
    "ArtifactView",
    "ExecutionRow",
    "LineageEdge",
    "RunView",
    "StepView",
]
