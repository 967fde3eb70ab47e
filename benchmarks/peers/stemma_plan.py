"""stemma's side of graph building: ``plan()`` (its dry run) of N lazy steps and one top step.

The ``fanout`` shape of ``bench_lower``: N no-op leaves and one top step over all of them, the
shape of ``snakemake_dryrun``'s workflow. Each phase builds the handles (``apply``), lowers them
and asks the store which steps would run. cold runs against a fresh store (opening it included),
warm repeats it in the same process; there is no cached phase (building N lazy steps to have one
takes N step commits: see ``stemma_lazy``).
"""

from __future__ import annotations

import importlib.metadata
import pathlib

from stemma.core import OUT, ArtifactStep, apply, plan

VERSIONS = {"stemma-core": importlib.metadata.version("stemma-core")}


def noop(i: int, out_path: str) -> None:
    pathlib.Path(out_path).write_text(str(i))


def gather(items: list[str], out_path: str) -> None:
    pathlib.Path(out_path).write_text(str(len(items)))


def fanout(n: int) -> ArtifactStep:
    leaves = [apply(name=f"f/{i}", fn=noop, version="v0", i=i, out_path=OUT) for i in range(n)]
    return apply(name="top", fn=gather, version="v0", items=leaves, out_path=OUT)


class StemmaPlan:
    def __init__(self, n: int, workdir: pathlib.Path, workers: int) -> None:
        self.n, self.root = n, workdir / "stemma-root"

    def _plan(self) -> None:
        planned = plan(fanout(self.n), root=self.root)
        assert len(planned) == self.n + 1
        assert all(p.action == "run" for p in planned)

    def cold(self) -> None:
        self._plan()

    def warm(self) -> None:
        self._plan()

    def close(self) -> None:
        pass


def open_workload(n: int, workdir: pathlib.Path, workers: int) -> StemmaPlan:
    return StemmaPlan(n, workdir, workers)
