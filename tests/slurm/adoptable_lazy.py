"""A lazy graph on backend="slurm" whose six leaves take a few seconds each.

``python adoptable_lazy.py ROOT SECONDS``: six ``slow_square`` steps (``adoption_tasks``: each
start leaves a file in ``$STEMMA_TEST_RAN_DIR``), three elements at a time, then their total.
Prints the run's total on the last line.
"""

import sys

from adoption_tasks import slow_square
from lazy_tasks import total

from stemma.core import OUT, apply, run


def main(root: str, seconds: float) -> None:
    leaves = [
        apply(f"slow/{i}", slow_square, version="v0", i=i, seconds=seconds, out_path=OUT)
        for i in range(6)
    ]
    top = apply("total", total, version="v0", items=leaves, out_path=OUT)
    (built,) = run(top, root=root, backend="slurm", max_workers=3)
    print(built.value, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]))
