"""Races between committers of one bundle: locks outside the bundle, atomic retirement."""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import stemma.storage.commit as commit_module
from stemma.core.store.staging.removal import retire_bundle, retired_dir
from stemma.storage import (
    EXECUTION_EDGES,
    EXECUTIONS,
    DeltaStore,
    StagedBundleError,
    commit_staged,
)
from stemma.storage.locks import bundle_lock_path
from stemma.storage.sentinel import SENTINEL, TABLES_KEY
from stemma.storage.staging import read_bundle, staged_bundles

from .conftest import FunctionStepFactory, read_delta

_ROUNDS = 50
_REAL_RMTREE = shutil.rmtree
_REMOVING = threading.Event()


def _slow_rmtree(path: str | os.PathLike[str], *args: Any, **kwargs: Any) -> None:
    """``shutil.rmtree`` with a pause before each entry, to widen any delete-while-read window.

    Like the real one called with ``ignore_errors=True`` (as every caller in stemma does), a
    directory another thread removes first is no error: ``recover()`` clears ``.retired`` while
    the committer is still removing what it retired there.
    """
    _REMOVING.set()
    directory = Path(path)
    try:
        for entry in sorted(directory.iterdir()):
            time.sleep(0.004)
            if entry.is_file():
                entry.unlink(missing_ok=True)
    except (FileNotFoundError, NotADirectoryError):
        if not (kwargs.get("ignore_errors") or (args and args[0])):
            raise
    _REAL_RMTREE(path, *args, **kwargs)


def _commit(store: DeltaStore, bundle: Path, committer: str) -> int:
    """Commit ``bundle`` as one wave (the engine), or alone (another process's ``recover()``)."""
    if committer == "wave":
        return store.commit_wave([bundle]).committed
    return int(commit_staged(store.layout, bundle))


def _commit_while_recovering(
    store: DeltaStore, bundle: Path, committer: str, delay: float, *, after_removal_starts: bool
) -> dict[str, object]:
    """Commit ``bundle`` in one thread; run ``recover()`` in another ``delay`` seconds later.

    With ``after_removal_starts``, the delay counts from when the committer starts removing a
    directory (the bundle, or the wave it was claimed into) rather than from the start.
    """
    results: dict[str, object] = {}
    _REMOVING.clear()

    def recover() -> object:
        if after_removal_starts:
            _REMOVING.wait(timeout=30)
        time.sleep(delay)
        return store.recover()

    def run(name: str, call: Callable[[], object]) -> None:
        try:
            results[name] = call()
        except Exception as err:
            results[name] = err

    threads = [
        threading.Thread(target=run, args=("commit", lambda: _commit(store, bundle, committer))),
        threading.Thread(target=run, args=("recover", recover)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


@pytest.mark.parametrize("committer", ["wave", "alone"])
def test_commit_and_recover_same_bundle_concurrently_never_raise_never_duplicate(
    store: DeltaStore,
    make_step: FunctionStepFactory,
    monkeypatch: pytest.MonkeyPatch,
    committer: str,
) -> None:
    monkeypatch.setattr(shutil, "rmtree", _slow_rmtree)
    made = [make_step() for _ in range(_ROUNDS)]
    for round_number, step in enumerate(made):
        bundle = store.stage_execution(step.execution)
        # Odd rounds sweep recover()'s start across the whole commit; even ones across the
        # removal of the bundle (where a lock inside the bundle used to vanish under waiters).
        during_removal = round_number % 2 == 0
        span = 0.03 if during_removal else 0.25
        results = _commit_while_recovering(
            store,
            bundle,
            committer,
            span * round_number / _ROUNDS,
            after_removal_starts=during_removal,
        )

        assert results["commit"] in (0, 1), results
        assert results["recover"] in (0, 1), results
        assert results["commit"] != results["recover"], results  # exactly one committed it
        assert not bundle.exists()

    executions = read_delta(EXECUTIONS.path(store.layout.delta))
    assert sorted(executions.get_column("execution_run_id").to_list()) == sorted(
        step.execution_run_id for step in made
    )
    # Execution edges have no key to deduplicate on: a bundle committed twice shows here.
    edges = read_delta(EXECUTION_EDGES.path(store.layout.delta))
    assert edges.height == 2 * _ROUNDS
    assert staged_bundles(store.layout) == []
    assert not any((store.layout.locks / "staging").iterdir())


def test_read_bundle_refuses_bundle_missing_a_listed_table(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    bundle = store.stage_execution(make_step(inputs={"data": ("a" * 32,)}).execution)
    (bundle / EXECUTION_EDGES.staged_name).unlink()

    with pytest.raises(StagedBundleError, match=r"lists .*execution_edges.* is missing"):
        read_bundle(bundle)
    with pytest.raises(StagedBundleError, match="is missing"):
        commit_staged(store.layout, bundle)
    assert bundle.is_dir()
    assert not store.layout.delta.exists()


def test_read_bundle_refuses_sentinel_that_lists_no_tables(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    bundle = store.stage_execution(make_step().execution)
    sentinel = bundle / SENTINEL
    pl.read_parquet(sentinel).write_parquet(sentinel)

    with pytest.raises(StagedBundleError, match=TABLES_KEY):
        read_bundle(bundle)


def test_read_bundle_reads_only_the_tables_the_sentinel_lists(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    bundle = store.stage_execution(make_step().execution)
    listed = json.loads(pl.read_parquet_metadata(bundle / SENTINEL)[TABLES_KEY])
    (bundle / "stray.parquet").write_bytes(b"not parquet")

    assert sorted(spec.name for spec in read_bundle(bundle)) == sorted(listed)


def test_commit_staged_bundle_that_vanished_returns_false(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    bundle = store.stage_execution(make_step().execution)
    assert retire_bundle(store.layout, bundle)

    assert commit_staged(store.layout, bundle) is False
    assert not store.layout.delta.exists()
    assert not bundle_lock_path(store.layout, bundle).exists()


def test_commit_staged_bundle_retired_while_read_returns_false(
    store: DeltaStore, make_step: FunctionStepFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = store.stage_execution(make_step().execution)

    def read_after_another_commit(path: Path) -> Any:
        retire_bundle(store.layout, path)
        return read_bundle(path)

    monkeypatch.setattr(commit_module, "read_bundle", read_after_another_commit)

    assert commit_staged(store.layout, bundle) is False


def test_bundle_lock_lives_outside_the_bundle_and_goes_with_it(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    step = make_step()
    bundle = store.stage_execution(step.execution)
    lock = bundle_lock_path(store.layout, bundle)

    assert lock == store.layout.locks / "staging" / f"{step.execution_run_id}.lock"
    assert lock.is_file()
    assert sorted(path.name for path in bundle.iterdir() if path.name.startswith(".")) == []
    assert commit_staged(store.layout, bundle) is True
    assert not lock.exists()
    assert not bundle.exists()


def test_recover_clears_retired_leftovers_and_never_commits_them(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    bundle = store.stage_execution(make_step().execution)
    leftover = retired_dir(store.layout) / f"{bundle.name}-crashed"
    leftover.parent.mkdir(parents=True)
    bundle.rename(leftover)  # a removal that crashed right after the rename

    assert staged_bundles(store.layout) == []
    assert store.recover() == 0
    assert not leftover.exists()
    assert not store.layout.delta.exists()


def test_stage_execution_again_after_commit_commits_nothing_new(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    step = make_step()
    assert commit_staged(store.layout, store.stage_execution(step.execution)) is True

    assert commit_staged(store.layout, store.stage_execution(step.execution)) is False
    assert read_delta(EXECUTIONS.path(store.layout.delta)).height == 1
