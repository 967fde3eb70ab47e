"""A two-step pipeline whose orchestrator SIGKILLs itself part-way through a step's commit.

Run as ``python commit_order_runner.py ROOT JOURNAL [KILL...]``. The pipeline generates three
datasets, then transforms each in its own unit and bundle (the step whose commit is cut). Every
Delta append a commit makes is written to JOURNAL (one JSON line: table, transaction, whether
rows landed) before the call returns, so the test knows the transaction it cut. KILL is one of:

- ``wave W K``: die right after the K-th Delta append of the W-th wave committed (Delta store);
- ``call TARGET N``: die right after the N-th call of TARGET, ``module:attribute`` (any store).

Without KILL the pipeline runs to completion. The store is the default one (``STEMMA_STORE``
chooses, and the workers inherit it). The patch lives here, in the harness, never in production
code: it replaces a module attribute the commit code looks up at each call.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stemma.core.examples import DataGenerator, Transform
from stemma.core.front.pipeline import Pipeline

WAVE_PREFIX = "stemma-wave-"


def run_pipeline(root: str) -> None:
    """Generate three datasets and transform each (one bundle per unit)."""
    pipeline = Pipeline.create("order", root=root, max_workers=1)
    generated = pipeline.run(DataGenerator, params={"count": 3, "rows": 4})
    pipeline.run(
        Transform,
        inputs={"dataset": generated.output("datasets")},
        params={"scale": 2.0},
        execution={"artifacts_per_unit": 1, "units_per_worker": 1},
    )
    summary = pipeline.finalize()
    if not summary["overall_success"]:
        raise RuntimeError(f"the pipeline did not succeed: {summary}")


def journal_appends(journal: Path, kill_at: tuple[int, int] | None) -> None:
    """Journal every Delta append of a commit; with ``(W, K)``, die after wave W's K-th."""
    commit: Any = importlib.import_module("stemma.storage.commit")  # where commit_frames looks
    original: Callable[..., bool] = commit.append_rows
    waves: list[str] = []
    appends: dict[str, int] = {}

    @functools.wraps(original)
    def journaled(layout: Any, spec: Any, frame: Any, *, app_id: str | None = None) -> bool:
        wrote = original(layout, spec, frame, app_id=app_id)
        line = json.dumps({"table": spec.name, "transaction": app_id, "wrote": wrote})
        with journal.open("a") as out:
            out.write(line + "\n")
            out.flush()
            os.fsync(out.fileno())
        if app_id is not None and app_id.startswith(WAVE_PREFIX):
            if app_id not in waves:
                waves.append(app_id)
            appends[app_id] = appends.get(app_id, 0) + 1
            if kill_at == (waves.index(app_id) + 1, appends[app_id]):
                os.kill(os.getpid(), signal.SIGKILL)
        return wrote

    commit.append_rows = journaled


def die_after_call(target: str, nth: int) -> None:
    """Replace ``target`` (``module:attribute``) so its ``nth`` call SIGKILLs this process."""
    module_name, _, attribute = target.partition(":")
    owner: Any = importlib.import_module(module_name)
    original: Callable[..., Any] = getattr(owner, attribute)
    calls = 0

    @functools.wraps(original)
    def dying(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        result = original(*args, **kwargs)
        calls += 1
        if calls == nth:
            os.kill(os.getpid(), signal.SIGKILL)
        return result

    setattr(owner, attribute, dying)


def main(argv: list[str]) -> None:
    """Parse the command line (see the module docstring) and run."""
    root, journal, *kill = argv
    if kill[:1] == ["call"]:
        die_after_call(kill[1], int(kill[2]))
    elif kill[:1] == ["wave"]:
        journal_appends(Path(journal), (int(kill[1]), int(kill[2])))
    elif not kill and os.environ.get("STEMMA_STORE", "delta") == "delta":
        journal_appends(Path(journal), None)
    run_pipeline(root)


if __name__ == "__main__":
    main(sys.argv[1:])
