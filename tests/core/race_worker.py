"""A runner process for the race tests: resolve one slow step, print its value.

Run as ``python race_worker.py ROOT STORE_KIND COUNTER_FILE START_FILE``. It waits for
START_FILE to exist so that every runner asks for the step at (nearly) the same moment.
"""

import json
import os
import pathlib
import sys
import time

from stemma.core import OUT, apply, resolve
from stemma.core.store import STORE_ENV, open_run_store


def slow_build(counter: str, out_path: str) -> int:
    with open(counter, "a") as stream:  # one line per execution, from any process
        stream.write(f"{os.getpid()}\n")
    time.sleep(0.3)  # keep the step running while the other runners arrive
    pathlib.Path(out_path).write_text("built")
    return 42


def main() -> None:
    root, kind, counter, start = sys.argv[1:5]
    deadline = time.monotonic() + 60
    while not os.path.exists(start):
        if time.monotonic() > deadline:
            raise SystemExit("start file never appeared")
        time.sleep(0.005)
    step = apply(name="race/slow", fn=slow_build, version="v0", counter=counter, out_path=OUT)
    os.environ[STORE_ENV] = kind
    artifact = resolve(step, store=open_run_store(root))
    print(json.dumps({"value": artifact.value, "path": str(artifact.path())}))


if __name__ == "__main__":
    main()
