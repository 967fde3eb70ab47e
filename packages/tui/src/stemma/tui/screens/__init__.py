"""The dashboard's screens: runs, one run, one step, one artifact, help."""

from stemma.tui.screens.artifact import ArtifactScreen
from stemma.tui.screens.help import HelpScreen
from stemma.tui.screens.launch import LaunchScreen
from stemma.tui.screens.run import RunScreen
from stemma.tui.screens.runs import RunsScreen
from stemma.tui.screens.step import StepScreen

__all__ = ["ArtifactScreen", "HelpScreen", "LaunchScreen", "RunScreen", "RunsScreen", "StepScreen"]
