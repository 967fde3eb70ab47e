"""Dask distributed: N tasks that each take a value and return one, on a ``LocalCluster``.

The value workload of issue 34 (``stemma_values`` is stemma's side): each task gets its input
value (``{"i": i, "seed": s}``, made in the timed part) and returns ``{"i": i + 1, "tag": t}``;
the N results are gathered to the client and checked. The cluster is ``dask_tasks``':
``workers`` processes of 1 thread, the scheduler in this process. Dask keeps no result cache
across runs, so there is no cached phase.
"""

from __future__ import annotations

import importlib.metadata
import pathlib
from typing import Any

from distributed import Client, LocalCluster

VERSIONS = {"distributed": importlib.metadata.version("distributed")}


def successor(value: dict[str, int], tag: int) -> dict[str, int]:
    return {"i": value["i"] + 1, "tag": tag}


class DaskValues:
    def __init__(self, n: int, workdir: pathlib.Path, workers: int) -> None:
        self.n, self.workdir, self.workers = n, workdir, workers
        self.cluster: Any = None
        self.client: Any = None

    def _run(self, tag: int) -> None:
        inputs = [{"i": i, "seed": tag} for i in range(self.n)]
        futures = self.client.map(successor, inputs, tag=tag, pure=False)
        results = self.client.gather(futures)
        assert sorted(r["i"] for r in results) == list(range(1, self.n + 1))
        assert all(r["tag"] == tag for r in results)

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
        self._run(1)

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.cluster.close()


def open_workload(n: int, workdir: pathlib.Path, workers: int) -> DaskValues:
    return DaskValues(n, workdir, workers)
