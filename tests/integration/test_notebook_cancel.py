"""Cancelling from a Jupyter notebook, for real: a kernel started by jupyter_client.

The kernel's Interrupt button is a SIGINT to the kernel. stemma must leave it to the kernel (the
cell ends with ``KeyboardInterrupt``; three presses never reach a hard cancel's exit), cancel
the run at force so no worker runs on, and keep the kernel alive for the next cell.
"""

from __future__ import annotations

import os
import pathlib
import time
from collections.abc import Iterator
from typing import Any

import pytest
from jupyter_client.blocking.client import BlockingKernelClient
from jupyter_client.manager import KernelManager

from stemma.core.live import RunState, RunStatus, list_states
from tests.integration.process_tree import alive, descendants
from tests.integration.run_waits import wait_for_run

HERE = pathlib.Path(__file__).parent

PIPELINE_CELL = """
from stemma.core.examples import DataGenerator, SlowCopy
from stemma.core.front.pipeline import Pipeline

pipeline = Pipeline.create("notebook", root={root!r}, max_workers=2)
generated = pipeline.run(DataGenerator, params={{"count": 4, "rows": 3}})
pipeline.run(SlowCopy, inputs={{"dataset": generated.output("datasets")}}, params={{"seconds": 60}})
"""

LAZY_CELL = """
import cancellable_lazy

cancellable_lazy.main({root!r}, 60.0, {counter!r}, False)
"""


@pytest.fixture
def kernel(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[KernelManager, BlockingKernelClient]]:
    """A real IPython kernel whose files (connection, history, profile) stay under tmp_path."""
    (tmp_path / "jupyter").mkdir()
    for variable, folder in [
        ("JUPYTER_RUNTIME_DIR", "runtime"),
        ("JUPYTER_DATA_DIR", "data"),
        ("JUPYTER_CONFIG_DIR", "config"),
        ("IPYTHONDIR", "ipython"),
    ]:
        monkeypatch.setenv(variable, str(tmp_path / "jupyter" / folder))
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")  # no migration warning from jupyter_core
    # The lazy cell's functions live in cancellable_lazy.py: its workers import them from here.
    paths = [str(HERE), os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, paths)))
    manager = KernelManager(kernel_name="python3")
    manager.start_kernel(cwd=str(tmp_path))
    client = manager.blocking_client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=120)
        yield manager, client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def _kernel_pid(manager: KernelManager) -> int:
    provisioner: Any = manager.provisioner  # a LocalProvisioner: its process is the kernel
    return int(provisioner.process.pid)


def _workers(kernel_pid: int) -> set[int]:
    """The kernel's worker processes: its descendants but multiprocessing's resource tracker,
    which a kernel keeps for its whole life once any process pool has started."""
    workers: set[int] = set()
    for pid in descendants(kernel_pid):
        try:
            command = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"resource_tracker" not in command:
            workers.add(pid)
    return workers


def _reply(client: BlockingKernelClient, msg_id: str, timeout: float = 60) -> dict[str, Any]:
    """The execute_reply's content for the cell ``msg_id``."""
    deadline = time.monotonic() + timeout
    while True:
        message: dict[str, Any] = client.get_shell_msg(timeout=max(deadline - time.monotonic(), 0))
        if message["parent_header"].get("msg_id") == msg_id:
            return message["content"]


def _next_cell(client: BlockingKernelClient, code: str) -> dict[str, Any]:
    """Run ``code`` as the user's next cell; its execute_reply's content.

    After a cell ends in an error, ipykernel aborts (does not run) the requests that reach it
    before it has left its stop-on-error state, a moment later; a user types the next cell
    seconds later. A reply ``aborted`` means the cell never ran: it is sent again.
    """
    reply = _reply(client, client.execute(code))
    for _ in range(20):
        if reply["status"] != "aborted":
            break
        time.sleep(0.25)
        reply = _reply(client, client.execute(code))
    return reply


def _slow_units_running(state: RunState) -> bool:
    return sum(step.running for step in state.steps if "slow" in step.name) >= 2


def _gone(workers: set[int]) -> bool:
    deadline = time.monotonic() + 15
    while alive(workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(workers)


def _interrupted_cell(
    kernel: tuple[KernelManager, BlockingKernelClient], cell: str, root: pathlib.Path
) -> tuple[RunState, set[int], dict[str, Any]]:
    """Run ``cell``, press Interrupt three times once its slow units run; the cell's reply."""
    manager, client = kernel
    msg_id = client.execute(cell)
    state = wait_for_run(root, _slow_units_running, what="the notebook's run")
    workers = _workers(_kernel_pid(manager))
    assert workers, "the slow units' workers should be running under the kernel"
    for _ in range(3):  # an impatient user: never a hard cancel, never the kernel's end
        manager.interrupt_kernel()
    return state, workers, _reply(client, msg_id)


def test_notebook_interrupt_cancels_a_pipeline_and_the_kernel_lives_on(
    tmp_path: pathlib.Path, kernel: tuple[KernelManager, BlockingKernelClient]
) -> None:
    manager, client = kernel
    root = tmp_path / "root"
    state, workers, reply = _interrupted_cell(kernel, PIPELINE_CELL.format(root=str(root)), root)
    assert reply["status"] == "error"
    assert reply["ename"] == "KeyboardInterrupt"
    assert _gone(workers), f"workers left running: {alive(workers)}"
    assert manager.is_alive()
    reply = _next_cell(client, 'print(pipeline.finalize()["steps"][1]["status"])')
    assert reply["status"] == "ok"  # the kernel answers the next cell
    (after,) = [s for s in list_states(root) if s.run_id == state.run_id]
    assert after.status is RunStatus.CANCELLED
    assert after.cancel_level == 2  # force: never hard
    assert not _workers(_kernel_pid(manager))


def test_notebook_interrupt_cancels_a_lazy_run_and_ends_it_before_the_cell_ends(
    tmp_path: pathlib.Path, kernel: tuple[KernelManager, BlockingKernelClient]
) -> None:
    manager, client = kernel
    root = tmp_path / "root"
    cell = LAZY_CELL.format(root=str(root), counter=str(tmp_path / "calls.txt"))
    state, workers, reply = _interrupted_cell(kernel, cell, root)
    assert reply["status"] == "error"
    assert reply["ename"] == "KeyboardInterrupt"
    (after,) = [s for s in list_states(root) if s.run_id == state.run_id]
    assert after.status is RunStatus.CANCELLED  # the run ended before the cell did
    assert after.cancel_level == 2
    assert _gone(workers), f"workers left running: {alive(workers)}"
    assert _next_cell(client, "1 + 1")["status"] == "ok"
    assert manager.is_alive()
