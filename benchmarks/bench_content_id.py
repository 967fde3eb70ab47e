"""Budget: content ids at least 80% of raw xxh3_128 throughput on 1 MiB contents (README).

Compares ``stemma.core.content_id`` with ``xxhash.xxh3_128_hexdigest`` called directly, on the
same 1 MiB buffers, interleaved, and reports the median of several rounds and their ratio.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable

import xxhash
from harness import load, spread, write_results

from stemma.core import content_id

MIB = 1 << 20
BUFFERS = 64
ROUNDS = 15


def _throughput(fn: Callable[[bytes], str], buffers: list[bytes]) -> float:
    start = time.perf_counter()
    for buffer in buffers:
        fn(buffer)
    return len(buffers) * MIB / (time.perf_counter() - start) / 1e9


def main() -> dict[str, float]:
    """Print GB/s of both and the ratio; return them."""
    buffers = [os.urandom(MIB) for _ in range(BUFFERS)]
    raw: list[float] = []
    ours: list[float] = []
    for _ in range(ROUNDS):
        raw.append(_throughput(xxhash.xxh3_128_hexdigest, buffers))
        ours.append(_throughput(content_id, buffers))
    ratios = [o / r for o, r in zip(ours, raw, strict=True)]
    result = {
        "raw_gb_s": statistics.median(raw),
        "content_id_gb_s": statistics.median(ours),
        "ratio": statistics.median(ratios),
    }
    print(
        f"raw xxh3_128: {result['raw_gb_s']:.2f} GB/s   "
        f"content_id: {result['content_id_gb_s']:.2f} GB/s   "
        f"ratio: {result['ratio']:.1%} (budget ≥ 80%)   [{load()}]"
    )
    row = {
        **result,
        "raw_gb_s_spread": spread(raw),
        "content_id_gb_s_spread": spread(ours),
        "ratio_spread": spread(ratios),
        "budget_ratio": 0.8,
        "met": result["ratio"] >= 0.8,
        "load": load(),
    }
    write_results(
        "content_id", config={"buffer_bytes": MIB, "buffers": BUFFERS, "rounds": ROUNDS}, rows=[row]
    )
    return result


if __name__ == "__main__":
    main()
