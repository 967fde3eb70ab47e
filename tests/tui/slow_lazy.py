"""A lazy graph slow enough to watch and cancel: `python slow_lazy.py ROOT`.

Six one-second function steps on one worker, then one step over them: the dashboard sees a
lazy run like any other, and a cancel lands while most of them wait.
"""

import pathlib
import sys
import time

from stemma.core import OUT, apply, run

STEPS = 6


def wait_a_second(index: int, out_path: str) -> int:
    time.sleep(1.0)
    pathlib.Path(out_path).write_text(str(index))
    return index


def total(parts: list[str], out_path: str) -> int:
    pathlib.Path(out_path).write_text(str(len(parts)))
    return len(parts)


def main(root: str) -> None:
    parts = [
        apply(f"wait/{i}", wait_a_second, version="v0", index=i, out_path=OUT) for i in range(STEPS)
    ]
    run(apply("total", total, version="v0", parts=parts, out_path=OUT), root=root, max_workers=1)


if __name__ == "__main__":
    main(sys.argv[1])
