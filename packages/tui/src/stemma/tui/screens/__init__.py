"""The dashboard's screens: runs, one run, one step, one artifact, help, launch.

Each loads on first use (PEP 562): the app's first frame needs only the runs list, and the
others' widgets cost ~30 ms of imports before it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stemma.tui.screens.artifact import ArtifactScreen
    from stemma.tui.screens.help import HelpScreen
    from stemma.tui.screens.launch import LaunchScreen
    from stemma.tui.screens.run import RunScreen
    from stemma.tui.screens.runs import RunsScreen
    from stemma.tui.screens.step import StepScreen

_MODULES = {
    "ArtifactScreen": "artifact",
    "HelpScreen": "help",
    "LaunchScreen": "launch",
    "RunScreen": "run",
    "RunsScreen": "runs",
    "StepScreen": "step",
}

__all__ = ["ArtifactScreen", "HelpScreen", "LaunchScreen", "RunScreen", "RunsScreen", "StepScreen"]


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        return getattr(importlib.import_module(f"{__name__}.{_MODULES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
