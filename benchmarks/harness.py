"""What every benchmark shares: timing, repetition statistics, the machine's description, tables
and the JSON results file (``benchmarks/results/<name>.json``).

Kept free of stemma imports so the peer workloads (``peers/``) can use it in a bare process.
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import json
import os
import pathlib
import platform
import resource
import statistics
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

RESULTS = pathlib.Path(__file__).parent / "results"
STEMMA_DISTRIBUTIONS = ("stemma-core", "stemma-storage", "deltalake", "polars", "xxhash")


@dataclass
class Elapsed:
    """Wall and CPU seconds of a ``measure()`` block, filled in when the block ends."""

    wall: float = 0.0
    """``time.perf_counter`` seconds."""
    cpu: float = 0.0
    """``time.process_time`` seconds: every thread of this process, no child process."""
    peak_rss_mb: float = 0.0
    """This process's peak resident set so far (``VmHWM``), MiB; it never goes down."""


@contextmanager
def measure() -> Iterator[Elapsed]:
    """Time the block: ``with measure() as took: ...; took.wall``."""
    took = Elapsed()
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        yield took
    finally:
        took.wall = time.perf_counter() - wall
        took.cpu = time.process_time() - cpu
        took.peak_rss_mb = peak_rss_mb()


def peak_rss_mb() -> float:
    """This process's peak resident set size in MiB.

    ``VmHWM`` of ``/proc/self/status``: unlike ``ru_maxrss``, it starts afresh at ``exec``, so a
    child started by a big parent does not report the parent's peak.
    """
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mb() -> float:
    """This process's resident set size now, in MiB like ``peak_rss_mb`` (``/proc/self/statm``)."""
    pages = int(pathlib.Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def spread(values: Sequence[float]) -> dict[str, Any]:
    """Median, min, max and every value of repeated measurements."""
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "runs": list(values),
    }


def machine() -> dict[str, Any]:
    """The machine, the interpreter, the load now and the date."""
    mem_kib = 0
    with open("/proc/meminfo") as meminfo:
        for line in meminfo:
            if line.startswith("MemTotal:"):
                mem_kib = int(line.split()[1])
    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "memory_gb": round(mem_kib / 1024**2, 1),
        "python": sys.version.split()[0],
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def versions(distributions: Sequence[str] = STEMMA_DISTRIBUTIONS) -> dict[str, str | None]:
    """Installed versions of ``distributions`` (None when one is missing)."""
    found: dict[str, str | None] = {}
    for name in distributions:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = None
    return found


def load() -> str:
    """The 1/5/15-minute load averages, for a table's caption."""
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def write_results(
    name: str,
    *,
    config: Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    distributions: Sequence[str] = STEMMA_DISTRIBUTIONS,
) -> pathlib.Path:
    """Write ``results/<name>.json``: machine, versions, configuration and the measured rows."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    document = {
        "benchmark": name,
        "machine": machine(),
        "versions": versions(distributions),
        "config": dict(config),
        "rows": [dict(row) for row in rows],
    }
    path.write_text(json.dumps(document, indent=1, default=str) + "\n")
    print(f"[{load()}] wrote {path.relative_to(RESULTS.parent.parent)}")
    return path


class Table:
    """A table printed row by row as figures come in: ``Table(columns).row({...})``."""

    def __init__(self, columns: Sequence[tuple[str, str]]) -> None:
        """``columns``: (key, format spec such as ``>10.3f``) pairs; prints the header."""
        self.columns = list(columns)
        self.widths = [max(len(key), _width(spec)) for key, spec in self.columns]
        print(
            "  ".join(f"{key:>{w}}" for (key, _), w in zip(self.columns, self.widths, strict=True))
        )

    def row(self, row: Mapping[str, Any]) -> None:
        """Print one row; a missing or None value shows as a dash."""
        cells: list[str] = []
        for (key, spec), w in zip(self.columns, self.widths, strict=True):
            value = row.get(key)
            text = "—" if value is None else format(value, spec.lstrip("<>^"))
            cells.append(f"{text:>{w}}")
        print("  ".join(cells), flush=True)


def _width(spec: str) -> int:
    digits = "".join(c for c in spec.lstrip("<>^").split(".")[0] if c.isdigit())
    return int(digits) if digits else 8
