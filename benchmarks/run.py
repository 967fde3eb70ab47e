"""Run every benchmark: ``python3 scripts/dev.py bench``, or ``uv run python benchmarks/run.py``."""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))

import bench_content_id
import bench_lower


def main() -> None:
    """Each benchmark prints its own table."""
    print("== lower(): graph size vs time ==")
    bench_lower.main(sys.argv[1:])
    print("\n== content ids vs raw xxh3_128 ==")
    bench_content_id.main()


if __name__ == "__main__":
    main()
