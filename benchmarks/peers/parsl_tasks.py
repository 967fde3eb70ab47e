"""Parsl: N no-op ``@python_app`` tasks on a HighThroughputExecutor of ``workers`` local workers.

HTEX on a ``LocalProvider`` (one block on this machine, ``max_workers_per_node=workers``), every
other setting Parsl's default. The DataFlowKernel and the interchange's client run in this
process; the interchange and the worker pool are Parsl's own processes, as Dask's workers are.
cold is ``parsl.load(config)`` plus N tasks; warm is N other tasks on the loaded kernel. The apps
are not marked ``cache=True`` (Parsl's default), so there is no cached phase, as with Dask.
``close`` cleans the kernel up, which stops the interchange and the workers: nothing outlives
the run. Parsl's run directory (its logs) is in the workload's folder.
"""

from __future__ import annotations

import importlib.metadata
import os
import pathlib
import sys
from typing import Any

import parsl
from parsl import python_app
from parsl.config import Config
from parsl.executors import HighThroughputExecutor
from parsl.providers import LocalProvider

VERSIONS = {"parsl": importlib.metadata.version("parsl")}
HERE = pathlib.Path(__file__).parent


@python_app
def noop(i: int) -> int:
    return i


class ParslTasks:
    def __init__(self, n: int, workdir: pathlib.Path, workers: int) -> None:
        self.n, self.workdir, self.workers = n, workdir, workers
        self.dfk: Any = None

    def _run(self, start: int) -> None:
        futures = [noop(i) for i in range(start, start + self.n)]
        assert len([f.result() for f in futures]) == self.n

    def cold(self) -> None:
        config = Config(
            executors=[
                HighThroughputExecutor(
                    max_workers_per_node=self.workers,
                    provider=LocalProvider(),
                )
            ],
            run_dir=str(self.workdir / "runinfo"),
        )
        self.dfk = parsl.load(config)
        self._run(0)

    def warm(self) -> None:
        self._run(self.n)

    def close(self) -> None:
        if self.dfk is not None:
            self.dfk.cleanup()
            self.dfk = None


def _prepend(variable: str, entry: str) -> None:
    os.environ[variable] = os.pathsep.join(p for p in (entry, os.environ.get(variable, "")) if p)


def open_workload(n: int, workdir: pathlib.Path, workers: int) -> ParslTasks:
    # HTEX starts its interchange and worker pool as commands (``interchange.py``,
    # ``process_worker_pool.py``) looked up on PATH, as in an activated environment (``uv run``
    # puts its bin first): the driver runs this interpreter directly, so say where they are.
    _prepend("PATH", str(pathlib.Path(sys.executable).parent))
    # The pool is a shell-launched process, not a spawned child: it finds this module (the apps
    # are pickled by reference) through PYTHONPATH, as Dask's workers do through the sys.path
    # that multiprocessing hands its spawned children.
    _prepend("PYTHONPATH", str(HERE))
    return ParslTasks(n, workdir, workers)
