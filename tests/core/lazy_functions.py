"""Module-level step functions for the lazy-run tests: workers import them by name.

Each notes its calls in a file under ``$STEMMA_TEST_CALLS`` (one line per call, from any
process), so a test can count recomputations whatever backend ran them.
"""

from __future__ import annotations

import json
import os
import pathlib
from collections import Counter
from typing import Any

CALLS_ENV = "STEMMA_TEST_CALLS"


def count(name: str) -> None:
    """Note one call of ``name``."""
    with (pathlib.Path(os.environ[CALLS_ENV]) / name).open("a") as stream:
        stream.write(f"{os.getpid()}\n")


def calls() -> Counter[str]:
    """How many times each function ran, in any process, since the test began."""
    folder = pathlib.Path(os.environ[CALLS_ENV])
    return Counter({f.name: len(f.read_text().splitlines()) for f in folder.iterdir()})


def write_json(data: Any, out_path: str) -> dict[str, int]:
    count("write_json")
    pathlib.Path(out_path).write_text(json.dumps(data))
    return {"keys": len(data)}


def read_and_add(source: str, out_path: str, extra: int = 0) -> int:
    count(f"read_and_add:{extra}")
    value = len(json.loads(pathlib.Path(source).read_text())) + extra
    pathlib.Path(out_path).mkdir()
    (pathlib.Path(out_path) / "value.txt").write_text(str(value))
    return value


def explode(source: str, out_path: str) -> None:
    count("explode")
    raise ValueError("bad input row 7")


def returns_object(out_path: str) -> object:
    return object()


def returns_tuple(out_path: str) -> tuple[int, dict[str, int]]:
    return (1, {"n": 2})


def dangling(out_path: str) -> None:
    pathlib.Path(out_path).mkdir()
    (pathlib.Path(out_path) / "link").symlink_to(pathlib.Path(out_path) / "missing")


def other(data: Any, out_path: str) -> None:
    raise AssertionError("must not run")


def pid(out_path: str) -> int:
    return os.getpid()
