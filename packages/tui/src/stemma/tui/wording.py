"""Counts in words for the lines the dashboard writes: ``1 execution``, ``3 executions``.

One rule in one place, so no screen says "1 executions".
"""

from __future__ import annotations


def noun_for(count: int, noun: str, plural: str | None = None) -> str:
    """``noun`` when ``count`` is one, else its plural (``plural``, or ``noun`` + ``s``)."""
    return noun if count == 1 else plural or f"{noun}s"


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` then the noun that agrees with it: ``1 run``, ``0 runs``, ``2 runs``."""
    return f"{count} {noun_for(count, noun, plural)}"


def counted_of(shown: int, total: int, noun: str, *, more: bool = False) -> str:
    """``3 of 10 runs``; ``1 of 1 run``; with ``more`` (a partial count), ``3 of 10+ runs``."""
    return f"{shown} of {total}{'+' if more else ''} {noun_for(2 if more else total, noun)}"
