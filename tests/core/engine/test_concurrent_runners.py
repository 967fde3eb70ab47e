import json
import pathlib
import subprocess
import sys
import threading
import time

from stemma.core import OUT, apply, resolve
from stemma.core.store import open_run_store

WORKER = pathlib.Path(__file__).parent.parent / "race_worker.py"


def _race_in_processes(
    tmp_path: pathlib.Path, kind: str, runners: int = 10
) -> tuple[list[str], list[dict[str, object]]]:
    counter = tmp_path / "executions.txt"
    start = tmp_path / "go"
    processes = [
        subprocess.Popen(
            [sys.executable, str(WORKER), str(tmp_path / "root"), kind, str(counter), str(start)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(runners)
    ]
    start.touch()
    results: list[dict[str, object]] = []
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    return counter.read_text().splitlines(), results


def test_ten_runner_processes_execute_one_step_exactly_once(tmp_path: pathlib.Path) -> None:
    executions, results = _race_in_processes(tmp_path, "sqlite")
    assert len(executions) == 1
    assert len(results) == 10
    assert {r["value"] for r in results} == {42}
    assert len({r["path"] for r in results}) == 1


def test_ten_runner_threads_execute_one_step_exactly_once(tmp_path: pathlib.Path) -> None:
    executions: list[int] = []
    lock = threading.Lock()
    start = threading.Event()

    def build(out_path: str) -> int:
        with lock:
            executions.append(1)
        time.sleep(0.2)  # keep the step running while the other runners arrive
        pathlib.Path(out_path).write_text("built")
        return 7

    values: list[object] = []
    errors: list[BaseException] = []

    def runner() -> None:
        start.wait()
        try:
            step = apply(name="race/threads", fn=build, version="v0", out_path=OUT)
            store = open_run_store(tmp_path / "root")
            values.append(resolve(step, store=store, backend="local-thread").value)
        except BaseException as err:  # surfaced below
            errors.append(err)

    threads = [threading.Thread(target=runner) for _ in range(10)]
    for thread in threads:
        thread.start()
    start.set()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert values == [7] * 10
    assert len(executions) == 1
