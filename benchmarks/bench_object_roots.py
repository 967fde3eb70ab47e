"""Budget (issue 32): a root in S3 costs at most 2x a local root; requests counted.

On the local S3 server (``scripts/object-stores.sh start``), behind a counting proxy
(``request_counter``), against a local root on this machine's disk, interleaved round by round:

- **a 1,000-unit step**: a Pipeline makes N small metrics (one unit), then ``bench.reads_input``
  reads each and makes one metric from it with lineage (N units, default settings); the second
  step's wall time and the whole job's;
- **the cached rerun of 100 steps x 1,000 artifacts** (``bench_cached_rerun.run_chain``, built
  once per root, then rerun): every step a step-cache hit; rerun in this process (which keeps
  the table handles its earlier runs opened, as a notebook does), then each rerun in a process
  of its own (imports left out), which opens every table it reads.

Requests are counted for each phase (every process's: workers inherit the endpoint), and given
per unit for the step and per step for the rerun.

Each S3 root is in a bucket of its own: moto lists a prefix by scanning every key of its bucket
(a listing costs some 0.75 ms more per 1,000 objects anywhere in the bucket), where S3 lists a
prefix in the same time whatever else the bucket holds. In one shared bucket, every later
root's listings (delta-rs lists a table's log at each open) paid for the earlier roots' objects.

    uv run python benchmarks/bench_object_roots.py [--units 1000] [--steps 100]
        [--artifacts 1000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).parent))  # spawned workers inherit it

from bench_cached_rerun import run_chain
from bench_ops import MakeMetrics, ReadsInput
from harness import load, write_results
from request_counter import RequestCounter

from stemma.core.front.pipeline import Pipeline
from stemma.storage import compact_root

S3 = os.environ.get("STEMMA_TEST_S3_ENDPOINT", "http://127.0.0.1:9310")


def unit_job(root: str, units: int) -> dict[str, float]:
    """The N-unit job on ``root``: its reading step's seconds and the whole job's."""
    began = time.perf_counter()
    pipeline = Pipeline.create("units", root=root, max_workers=2)
    made = pipeline.run(MakeMetrics, params={"count": units})
    step_began = time.perf_counter()
    read = pipeline.run(ReadsInput, inputs={"items": made.output("metrics")})
    step = time.perf_counter() - step_began
    summary = pipeline.finalize()
    assert summary["overall_success"], summary
    assert read.succeeded_count == units, read.succeeded_count
    return {"step_s": step, "job_s": time.perf_counter() - began}


def first_rows(url: str, counter: RequestCounter) -> dict[str, Any]:
    """What the dashboard's first frame reads on a bucket root: the runs list, in a new process.

    ``stemma tui URL`` opens the root's local half and lists its runs from there; the figure is
    that process's time from start to the rows (imports included), and the requests it made.
    """
    code = (
        "import time; t = time.perf_counter(); "
        "from stemma.core.cli import existing_root; "
        "from stemma.tui.client import DashboardClient; "
        f"rows = DashboardClient(existing_root({url!r})).runs(); "
        "print(len(rows), time.perf_counter() - t)"
    )
    counter.take()
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - began
    count, seconds = done.stdout.split()
    assert int(count) >= 1, done.stdout
    return {
        "dashboard_first_rows_s": float(seconds),
        "dashboard_process_s": wall,
        "dashboard_requests": counter.take().get("total", 0),
    }


def new_bucket(name: str) -> str:
    """A new, empty bucket on the S3 server: ``bench-{name}-{random}``."""
    bucket = f"bench-{name}-{uuid.uuid4().hex[:12]}"
    urllib.request.urlopen(urllib.request.Request(f"{S3}/{bucket}", method="PUT"), timeout=10)
    return bucket


def unit_rounds(
    args: argparse.Namespace, scratch: pathlib.Path, counter: RequestCounter
) -> tuple[dict[str, list[float]], dict[str, int], list[dict[str, Any]], str]:
    """The N-unit job on both roots, interleaved; step seconds, the S3 job's requests, rows, and
    the first S3 root (whose runs the dashboard lists)."""
    units: dict[str, list[float]] = {"local": [], "s3": []}
    requests: dict[str, int] = {}
    rows: list[dict[str, Any]] = []
    s3_roots: list[str] = []
    for repeat in range(args.repeats):
        for kind in ("local", "s3"):
            local = str(scratch / f"units-{repeat}")
            root = local if kind == "local" else f"s3://{new_bucket('units')}/units-{repeat}"
            if kind == "s3":
                s3_roots.append(root)
            counter.take()
            got = unit_job(root, args.units)
            if kind == "s3":
                requests = counter.take()
            units[kind].append(got["step_s"])
            rows.append({"job": "units", "root": kind, "repeat": repeat, **got})
            shown = f"step {got['step_s']:.2f}s job {got['job_s']:.2f}s"
            print(f"[{load()}] units {kind} #{repeat}: {shown}")
    return units, requests, rows, s3_roots[0]


def rerun_rounds(
    args: argparse.Namespace, roots: dict[str, Any], counter: RequestCounter
) -> tuple[dict[str, list[float]], dict[str, int], list[dict[str, Any]]]:
    """The chain built once per root, then its cached reruns, interleaved."""
    chain: dict[str, list[float]] = {"local": [], "s3": []}
    requests: dict[str, int] = {}
    rows: list[dict[str, Any]] = []
    for root in roots.values():
        run_chain(root, args.steps, args.artifacts)
        if args.compact:  # what `stemma compact` (or automatic compaction) does
            compact_root(root)
    for repeat in range(args.repeats):
        for kind, root in roots.items():
            counter.take()
            got = run_chain(root, args.steps, args.artifacts)
            if kind == "s3":
                requests = counter.take()
            assert got["cached"] == args.steps, got
            chain[kind].append(got["wall"])
            rows.append(
                {"job": "cached_rerun", "root": kind, "repeat": repeat, "wall_s": got["wall"]}
            )
            print(f"[{load()}] rerun {kind} #{repeat}: {got['wall']:.2f}s")
    return chain, requests, rows


def rerun_in_new_process(root: Any, args: argparse.Namespace) -> float:
    """The chain's cached rerun in a process of its own: its wall time, imports left out.

    The in-process rerun reuses the table handles the earlier runs of the process opened (as a
    notebook or a long-lived driver does); a new process opens each table it reads afresh.
    """
    code = (
        f"import sys; sys.path.insert(0, {str(pathlib.Path(__file__).parent)!r}); "
        "from bench_cached_rerun import run_chain; "
        f"got = run_chain({str(root)!r}, {args.steps}, {args.artifacts}); "
        f"assert got['cached'] == {args.steps}, got; print(got['wall'])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(done.stdout.split()[-1])


def new_process_rounds(
    args: argparse.Namespace, roots: dict[str, Any], counter: RequestCounter
) -> tuple[dict[str, list[float]], dict[str, int], list[dict[str, Any]]]:
    """The cached rerun, each in a new process, on both roots, interleaved."""
    walls: dict[str, list[float]] = {"local": [], "s3": []}
    requests: dict[str, int] = {}
    rows: list[dict[str, Any]] = []
    for repeat in range(args.repeats):
        for kind, root in roots.items():
            counter.take()
            wall = rerun_in_new_process(root, args)
            if kind == "s3":
                requests = counter.take()
            walls[kind].append(wall)
            rows.append(
                {"job": "cached_rerun_new_process", "root": kind, "repeat": repeat, "wall_s": wall}
            )
            print(f"[{load()}] rerun in a new process {kind} #{repeat}: {wall:.2f}s")
    return walls, requests, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--units", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--artifacts", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--compact",
        action="store_true",
        help="compact both roots' tables after building the chain (as `stemma compact` does)",
    )
    args = parser.parse_args()

    counter = RequestCounter(S3).start()
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="bench-object-roots-"))
    os.environ.update(
        AWS_ENDPOINT_URL=counter.endpoint,
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench",
        AWS_REGION="us-east-1",
        AWS_ALLOW_HTTP="true",
        STEMMA_STATE_DIR=str(scratch / "state"),
    )
    units, requests, unit_rows, first_root = unit_rounds(args, scratch, counter)
    roots: dict[str, Any] = {"local": scratch / "chain", "s3": f"s3://{new_bucket('chain')}/chain"}
    chain, rerun_requests, chain_rows = rerun_rounds(args, roots, counter)
    fresh, fresh_requests, fresh_rows = new_process_rounds(args, roots, counter)
    dashboard = first_rows(first_root, counter)
    counter.stop()
    if os.environ.get("BENCH_PATHS"):
        for path, count in counter.paths.most_common(25):
            print(f"{count:6d} {path}")

    median = statistics.median
    summary = {
        "units": args.units,
        "unit_step_local_s": median(units["local"]),
        "unit_step_s3_s": median(units["s3"]),
        "unit_step_ratio": median(units["s3"]) / median(units["local"]),
        "unit_job_requests": requests,
        "requests_per_unit": requests.get("total", 0) / args.units,
        "rerun_local_s": median(chain["local"]),
        "rerun_s3_s": median(chain["s3"]),
        "rerun_ratio": median(chain["s3"]) / median(chain["local"]),
        "rerun_requests": rerun_requests,
        "requests_per_cached_step": rerun_requests.get("total", 0) / args.steps,
        "rerun_new_process_local_s": median(fresh["local"]),
        "rerun_new_process_s3_s": median(fresh["s3"]),
        "rerun_new_process_ratio": median(fresh["s3"]) / median(fresh["local"]),
        "rerun_new_process_requests": fresh_requests,
        **dashboard,
    }
    for key, value in summary.items():
        print(f"{key}: {value:.3f}" if isinstance(value, float) else f"{key}: {value}")
    name = "object_roots_compacted" if args.compact else "object_roots"
    write_results(
        name, config=vars(args), rows=[*unit_rows, *chain_rows, *fresh_rows, {"summary": summary}]
    )


if __name__ == "__main__":
    main()
