"""Issue 19: a SLURM step of N short units with default settings, its elements sized by stemma.

The job a user writes: ``Pipeline.create(backend="slurm")``, one ``bench_ops.MakeMetrics``
step making N metrics, one ``bench_ops.NoOpUnit`` step over them with ``artifacts_per_unit=1``
and ``units_per_worker`` left unset, then ``finalize``. Run twice on one root: **cold** (no
history: a probe of single-unit elements, then the rest sized from it) and **warm** (another
``tag``, so the units run again, sized from the first run's record at once).

Counted for the no-op step through logging wrappers first on ``PATH`` (the commands a user's
run calls, unchanged): ``sbatch`` calls and the elements of each array (from the ``--array``
line of each submitted script); and the orchestrator's CPU seconds (``time.process_time`` of
this process, which runs the orchestrator) and wall seconds for the step.

    python benchmarks/bench_slurm_waves.py [--sizes 10000,100000]

Needs the development cluster (``bash scripts/slurm-dev-cluster.sh start``).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).parent))  # SLURM jobs import bench_ops by name

from bench_lazy_slurm import command_wrappers
from harness import Table, load, write_results

from stemma.core.front.pipeline import Pipeline

_ARRAY = re.compile(r"^#SBATCH --array=(\d+)-(\d+)", re.MULTILINE)


def _arrays(log: pathlib.Path, seen: int) -> list[int]:
    """Elements per sbatch call logged after the first ``seen`` ones (a lone job: 1)."""
    calls = [line.split(" ") for line in log.read_text().splitlines() if line.startswith("sbatch")]
    counts: list[int] = []
    for call in calls[seen:]:
        found = _ARRAY.search(pathlib.Path(call[-1]).read_text())
        counts.append(1 if found is None else int(found[2]) - int(found[1]) + 1)
    return counts


def one_step(root: pathlib.Path, units: int, tag: int, log: pathlib.Path) -> dict[str, Any]:
    """One pipeline; the no-op step's sbatch calls, elements, orchestrator CPU and wall."""
    from bench_ops import MakeMetrics, NoOpUnit

    pipeline = Pipeline.create("waves", root=root, backend="slurm")
    made = pipeline.run(MakeMetrics, params={"count": units})
    assert made.success, made.metadata
    before = len(_arrays(log, 0)) if log.exists() else 0
    cpu, wall = time.process_time(), time.perf_counter()
    step = pipeline.run(
        NoOpUnit,
        params={"tag": tag},
        inputs={"items": made.output("metrics")},
        execution={"artifacts_per_unit": 1},
    )
    assert step.success, step
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    pipeline.finalize()
    arrays = _arrays(log, before)
    return {
        "units": units,
        "sbatch_calls": len(arrays),
        "elements_per_array": arrays,
        "elements": sum(arrays),
        "orchestrator_cpu_s": cpu,
        "wall_s": wall,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    args = parser.parse_args()
    table = Table(
        [
            ("units", ">8,"),
            ("run", ">5"),
            ("sbatch", ">6"),
            ("elements", ">20"),
            ("orch CPU s", ">10.2f"),
            ("wall s", ">8.1f"),
        ]
    )
    rows: list[dict[str, Any]] = []
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            workdir = pathlib.Path(tmp)
            (workdir / "bin").mkdir()
            log = workdir / "commands.log"
            command_wrappers(workdir / "bin", log)
            os.environ["PATH"] = f"{workdir / 'bin'}{os.pathsep}{os.environ['PATH']}"
            for run, tag in (("cold", 1), ("warm", 2)):
                row = {"run": run, **one_step(workdir / "root", size, tag, log), "load": load()}
                rows.append(row)
                table.row(
                    {
                        "units": size,
                        "run": run,
                        "sbatch": row["sbatch_calls"],
                        "elements": " + ".join(str(n) for n in row["elements_per_array"]),
                        "orch CPU s": row["orchestrator_cpu_s"],
                        "wall s": row["wall_s"],
                    }
                )
    write_results("slurm_waves", config={"sizes": args.sizes}, rows=rows)


if __name__ == "__main__":
    main()
