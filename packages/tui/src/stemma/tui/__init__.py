"""stemma's terminal dashboard: ``stemma tui [ROOT]``, or :class:`StemmaApp` from Python.

:mod:`stemma.tui.client` holds every read the dashboard makes and never imports Textual; so
this package imports the app lazily, and ``import stemma.tui.client`` stays free of Textual.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stemma.tui.app import StemmaApp, run_dashboard

__all__ = ["StemmaApp", "run_dashboard"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from stemma.tui import app

        return getattr(app, name)
    raise AttributeError(f"module 'stemma.tui' has no attribute {name!r}")
