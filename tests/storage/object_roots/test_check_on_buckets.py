"""``stemma check`` on a root in S3 or Azure: the tables read in the bucket, damage named by URL.

Against the real S3 server and Azurite on 127.0.0.1 (``scripts/object-stores.sh``), after real
runs, through the ``stemma check`` command in a process of its own (with and without
``RUST_BACKTRACE``, as the local damage tests run it) and through ``check_root``. The damage is
done in the bucket with obstore, as a bad copy or a stray delete would.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks.request_counter import RequestCounter
from stemma.core import apply, run
from stemma.core.exit_codes import ExitCode
from stemma.storage import check_root, steps
from stemma.storage.check_findings import Severity
from stemma.storage.errors import DamagedTableError
from tests.core.lazy_functions import CALLS_ENV
from tests.storage.object_roots.lazy_steps import square

NATIVE_WORDS = ("panicked", "thread '", "RUST_BACKTRACE", "stack backtrace", "Traceback")
"""What a Rust panic (or a Python traceback) prints; none of it may reach a user."""


@pytest.fixture(autouse=True)
def _calls_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "calls").mkdir()
    monkeypatch.setenv(CALLS_ENV, str(tmp_path / "calls"))


def _store(root: str) -> Any:
    """The bucket root as obstore reaches it from the user's environment (as the tests' helper)."""
    from obstore.store import from_url

    return from_url(root)


def _objects(root: str) -> dict[str, tuple[int, str | None]]:
    """Every object under ``root``: its size and ETag (what a write would change)."""
    import obstore

    return {
        str(meta["path"]): (int(meta["size"]), meta["e_tag"])
        for batch in obstore.list(_store(root))
        for meta in batch
    }


def _data_files(root: str, table: str) -> list[str]:
    return sorted(
        key
        for key in _objects(root)
        if key.startswith(f"delta/{table}/part-") and ".parquet" in key
    )


def _filled(root: str, steps: int = 1) -> None:
    for number in range(steps):  # a run each: a commit each in every table
        run(apply(name=f"squares/{number}", fn=square, version="v1", x=number), root=root)


def _stemma_check(
    root: str, backtrace: str | None = None, endpoint: str | None = None, *, repair: bool = False
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "RUST_BACKTRACE"}
    if backtrace is not None:
        env["RUST_BACKTRACE"] = backtrace
    if endpoint is not None:
        env["AWS_ENDPOINT_URL"] = endpoint
    return subprocess.run(
        [
            sys.executable,
            *("-m", "stemma.core.cli.main", "check", "--root", root),
            *(["--repair"] if repair else []),
        ],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=120,
    )


def _nothing_native(done: subprocess.CompletedProcess[str]) -> None:
    for words in NATIVE_WORDS:
        assert words not in done.stderr + done.stdout, done.stderr


def test_a_healthy_bucket_root_checks_clean_and_nothing_is_written(bucket_root: str) -> None:
    _filled(bucket_root)
    before = _objects(bucket_root)

    done = _stemma_check(bucket_root, backtrace="1")

    assert done.returncode == ExitCode.OK, done.stdout + done.stderr
    assert done.stdout == (
        f"{bucket_root}: no problems (6 tables, staging, 1 run, job ledgers, locks read)\n"
    )
    assert done.stderr == ""
    assert _objects(bucket_root) == before  # read-only: not one object added or rewritten
    assert check_root(bucket_root).clean


def _junk_of_another_size(data: bytes) -> bytes:
    del data
    return b"garbage" * 300  # issue 33's damage: another size, no Parquet marks


def _junk_of_the_same_size(data: bytes) -> bytes:
    return bytes(len(data))  # the size the log records, but no PAR1 at either end


def _footer_garbled(data: bytes) -> bytes:
    """PAR1 at both ends and the footer's length intact; the footer itself junk."""
    (length,) = struct.unpack("<I", data[-8:-4])
    start = len(data) - 8 - length
    return data[:start] + b"\xff" * length + data[-8:]


