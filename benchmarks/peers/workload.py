"""Run one workload in this (fresh) process and write its timings as JSON.

    python benchmarks/peers/workload.py MODULE N WORKDIR OUT.json

``MODULE`` is a module of this folder (``stemma_units``, ``prefect_tasks``, …) defining
``open_workload(n, workdir, workers)``, which returns an object with ``cold()``, ``warm()``,
optionally ``cached()``, and ``close()``. Each phase is timed here: wall time, this process's CPU
(the orchestrator: every thread, no child process), its peak RSS so far, and, when psutil is
installed, the CPU of the whole process tree (workers, servers) and its RSS at the phase's end.
Importing the module (the framework's import) is timed apart. ``bench_peers.py`` drives this.
"""

from __future__ import annotations

import importlib
import json
import pathlib
import sys
import time
import traceback
from typing import Any

HERE = pathlib.Path(__file__).parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # spawned workers inherit it

from harness import measure  # noqa: E402

WORKERS = 2
PHASES = ("cold", "warm", "cached")


def _tree() -> tuple[float | None, float | None]:
    """CPU seconds of this process, its live descendants and its reaped children; tree RSS MB."""
    try:
        import psutil
    except ImportError:
        return None, None
    me = psutil.Process()
    cpu, rss = 0.0, 0.0
    for proc in [me, *me.children(recursive=True)]:
        try:
            times = proc.cpu_times()
            cpu += times.user + times.system
            rss += proc.memory_info().rss / 1e6
            if proc is me:
                cpu += times.children_user + times.children_system
        except psutil.Error:
            continue
    return cpu, rss


def run(module_name: str, n: int, workdir: pathlib.Path) -> dict[str, Any]:
    """Import the workload's module, then time each phase it has."""
    started = time.perf_counter()
    module = importlib.import_module(module_name)
    result: dict[str, Any] = {"import_s": time.perf_counter() - started, "phases": {}}
    workload = module.open_workload(n, workdir, WORKERS)
    try:
        for phase in PHASES:
            step = getattr(workload, phase, None)
            if step is None:
                continue
            tree_cpu, _ = _tree()
            with measure() as took:
                note = step()
            tree_cpu_after, tree_rss = _tree()
            figures: dict[str, Any] = {
                "wall_s": took.wall,
                "cpu_s": took.cpu,
                "peak_rss_mb": took.peak_rss_mb,
                "tree_cpu_s": None if tree_cpu is None else tree_cpu_after - tree_cpu,  # type: ignore[operator]
                "tree_rss_mb": tree_rss,
            }
            # A workload that runs its orchestrator as a subprocess reports that process's figures.
            figures.update(note if isinstance(note, dict) else {"note": note} if note else {})
            result["phases"][phase] = figures
    finally:
        workload.close()
    result["versions"] = getattr(module, "VERSIONS", {})
    return result


def main() -> None:
    module_name, n, workdir, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    try:
        result = run(module_name, n, pathlib.Path(workdir))
    except Exception as err:  # reported, not hidden: the driver prints it in the table
        result = {"error": f"{type(err).__name__}: {err}", "traceback": traceback.format_exc()}
    pathlib.Path(out).write_text(json.dumps(result))


if __name__ == "__main__":
    main()
