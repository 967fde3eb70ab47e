"""A lazy graph with slow middle steps, run in a subprocess by the lazy cancellation tests.

``python cancellable_lazy.py ROOT SECONDS COUNTER [stubborn]``: one quick step, four slow steps
that read it (each sleeps SECONDS; 2 workers, so 2 run while 2 wait; ``stubborn``: they ignore
SIGTERM), and one step over the four. Each slow call appends a line to COUNTER. The script is
what a user writes: it does not catch what ``run()`` raises.
"""

import os
import pathlib
import signal
import sys
import time

from stemma.core import OUT, apply, run


def first(out_path: str) -> str:
    pathlib.Path(out_path).write_text("seed")
    return "seed"


def slow(seed: str, index: int, seconds: float, counter: str, stubborn: bool, out_path: str) -> int:
    if stubborn:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with open(counter, "a") as stream:
        stream.write(f"{index} {os.getpid()}\n")
    time.sleep(seconds)
    pathlib.Path(out_path).write_text(pathlib.Path(seed).read_text() + str(index))
    return index


def gather(parts: list[str], out_path: str) -> int:
    pathlib.Path(out_path).write_text("".join(pathlib.Path(p).read_text() for p in parts))
    return len(parts)


def main(root: str, seconds: float, counter: str, stubborn: bool) -> None:
    seed = apply("seed", first, version="v0", out_path=OUT)
    parts = [
        apply(
            f"slow/{i}",
            slow,
            version="v0",
            seed=seed,
            index=i,
            seconds=seconds,
            counter=counter,
            stubborn=stubborn,
            out_path=OUT,
        )
        for i in range(4)
    ]
    top = apply("gather", gather, version="v0", parts=parts, out_path=OUT)
    print(run(top, root=root, max_workers=2, name="cancellable")[0].value, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4:] == ["stubborn"])
