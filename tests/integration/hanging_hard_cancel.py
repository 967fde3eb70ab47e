"""A pipeline whose backend never answers a hard cancel, for the backstop test.

``python hanging_hard_cancel.py ROOT BACKSTOP``: as ``cancellable_pipeline.py`` with 60 s
copies that ignore SIGTERM (so a force press does not end them within its grace), but the local
backend's level-3 cancel blocks for ever, as a scheduler client can on a controller that no
longer answers; the hard press's backstop is BACKSTOP seconds.
"""

import sys
import threading

from fault_operations import StubbornSlowCopy

from stemma.core.backends.local import LocalBackend
from stemma.core.cancel_levels import CancelLevel
from stemma.core.engine.cancel import cancellation
from stemma.core.examples import DataGenerator
from stemma.core.front.pipeline import Pipeline

_cancel = LocalBackend.cancel


def _never_answers(self: LocalBackend, level: CancelLevel) -> None:
    if level is CancelLevel.HARD:
        threading.Event().wait()
    _cancel(self, level)


def main(root: str, backstop: float) -> None:
    cancellation.HARD_BACKSTOP = backstop
    LocalBackend.cancel = _never_answers
    pipeline = Pipeline.create("hanging", root=root, max_workers=2)
    print(pipeline.run_id, flush=True)
    generated = pipeline.run(DataGenerator, params={"count": 4, "rows": 5})
    pipeline.run(
        StubbornSlowCopy, inputs={"dataset": generated.output("datasets")}, params={"seconds": 60}
    )
    print("finished", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]))