DAMAGES = {
    "junk of another size": (_junk_of_another_size, "is not Parquet (2100 bytes, no PAR1 marks)"),
    "junk of the same size": (_junk_of_the_same_size, "bytes, no PAR1 marks)"),
    "footer garbled": (_footer_garbled, "has a damaged Parquet footer ("),
}


@pytest.mark.parametrize("backtrace", [None, "1"], ids=["no RUST_BACKTRACE", "RUST_BACKTRACE=1"])
@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_data_file_overwritten_in_the_bucket_is_named_with_its_table(
    bucket_root: str, damage: str, backtrace: str | None
) -> None:
    import obstore

    _filled(bucket_root)
    key = _data_files(bucket_root, "orchestration/steps")[0]
    store = _store(bucket_root)
    damaged, said = DAMAGES[damage]
    obstore.put(store, key, damaged(bytes(obstore.get(store, key).bytes())))

    done = _stemma_check(bucket_root, backtrace)

    assert done.returncode == ExitCode.RUN_FAILED, done.stdout + done.stderr  # needs you
    _nothing_native(done)
    out = done.stdout
    assert f"damaged    {bucket_root}/{key}\n" in out
    assert said in out
    assert "the table orchestration/steps cannot be read" in out
    assert "fix: put it back from a backup of the bucket" in out
    assert out.endswith(  # the steps table's rows are made again by rerunning: repairable
        f"{bucket_root}: 1 problem, 1 need you; `stemma check --repair {bucket_root}` repairs 1 "
        "of them\n"
    )


def test_a_data_file_deleted_from_the_bucket_is_named_missing(bucket_root: str) -> None:
    import obstore

    _filled(bucket_root)
    key = _data_files(bucket_root, "artifacts/index")[0]
    obstore.delete(_store(bucket_root), key)

    report = check_root(bucket_root, repair=True)

    (finding,) = report.needs_you  # the index's rows are nowhere else: no repair is safe
    assert finding.problem.severity is Severity.DAMAGED
    assert finding.problem.path == f"{bucket_root}/{key}"
    assert finding.problem.what == (
        "is missing (the table's log still lists it): the table artifacts/index cannot be read, "
        "and its rows are nowhere else"
    )
    assert finding.problem.repair is None
    assert key not in _objects(bucket_root)  # and nothing was put back or dropped
    done = _stemma_check(bucket_root, "1")
    assert done.returncode == ExitCode.RUN_FAILED
    _nothing_native(done)


def test_a_commit_missing_from_the_bucket_is_named_with_the_commits_either_side(
    bucket_root: str,
) -> None:
    import obstore

    _filled(bucket_root, steps=3)
    log = "delta/orchestration/executions/_delta_log"
    obstore.delete(_store(bucket_root), f"{log}/{1:020d}.json")

    (finding,) = check_root(bucket_root).findings

    assert finding.problem.path == f"{bucket_root}/{log}/{1:020d}.json"
    assert finding.problem.what.startswith("is missing (commits 0 and 2 are there)")


def test_the_check_of_a_bucket_costs_requests_in_proportion_to_its_tables_and_files(
    s3_env: str, s3_root: str
) -> None:
    _filled(s3_root, steps=3)
    objects = [key for key in _objects(s3_root) if key.startswith("delta/")]
    counter = RequestCounter(s3_env).start()
    try:
        done = _stemma_check(s3_root, endpoint=counter.endpoint)
        counted = counter.take()
    finally:
        counter.stop()

    assert done.returncode == ExitCode.OK, done.stdout + done.stderr
    tables = 6
    # The tables listed (one request, one per group); per table: its listing, delta-rs's
    # listing and _last_checkpoint; per object at most two reads (delta-rs reads each commit
    # twice, the check each data file once).
    assert counted["total"] <= 4 + 3 * tables + 2 * len(objects), counter.paths
    assert set(counted) <= {"GET", "HEAD", "total"}, counted  # read-only


