"""No cyclic garbage collection between ``stemma tui`` starting and its first frame.

Importing Textual and building the first screen allocate ~60,000 objects that live as long as
the dashboard (modules, classes, styles, widgets). Each allocation burst triggered a collection
that walked them again: ~150 collections, 70-100 ms of a ~0.5 s first paint. Reference counting
still frees everything else while collection is paused; once the first frame is out, what was
allocated so far is frozen (:func:`gc.freeze`: later full collections skip it) and collection
resumes. The cycles among the start-up objects that were already garbage stay (a few kB, once).
"""

from __future__ import annotations

import gc

_paused = False
"""Collection was turned off by :func:`pause`, and not yet back on."""


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
