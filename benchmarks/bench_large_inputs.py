"""Budget (issue 34): a unit reads a large input at >= 50 % of the disk's sequential read speed,
with no extra copy of its bytes in the orchestrator.

For each size (1 MB and 100 MB by default), on a local root:

- a Pipeline makes ``count`` data artifacts of that many pseudo-random bytes (untimed: CSV of random
  hex, which compresses about 2:1);
- then, interleaved ``--repeats`` times, each in a new process (the orchestrator's peak memory
  is its own): a step of ``count`` ``bench.reads_data`` units, each reading its input's content
  (``item.content``) and making one small metric, and the same step of ``bench.dry_data`` units
  (``hydrate=False``: the input's row without its content). One worker, so the units' reads
  follow one another as ``cat``'s do; otherwise default settings.

A unit's read is (reads step - dry step) ÷ count; the read speed is the size over it. Beside it,
the disk's: ``cat FILE > /dev/null`` of ``count`` files of the same sizes, one after another as
the units' reads come (minus ``cat /dev/null``, a process's start), a round's mean the figure,
the median of rounds compared. Cold by default: before every step and every round of ``cat``,
the files read are evicted from the page cache (``posix_fadvise(DONTNEED)`` on every file under
the root, and on ``cat``'s), so both read the disk, and the program's own files (Python,
polars, delta-rs) stay cached as in any run past its first second; ``--drop-all`` drops the
whole page cache instead (root only: ``/proc/sys/vm/drop_caches``), so a step also reads its
libraries from the disk; ``--warm`` leaves the cache as it is for both. The orchestrator's
extra copy is its peak resident set in the reads step minus the dry step's.

    uv run python benchmarks/bench_large_inputs.py [--sizes 1000000,100000000]
        [--counts 32,2] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).parent))  # spawned workers inherit it

from bench_ops import DryData, MakeData, ReadsData, random_csv
from harness import load, peak_rss_mb, write_results

from stemma.core.front.pipeline import Pipeline


def make_inputs(root: pathlib.Path, size: int, count: int) -> None:
    """The step that makes the inputs (a later process finds it built)."""
    pipeline = Pipeline.create("large", root=root, max_workers=1)
    pipeline.run(MakeData, params={"count": count, "size": size})
    assert pipeline.finalize()["overall_success"]


def child(root: pathlib.Path, size: int, count: int, kind: str, tag: int) -> dict[str, Any]:
    """One timed step in this process: ``reads`` or ``dry`` units over the inputs."""
    pipeline = Pipeline.create("large", root=root, max_workers=1)
    made = pipeline.run(MakeData, params={"count": count, "size": size})
    operation = ReadsData if kind == "reads" else DryData
    began = time.perf_counter()
    read = pipeline.run(operation, inputs={"data": made.output("data")}, params={"tag": tag})
    step = time.perf_counter() - began
    assert pipeline.finalize()["overall_success"]
    assert read.succeeded_count == count, read.succeeded_count
    return {"step_s": step, "peak_rss_mb": peak_rss_mb()}


def run_child(root: pathlib.Path, size: int, count: int, kind: str, tag: int) -> dict[str, Any]:
    command = [
        sys.executable,
        __file__,
        "--child",
        str(root),
        str(size),
        str(count),
        kind,
        str(tag),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def drop_caches() -> bool:
    """Empty the whole page cache (the next read of anything is the disk's); False if barred."""
    try:
        subprocess.run(["sync"], check=True)
        pathlib.Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError:
        return False
    return True


def evict(paths: list[pathlib.Path]) -> None:
    """Drop these files (and every file under those that are folders) from the page cache."""
    os.sync()  # a dirty page is not dropped
    for path in paths:
        for file in path.rglob("*") if path.is_dir() else [path]:
            if file.is_file():
                descriptor = os.open(file, os.O_RDONLY)
                try:
                    os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
                finally:
                    os.close(descriptor)


SETTLE_SECONDS = 0.5
"""How long after the files are evicted a round of ``cat`` starts: about when a step's first
unit reads its input (the step's process and its worker start in between). This machine's disk
answers a read that comes half a second after an idle spell up to 0.3 s late now and then, most
often at the third or fourth 100 MB read in a row (``cat`` and the units alike); reads that come
at once after the eviction never were."""


def cat_seconds(files: list[pathlib.Path], cold: Callable[[], None] | None, rounds: int) -> float:
    """Median over rounds of a ``cat FILE > /dev/null``'s mean over ``files``, read in order."""

    def timed(target: pathlib.Path | str) -> float:
        began = time.perf_counter()
        subprocess.run(["cat", str(target)], stdout=subprocess.DEVNULL, check=True)
        return time.perf_counter() - began

    empty = statistics.median(timed("/dev/null") for _ in range(7))
    if cold is None:
        for file in files:
            timed(file)  # warm the page cache
    means: list[float] = []
    for _ in range(rounds):
        if cold is not None:
            cold()
            time.sleep(SETTLE_SECONDS)
        means.append(statistics.fmean(timed(file) for file in files) - empty)
    return max(statistics.median(means), 1e-6)


def cooler(mode: str, paths: list[pathlib.Path]) -> Callable[[], None] | None:
    """What makes ``paths`` cold before a step or a round of ``cat`` (None: ``warm``)."""
    if mode == "files":
        return lambda: evict(paths)
    if mode == "all":

        def drop_all() -> None:
            drop_caches()

        return drop_all
    return None


def measure_size(
    scratch: pathlib.Path, size: int, count: int, repeats: int, mode: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    root = scratch / f"root {size}"
    make_inputs(root, size, count)
    cool = cooler(mode, [root])
    rows: list[dict[str, Any]] = []
    steps: dict[str, list[float]] = {"reads": [], "dry": []}
    peaks: dict[str, list[float]] = {"reads": [], "dry": []}
    for repeat in range(repeats):
        for kind in ("reads", "dry"):
            if cool is not None:
                cool()
            got = run_child(root, size, count, kind, tag=repeat + 1)
            steps[kind].append(got["step_s"])
            peaks[kind].append(got["peak_rss_mb"])
            rows.append({"size": size, "count": count, "kind": kind, "repeat": repeat, **got})
            print(f"[{load()}] {size:,} B x {count} {kind} #{repeat}: {got['step_s']:.3f}s")
    rng = random.Random(0)  # what MakeData's hold, one file each
    samples = [scratch / f"sample {size} {i}.bin" for i in range(count)]
    for sample in samples:
        sample.write_bytes(random_csv(rng, size))
    cat = cat_seconds(samples, cooler(mode, samples), rounds=max(repeats, 5))
    median = statistics.median
    read_s = max(median(steps["reads"]) - median(steps["dry"]), 1e-6) / count
    summary = {
        "size": size,
        "count": count,
        "cold": mode,
        "reads_step_s": median(steps["reads"]),
        "dry_step_s": median(steps["dry"]),
        "read_s_per_unit": read_s,
        "read_mb_s": size / read_s / 1e6,
        "cat_s": cat,
        "cat_mb_s": size / cat / 1e6,
        "share_of_cat": cat / read_s,
        "orchestrator_extra_mb": median(peaks["reads"]) - median(peaks["dry"]),
    }
    return summary, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="1000000,100000000")
    parser.add_argument("--counts", default="32,2", help="units per size, in the same order")
    parser.add_argument("--repeats", type=int, default=5)
    caches = parser.add_mutually_exclusive_group()
    caches.add_argument("--warm", action="store_true", help="leave the page cache as it is")
    caches.add_argument(
        "--drop-all", action="store_true", help="drop the whole page cache, libraries too (root)"
    )
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        root, size, count, kind, tag = args.child
        print(json.dumps(child(pathlib.Path(root), int(size), int(count), kind, int(tag))))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    counts = [int(c) for c in args.counts.split(",")]
    summaries: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    mode = "warm" if args.warm else "all" if args.drop_all and drop_caches() else "files"
    if args.drop_all and mode != "all":
        parser.error("--drop-all needs the right to write /proc/sys/vm/drop_caches (root)")
    # (the inputs take hundreds of MB: gone with the run)
    with tempfile.TemporaryDirectory(prefix="bench-large-inputs-") as scratch:
        for size, count in zip(sizes, counts, strict=True):
            summary, measured = measure_size(pathlib.Path(scratch), size, count, args.repeats, mode)
            summaries.append(summary)
            rows.extend(measured)
            for key, value in summary.items():
                shown = f"{value:.4f}" if isinstance(value, float) else value
                print(f"  {key}: {shown}")
    write_results("large_inputs", config=vars(args), rows=[*rows, *summaries])


if __name__ == "__main__":
    main()
