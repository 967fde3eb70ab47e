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


def returns_numpy(out_path: str) -> dict[str, Any]:
    """What an analysis step returns: numpy scalars and arrays, plain data around them."""
    import numpy as np

    count("returns_numpy")
    pathlib.Path(out_path).write_text("done")
    return {
        "count": np.int64(3),
        "mean": np.float32(0.5),
        "ok": np.bool_(True),
        "rows": np.arange(3),
        "grid": np.zeros((2, 2)),
        "pair": (np.int32(1), [np.uint8(2)]),
        "plain": 1.5,
    }


def returns_numpy_scalar(out_path: str) -> Any:
    import numpy as np

    return np.int64(7)


def writes_then_returns_object(out_path: str) -> object:
    """Finishes its work, then returns what cannot be recorded."""
    count("writes_then_returns_object")
    pathlib.Path(out_path).write_text("an hour of work")
    return Unrecordable()


class Unrecordable:
    """Not data: no canonical form."""
