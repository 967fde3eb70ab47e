"""Run every benchmark: ``python3 scripts/dev.py bench``, or ``uv run python benchmarks/run.py``.

The Pipeline benchmarks take minutes (``bench_dispatch`` runs 1,000-unit steps by default; pass
``--sizes 1000,10000`` to it alone for the 10,000-unit budget figure).
"""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))

import bench_cached_rerun
import bench_commit
import bench_content_id
import bench_dispatch
import bench_lower


def main() -> None:
    """Each benchmark prints its own table."""
    print("== lower(): graph size vs time ==")
    bench_lower.main(sys.argv[1:])
    print("\n== content ids vs raw xxh3_128 ==")
    bench_content_id.main()
    print("\n== commit throughput ==")
    bench_commit.main()
    print("\n== local dispatch: orchestrator time per unit ==")
    bench_dispatch.main([])
    print("\n== fully cached rerun ==")
    bench_cached_rerun.main([])


if __name__ == "__main__":
    main()
