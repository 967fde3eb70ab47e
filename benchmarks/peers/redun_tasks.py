"""redun: a task that fans out to N no-op tasks, on the local executor with ``workers`` threads.

redun's local executor runs tasks in threads by default (its ``mode = thread``). The call graph
and every result go to a SQLite database in the work folder. cold is the first run over inputs
0..N-1 (database creation included), warm a second run over N..2N-1, cached the warm run again,
answered from redun's call cache.
"""

from __future__ import annotations

import importlib.metadata
import pathlib

from redun import Scheduler, task
from redun.config import Config

VERSIONS = {"redun": importlib.metadata.version("redun")}
redun_namespace = "stemma_bench"


@task()
def noop(i: int) -> int:
    return i


@task()
def fan_out(start: int, n: int) -> list[int]:
    return [noop(i) for i in range(start, start + n)]


class RedunTasks:
    def __init__(self, n: int, workdir: pathlib.Path, workers: int) -> None:
        self.n = n
        self.config = Config(
            {
                "backend": {"db_uri": f"sqlite:///{workdir / 'redun.db'}"},
                "executors.default": {"type": "local", "max_workers": str(workers)},
                "scheduler": {"ignore_warnings": "namespace"},
            }
        )
        self.scheduler: Scheduler | None = None

    def _run(self, start: int) -> None:
        assert self.scheduler is not None
        result = self.scheduler.run(fan_out(start, self.n))
        assert len(result) == self.n

    def cold(self) -> None:
        workdir_config = self.config
        self.scheduler = Scheduler(config=workdir_config)
        self.scheduler.load()
        self._run(0)

    def warm(self) -> None:
        self._run(self.n)

    def cached(self) -> str:
        self._run(self.n)
        return "same call as warm; answered by redun's call cache"

    def close(self) -> None:
        pass


def open_workload(n: int, workdir: pathlib.Path, workers: int) -> RedunTasks:
    return RedunTasks(n, workdir, workers)
