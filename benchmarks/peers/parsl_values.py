"""Parsl: N ``@python_app`` tasks that each take a value and return one, on HTEX.

The value workload of issue 34 (``stemma_values`` is stemma's side): each task gets its input
value (``{"i": i, "seed": s}``, made in the timed part) and returns ``{"i": i + 1, "tag": t}``;
the N results are read from their futures and checked. The executor is ``parsl_tasks``' (HTEX
on a ``LocalProvider``, ``workers`` workers, Parsl's defaults otherwise); no app cache, so no
cached phase.
"""

from __future__ import annotations

import importlib.metadata
import pathlib
import sys
from typing import Any

import parsl
from parsl import python_app
from parsl.config import Config
from parsl.executors import HighThroughputExecutor
from parsl.providers import LocalProvider
from parsl_tasks import _prepend  # pyright: ignore[reportPrivateUsage]

VERSIONS = {"parsl": importlib.metadata.version("parsl")}
HERE = pathlib.Path(__file__).parent


@python_app
def successor(value: dict[str, int], tag: int) -> dict[str, int]:
    return {"i": value["i"] + 1, "tag": tag}


class ParslValues:
    def __init__(self, n: int, workdir: pathlib.Path, workers: int) -> None:
        self.n, self.workdir, self.workers = n, workdir, workers
        self.dfk: Any = None

    def _run(self, tag: int) -> None:
        inputs = [{"i": i, "seed": tag} for i in range(self.n)]
        futures = [successor(value, tag) for value in inputs]
        results = [f.result() for f in futures]
        assert sorted(r["i"] for r in results) == list(range(1, self.n + 1))
        assert all(r["tag"] == tag for r in results)

    def cold(self) -> None:
        config = Config(
            executors=[
                HighThroughputExecutor(max_workers_per_node=self.workers, provider=LocalProvider())
            ],
            run_dir=str(self.workdir / "runinfo"),
        )
        self.dfk = parsl.load(config)
        self._run(0)

    def warm(self) -> None:
        self._run(1)

    def close(self) -> None:
        if self.dfk is not None:
            self.dfk.cleanup()
            self.dfk = None


def open_workload(n: int, workdir: pathlib.Path, workers: int) -> ParslValues:
    # (as parsl_tasks: HTEX's commands on PATH, this folder on the pool's PYTHONPATH)
    _prepend("PATH", str(pathlib.Path(sys.executable).parent))
    _prepend("PYTHONPATH", str(HERE))
    return ParslValues(n, workdir, workers)
