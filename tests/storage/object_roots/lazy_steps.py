"""Module-level step functions for the object-root tests: workers import them by name."""

from __future__ import annotations

import os
import time

from tests.core.lazy_functions import count


def square(x: int) -> int:
    count("square")
    return x * x


def add(a: object, b: object) -> str:
    count("add")
    return f"{a}+{b}"


def slow_square(x: int) -> int:
    """``x * x`` after ``$STEMMA_TEST_SLEEP`` seconds (a runner a test kills holds its lease)."""
    count("slow_square")
    time.sleep(float(os.environ.get("STEMMA_TEST_SLEEP", "0")))
    return x * x


def where(ctx_prefix: str, ctx_region: str | None) -> dict[str, str | None]:
    """What a step's context said its prefix and region were."""
    return {"prefix": ctx_prefix, "region": ctx_region}
