"""Module-level step functions for the object-root tests: workers import them by name."""

from __future__ import annotations

from tests.core.lazy_functions import count


def square(x: int) -> int:
    count("square")
    return x * x


def add(a: object, b: object) -> str:
    count("add")
    return f"{a}+{b}"
