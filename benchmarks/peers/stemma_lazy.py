"""stemma's lazy front door on the N-no-op-task workload: N function steps and one top step.

Not in the default comparison (``bench_peers.py --tasks stemma_units,stemma_lazy,...`` adds it):
a lazy step is a step, with its own record and commit, not a unit of a step, so it is the
per-step overhead, not the per-task one. cold runs N no-op steps over inputs 0..N-1 in a fresh
store, warm N others (N..2N-1), cached the warm graph again (every step already built).
"""

from __future__ import annotations

import importlib.metadata
import pathlib

from stemma.core import OUT, ArtifactStep, apply, run

VERSIONS = {"stemma-core": importlib.metadata.version("stemma-core")}


def noop(i: int, out_path: str) -> None:
    pathlib.Path(out_path).write_text(str(i))


def gather(items: list[str], out_path: str) -> None:
    pathlib.Path(out_path).write_text(str(len(items)))


def fanout(start: int, n: int) -> ArtifactStep:
    leaves = [
        apply(name=f"f/{i}", fn=noop, version="v0", i=i, out_path=OUT)
        for i in range(start, start + n)
    ]
    return apply(name=f"top/{start}", fn=gather, version="v0", items=leaves, out_path=OUT)


class StemmaLazy:
    def __init__(self, n: int, workdir: pathlib.Path, workers: int) -> None:
        self.n, self.root, self.workers = n, workdir / "stemma-root", workers

    def _run(self, start: int) -> None:
        run(fanout(start, self.n), root=self.root, max_workers=self.workers)

    def cold(self) -> None:
        self._run(0)

    def warm(self) -> None:
        self._run(self.n)

    def cached(self) -> str:
        self._run(self.n)
        return "the warm graph again: every step already built"

    def close(self) -> None:
        pass


def open_workload(n: int, workdir: pathlib.Path, workers: int) -> StemmaLazy:
    return StemmaLazy(n, workdir, workers)