def test_a_commit_overwritten_in_the_bucket_is_named_not_a_log_entry(bucket_root: str) -> None:
    import obstore

    _filled(bucket_root, steps=2)
    commit = f"delta/orchestration/executions/_delta_log/{1:020d}.json"
    obstore.put(_store(bucket_root), commit, b"\x00 not a log entry \xff")

    done = _stemma_check(bucket_root, "1")

    assert done.returncode == ExitCode.RUN_FAILED, done.stdout + done.stderr
    _nothing_native(done)
    assert f"damaged    {bucket_root}/{commit}\n" in done.stdout
    assert "is not a readable log entry (not JSON lines)" in done.stdout


def test_a_read_of_a_table_damaged_in_the_bucket_names_the_table_and_the_check(
    bucket_root: str,
) -> None:
    import obstore

    _filled(bucket_root)
    key = _data_files(bucket_root, "orchestration/steps")[0]
    obstore.put(_store(bucket_root), key, _junk_of_another_size(b""))

    with pytest.raises(DamagedTableError, match=r"table orchestration/steps of .*stemma check"):
        steps(bucket_root)


def test_a_damaged_file_of_the_steps_table_is_moved_out_by_repair_and_the_step_runs_again(
    bucket_root: str,
) -> None:
    import obstore

    _filled(bucket_root)
    key = _data_files(bucket_root, "orchestration/steps")[0]
    store = _store(bucket_root)
    junk = _junk_of_another_size(b"")
    obstore.put(store, key, junk)

    done = _stemma_check(bucket_root, "1", repair=True)

    assert done.returncode == ExitCode.REPAIRED, done.stdout + done.stderr
    _nothing_native(done)
    quarantined = f"quarantine/delta/orchestration/steps/{key.rsplit('/', 1)[-1]}"
    assert f"repaired   {bucket_root}/{key}\n" in done.stdout
    assert f"moved it to {bucket_root}/{quarantined} and dropped it" in done.stdout
    assert bytes(obstore.get(store, quarantined).bytes()) == junk  # kept, to be looked at
    assert key not in _objects(bucket_root)
    assert check_root(bucket_root).clean
    [again] = run(apply(name="squares/0", fn=square, version="v1", x=0), root=bucket_root)
    assert again.value == 0
    assert steps(bucket_root).height >= 1  # the table reads, and records again


def test_a_damaged_checkpoint_in_the_bucket_is_replaced_by_repair(bucket_root: str) -> None:
    import obstore

    from stemma.storage import compact_root

    _filled(bucket_root, steps=2)
    compact_root(bucket_root)  # a checkpoint of each table
    log = "delta/orchestration/executions/_delta_log"
    [checkpoint] = [k for k in _objects(bucket_root) if k.startswith(log) and "checkpoint." in k]
    store = _store(bucket_root)
    obstore.put(store, checkpoint, _junk_of_another_size(b""))

    (finding,) = check_root(bucket_root).findings
    assert finding.problem.path == f"{bucket_root}/{checkpoint}"
    assert "`stemma check --repair" in finding.problem.fix

    report = check_root(bucket_root, repair=True)

    assert [f.problem.path for f in report.repaired] == [f"{bucket_root}/{checkpoint}"]
    assert "wrote a new checkpoint at version" in (report.repaired[0].done or "")
    assert check_root(bucket_root).clean
    assert len(steps(bucket_root).filter(steps(bucket_root)["status"] == "completed")) == 2


def test_a_long_log_in_the_bucket_gets_a_checkpoint_from_repair(
    bucket_root: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import stemma.storage.bucket_check as bucket_check

    _filled(bucket_root, steps=3)
    monkeypatch.setattr(bucket_check, "CHECKPOINT_AFTER", 1)  # three commits is "long" here

    found = check_root(bucket_root).findings
    assert {f.problem.severity for f in found} == {Severity.ATTENTION}
    assert all("`stemma check --repair" in f.problem.fix for f in found)

    report = check_root(bucket_root, repair=True)

    assert len(report.repaired) == len(found)
    assert all("wrote a checkpoint at version" in (f.done or "") for f in report.repaired)
    assert check_root(bucket_root).clean
    assert any("checkpoint.parquet" in key for key in _objects(bucket_root))
