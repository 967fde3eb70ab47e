"""Dask distributed: N no-op tasks on a ``LocalCluster`` of ``workers`` processes, 1 thread each.

The scheduler runs in this process (LocalCluster's default), as stemma's orchestrator does.
cold starts the cluster and runs N tasks; warm runs N other tasks on the running cluster. Dask
keeps no result cache across runs, so there is no cached phase.
"""

from __future__ import annotations

import importlib.metadata
import pathlib
from typing import Any

from distributed import Client, LocalCluster

VERSIONS = {"distributed": importlib.metadata.version("distributed")}


def noop(i: int) -> int:
    return i


class DaskTasks:
    def __init__(self, n: int, workdir: pathlib.Path, workers: int) -> None:
        self.n, self.workdir, self.workers = n, workdir, workers
        self.cluster: Any = None
        self.client: Any = None

    def _run(self, start: int) -> None:
        futures = self.client.map(noop, range(start, start + self.n), pure=False)
        assert len(self.client.gather(futures)) == self.n

    def cold(self) -> None:
        self.cluster = LocalCluster(
            n_workers=self.workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            local_directory=str(self.workdir),
        )
        self.client = Client(self.cluster)
        self._run(0)

    def warm(self) -> None:
        self._run(self.n)

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.cluster.close()


def open_workload(n: int, workdir: pathlib.Path, workers: int) -> DaskTasks:
    return DaskTasks(n, workdir, workers)
