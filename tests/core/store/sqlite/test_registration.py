"""How the SQLite store is found: by name, and by default when stemma-storage is absent."""

from __future__ import annotations

import importlib.util
import pickle
from pathlib import Path

import pytest

from stemma.core.errors import StoreUnavailableError
from stemma.core.store import (
    available_stores,
    default_store_kind,
    open_run_store,
    open_store,
)
from stemma.core.store.sqlite import SqliteStore


def test_open_store_defaults_to_sqlite_exactly_when_stemma_storage_is_absent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("STEMMA_STORE", raising=False)
    storage_installed = importlib.util.find_spec("stemma.storage") is not None

    store = open_store(tmp_path)

    assert isinstance(store, SqliteStore) is not storage_installed
    assert default_store_kind() == ("delta" if storage_installed else "sqlite")


def test_open_store_by_name_opens_sqlite_and_refuses_an_unknown_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STEMMA_STORE", "sqlite")
    assert isinstance(open_store(tmp_path), SqliteStore)
    assert isinstance(open_run_store(tmp_path), SqliteStore)
    assert "sqlite" in available_stores()
    with pytest.raises(StoreUnavailableError, match="'sqlite'"):
        open_store(tmp_path, kind="nonesuch")


def test_a_store_pickled_to_another_process_reopens_on_the_same_root(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path, staging_timeout=5)
    store.record_events([])

    copy = pickle.loads(pickle.dumps(store))

    assert isinstance(copy, SqliteStore)
    assert copy.layout == store.layout
    assert repr(copy) == repr(store)


def test_a_negative_staging_timeout_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="staging timeout"):
        SqliteStore(tmp_path, staging_timeout=-1)
