"""The dashboard's use of Python's cyclic garbage collector: one place for a process-wide setting.

**No collection before the first frame** (:func:`pause`, :func:`resume`). Importing Textual
and building the first screen allocate ~60,000 objects that live as long as the dashboard
(modules, classes, styles, widgets). Each allocation burst triggered a collection that walked
them again: ~150 collections, 70-100 ms of a ~0.5 s first paint. Reference counting still frees
everything else while collection is paused; once the first frame is out, what was allocated so
far is frozen (:func:`gc.freeze`: later full collections skip it) and collection resumes. The
cycles among the start-up objects that were already garbage stay (a few kB, once).

**Long-lived rows frozen, young collections rarer** (:func:`settle_long_lived`, :func:`restore`),
once the runs list holds every run: the full list (10,000 runs) lives as long as the dashboard,
and each full collection walked it all (~220 ms, on one filter keystroke in eight). Frozen
objects are still freed by reference counting when dropped (a run's row replaced by a new one);
only reference cycles among them would stay, and rows and cells hold none. And drawing a frame
allocates thousands of short-lived objects (Textual makes each line's Strip with seven caches):
at the default threshold (700) a keystroke ran ~20 young collections and one of the middle
generation, 15-30 ms of it. Most die by reference counting before a collection at
``YOUNG_THRESHOLD`` would look at them; cyclic garbage waits a little longer.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 10_000
"""Allocations between young collections once the runs list is settled (Python's default: 700)."""

_paused = False
"""Collection was turned off by :func:`pause`, and not yet back on."""
_thresholds: tuple[int, ...] | None = None
"""The thresholds :func:`settle_long_lived` replaced, until :func:`restore` puts them back."""


def pause() -> None:
    """Turn cyclic collection off until :func:`resume` (nothing if it was off already)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Freeze what start-up allocated and turn collection back on, if :func:`pause` turned it off.

    Called after the first frame, and again (doing nothing) when the dashboard exits.
    """
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()


def paused() -> bool:
    """Whether collection is off because of :func:`pause`."""
    return _paused


def settle_long_lived() -> None:
    """Freeze what is allocated now and make young collections rarer (once; see the module)."""
    global _thresholds
    if _thresholds is not None:
        return
    gc.freeze()
    _thresholds = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, *_thresholds[1:])


def restore() -> None:
    """The collector's thresholds as before :func:`settle_long_lived`.

    Called when the dashboard closes: a test runs many dashboards in one process.
    """
    global _thresholds
    if _thresholds is not None:
        gc.set_threshold(*_thresholds)
        _thresholds = None
