"""Snakemake: a dry run (``snakemake -n``) of a workflow of N jobs, for graph building.

One rule makes ``out/{i}.txt`` for i in 0..N-1, and ``all`` asks for every one of them: N jobs
and one top job, the ``fanout`` shape of ``stemma_plan``. Each phase runs the command line in a
subprocess; its CPU and peak RSS (from ``wait4``) are reported as the orchestrator's, and
include the interpreter's start and Snakemake's import (``startup_s`` in the note: a
``snakemake --version``). cold is the first dry run in a fresh folder, warm a second one, cached
a dry run once every output exists (made by this benchmark, not by Snakemake): "nothing to be
done".
"""

from __future__ import annotations

import importlib.metadata
import os
import pathlib
import shutil
import subprocess
import sys
import time
from typing import Any

VERSIONS = {"snakemake": importlib.metadata.version("snakemake")}
SNAKEFILE = """\
N = int(config["jobs"])

rule all:
    input: expand("out/{i}.txt", i=range(N))

rule noop:
    output: "out/{i}.txt"
    shell: "touch {output}"
"""


def _snakemake() -> str:
    found = shutil.which("snakemake", path=str(pathlib.Path(sys.executable).parent))
    assert found, "snakemake is not installed next to this interpreter"
    return found


def _timed(argv: list[str], cwd: pathlib.Path) -> dict[str, Any]:
    start = time.perf_counter()
    log = cwd / "snakemake.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{argv} failed: {log.read_text()[-2000:]}")
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mb": usage.ru_maxrss / 1024,
    }


class SnakemakeDryRun:
    def __init__(self, n: int, workdir: pathlib.Path, workers: int) -> None:
        self.n, self.dir, self.workers = n, workdir / "snakemake", workers
        self.dir.mkdir(parents=True)
        (self.dir / "Snakefile").write_text(SNAKEFILE)
        self.startup = _timed([_snakemake(), "--version"], self.dir)["wall_s"]

    def _dry_run(self) -> dict[str, Any]:
        argv = [_snakemake(), "-n", "--cores", str(self.workers), "--config", f"jobs={self.n}"]
        return {**_timed(argv, self.dir), "note": f"startup_s={self.startup:.2f}"}

    def cold(self) -> dict[str, Any]:
        return self._dry_run()

    def warm(self) -> dict[str, Any]:
        return self._dry_run()

    def cached(self) -> dict[str, Any]:
        out = self.dir / "out"
        out.mkdir()
        for i in range(self.n):
            (out / f"{i}.txt").touch()
        return self._dry_run()

    def close(self) -> None:
        pass


def open_workload(n: int, workdir: pathlib.Path, workers: int) -> SnakemakeDryRun:
    return SnakemakeDryRun(n, workdir, workers)
