"""Module-level functions of the lazy graph the SLURM tests build (jobs import them by name)."""

from __future__ import annotations

import json
import os
import pathlib
import socket


def write_json(data: dict[str, int], out_path: str) -> dict[str, int]:
    pathlib.Path(out_path).write_text(json.dumps(data, sort_keys=True))
    return {"keys": len(data)}


def double(source: str, out_path: str) -> int:
    values = json.loads(pathlib.Path(source).read_text())
    total = sum(v * 2 for v in values.values())
    pathlib.Path(out_path).write_text(str(total))
    return total


def where(out_path: str) -> dict[str, str]:
    """Where the step ran: its job id tells a SLURM element from a local worker."""
    return {"job": os.environ.get("SLURM_JOB_ID", ""), "host": socket.gethostname()}


def square(i: int, out_path: str) -> int:
    pathlib.Path(out_path).write_text(str(i * i))
    return i * i


def total(items: list[str], out_path: str) -> int:
    value = sum(int(pathlib.Path(item).read_text()) for item in items)
    pathlib.Path(out_path).write_text(str(value))
    return value
