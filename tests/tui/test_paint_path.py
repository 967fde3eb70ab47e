"""What keeps the first paint fast on a big root: state files first, no Delta or polars on the
paint path, and a history caught up by reading only what each commit added."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stemma.core.examples import DataGenerator
from stemma.core.front.pipeline import Pipeline
from stemma.storage.queries import steps
from stemma.tui.client import DashboardClient
from stemma.tui.client.steps_log import StepsLog

from .conftest import FilledStore, live_state

PROBE = """
import json, sys
from pathlib import Path
import stemma.tui.app
from stemma.tui.client import DashboardClient
rows = DashboardClient(Path(sys.argv[1])).live_runs(10)
later = ('polars', 'pyarrow', 'deltalake', 'stemma.storage', 'stemma.tui.screens.step',
         'stemma.tui.screens.artifact', 'stemma.tui.screens.run', 'textual.widgets._tabbed_content',
         'stemma.core.store.opening', 'stemma.core.store.protocols',
         'stemma.core.store.history_source', 'stemma.core.execution_records',
         'stemma.core.runs.launching', 'importlib.metadata')
heavy = sorted(m for m in later if m in sys.modules)
print(json.dumps({"rows": len(rows), "heavy": heavy}))
"""


def test_the_app_and_the_first_runs_read_load_no_polars_delta_storage_or_other_screens(
    filled: FilledStore,
) -> None:
    # Nor the history's store (opening one reads the entry points' metadata), the execution
    # records or launching (~15 ms together): the first frame paints from state files alone.
    # (`stemma.core.store` itself is a package whose names load on first use: what a store
    # was before issue 31's layout is `store.opening` and `store.protocols`.)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(filled.root)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert json.loads(done.stdout) == {"rows": 1, "heavy": []}


COMMAND_PROBE = """
import json, sys
from stemma.core.cli.main import main
try:
    main(["--root", "r", "tui", "--help"])
except SystemExit as done:
    code = done.code
heavy = ("polars", "pyarrow", "pydantic", "stemma.storage", "stemma.core.cli.plan_commands")
print(json.dumps({"code": code, "heavy": sorted(m for m in heavy if m in sys.modules)}))
"""


def test_the_tui_command_loads_no_other_command_and_no_polars_or_pydantic() -> None:
    # `stemma tui` used to import every subcommand's module (storage's load polars and
    # pyarrow, plan's pydantic): ~0.8 s before the dashboard even started.
    done = subprocess.run(
        [sys.executable, "-c", COMMAND_PROBE],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    probed = json.loads(done.stdout.splitlines()[-1])
    assert probed == {"code": 0, "heavy": []}
    assert "usage: stemma tui" in done.stdout


def test_live_runs_newest_reads_only_the_most_recently_written_state_files(
    tmp_path: Path,
) -> None:
    ids = [f"r_20261129_12000{i}_0000000{i}" for i in range(5)]
    for age, run_id in enumerate(reversed(ids)):
        state = live_state(tmp_path, run_id)
        path = tmp_path / "runs" / state.run_id / "state.json"
        os.utime(path, ns=(10**18 - age * 10**9, 10**18 - age * 10**9))
    client = DashboardClient(tmp_path)
    assert {row.run_id for row in client.live_runs(2)} == set(ids[-2:])
    assert {row.run_id for row in client.live_runs()} == set(ids)


@pytest.mark.parametrize("name", ["store", "my store"])  # delta-rs escapes a space in its URIs
def test_the_steps_log_reads_only_the_files_a_new_commit_added(
    filled: FilledStore, tmp_path: Path, name: str
) -> None:
    root = tmp_path / name
    shutil.copytree(filled.root, root)
    log = StepsLog(root)
    first = log.frame()
    assert first.height == steps(root).height
    files = log.files_read
    assert files > 2
    pipeline = Pipeline.create("again", root=root, max_workers=1)
    pipeline.run(DataGenerator, params={"count": 1, "rows": 2, "seed": 7})
    pipeline.finalize()
    caught_up = log.frame()
    assert caught_up.sort("timestamp").equals(steps(root).sort("timestamp"))
    assert caught_up.height > first.height
    assert 0 < log.files_read - files < files  # the new commits' files only, not all again


def test_history_rows_caught_up_incrementally_match_a_full_aggregation(
    filled: FilledStore, tmp_path: Path
) -> None:
    from stemma.tui.client.history_rows import rows_from_steps_table

    root = tmp_path / "store"
    shutil.copytree(filled.root, root)
    client = DashboardClient(root)
    assert [row.run_id for row in client.runs()] == [filled.run_id]
    pipeline = Pipeline.create("again", root=root, max_workers=1)
    pipeline.run(DataGenerator, params={"count": 1, "rows": 2, "seed": 8})
    pipeline.finalize()
    shutil.rmtree(root / "runs")  # rows from history alone, as on a root without state files
    caught_up = sorted(client.runs(), key=lambda row: row.run_id)
    full = sorted(rows_from_steps_table(steps(root)), key=lambda row: row.run_id)
    assert caught_up == full
    assert len(full) == 2


GC_PROBE = """
import gc, json, sys
import stemma.tui.opening
from stemma.core.cli.main import main
from stemma.tui.screens.runs import RunsScreen

seen = {}
collections = [0]

def count(phase, info):
    collections[0] += phase == "stop"

gc.callbacks.append(count)
resolve = stemma.tui.opening.resolve_opening
shown = RunsScreen.after_first_frame

def resolve_opening(*args):  # the command calls it once it has paused collection
    seen["before"] = (collections[0], gc.isenabled())
    return resolve(*args)

async def after_first_frame(self):  # the runs screen's, once its first frame was drawn
    seen["first_frame"] = (collections[0], gc.isenabled())
    await shown(self)
    self.app.exit()

stemma.tui.opening.resolve_opening = resolve_opening
RunsScreen.after_first_frame = after_first_frame
code = main(["--root", sys.argv[1], "tui"])
seen["after"] = gc.isenabled()
with open(sys.argv[2], "w") as out:
    json.dump({"code": code, **seen}, out)
"""


def test_stemma_tui_collects_no_garbage_before_its_first_frame_and_collects_after(
    tmp_path: Path,
) -> None:
    # ~150 collections walked the ~60,000 objects of Textual's start-up again and again:
    # 70-100 ms of a 0.5 s first paint. Reference counting frees the rest meanwhile.
    live_state(tmp_path)
    out = tmp_path / "seen.json"
    master, slave = os.openpty()
    process = subprocess.Popen(
        [sys.executable, "-c", GC_PROBE, str(tmp_path), str(out)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,  # the pty is its terminal, as in a shell
    )
    os.close(slave)
    drawn = _drain_until_exit(master, process)
    assert process.returncode == 0, drawn[-2000:]
    seen = json.loads(out.read_text())
    collections, enabled = seen["before"]
    assert enabled is False  # paused before Textual's screens were built
    assert seen["first_frame"] == [collections, True]  # none until then; back on after
    assert seen["after"] is True
    assert seen["code"] == 0


def _drain_until_exit(master: int, process: subprocess.Popen[bytes]) -> str:
    """What the process drew on the pty until it exited (read, so its writes never block)."""
    drawn = bytearray()
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    drawn += os.read(master, 65536)
                except OSError:  # the other side closed: the process is gone
                    break
            elif process.poll() is not None:
                break
        process.wait(timeout=max(deadline - time.monotonic(), 1))
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()
    return drawn.decode(errors="replace")
