"""Prefect 3: a flow of N no-op tasks on a thread pool of ``workers``, in ephemeral mode.

The driver sets ``PREFECT_HOME`` to a temporary folder, turns analytics off and leaves
``PREFECT_API_URL`` unset, so Prefect starts its own temporary local server (a subprocess, whose
CPU shows in the tree figures, not in the orchestrator's). Every task has ``cache_policy=INPUTS``
with persisted results, as stemma always records its results: cold is the first flow over
inputs 0..N-1 (server start included), warm a second flow over N..2N-1, cached the warm flow
again, answered from the cache.
"""

from __future__ import annotations

import importlib.metadata
import pathlib

from prefect import flow, task
from prefect.cache_policies import INPUTS
from prefect.futures import wait
from prefect.task_runners import ThreadPoolTaskRunner

VERSIONS = {"prefect": importlib.metadata.version("prefect")}
_WORKERS = 2


@task(cache_policy=INPUTS, persist_result=True)
def noop(i: int) -> int:
    return i


def _flow(start: int, n: int) -> None:
    futures = [noop.submit(i) for i in range(start, start + n)]
    wait(futures)
    assert all(f.state.is_completed() for f in futures)


class PrefectTasks:
    def __init__(self, n: int, workers: int) -> None:
        self.n = n
        self.flow = flow(name="bench", task_runner=ThreadPoolTaskRunner(max_workers=workers))(_flow)

    def cold(self) -> None:
        self.flow(0, self.n)

    def warm(self) -> None:
        self.flow(self.n, self.n)

    def cached(self) -> str:
        self.flow(self.n, self.n)
        return "same inputs as warm; tasks answered by the INPUTS cache policy"

    def close(self) -> None:
        pass


def open_workload(n: int, workdir: pathlib.Path, workers: int) -> PrefectTasks:
    return PrefectTasks(n, workers)
