"""Appends to a table in a bucket commit from the handle they hold, and catch up only if beaten.

A bucket's first try at an append does not catch its handle up (a listing and more, per table
per commit): the commit is made with no retry, so it fails if another writer committed after
the handle's version, and the next try catches up and checks its keys and its transaction
again. Here the other writer is another handle, as a second machine would be: it does not take
this machine's lock.
"""

from __future__ import annotations

import polars as pl
from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake

from stemma.core.store.locations import RootLayout, resolve_root
from stemma.storage.schemas import ARTIFACT_EDGES, ARTIFACT_INDEX
from stemma.storage.table_places import table_place
from stemma.storage.tables import append_rows, read_table
from tests.storage.conftest import index_rows


def _other_machine_appends(layout: RootLayout, rows: pl.DataFrame, app_id: str) -> None:
    """What a writer on another machine commits: through a handle of its own, no lock of ours."""
    place = table_place(layout, ARTIFACT_INDEX.name)
    table = DeltaTable(place.uri, storage_options=place.options)
    transaction = CommitProperties(app_transactions=[Transaction(app_id, 1)])
    write_deltalake(
        table, ARTIFACT_INDEX.to_arrow(rows), mode="append", commit_properties=transaction
    )


def _index_with_a_handle(bucket_root: str) -> RootLayout:
    """The root's index, holding "a" and "b": the first append made it, and the second opened
    this process's handle of it (a made table has none until it is read or appended to)."""
    layout = RootLayout(resolve_root(bucket_root))
    assert append_rows(layout, ARTIFACT_INDEX, index_rows(["a" * 32]), app_id="first")
    assert append_rows(layout, ARTIFACT_INDEX, index_rows(["b" * 32]), app_id="second")
    return layout


def _ids(layout: RootLayout) -> list[str]:
    return sorted(read_table(layout, ARTIFACT_INDEX)["artifact_id"])


def test_keys_another_machine_committed_after_this_handle_was_read_are_not_written_again(
    bucket_root: str,
) -> None:
    layout = _index_with_a_handle(bucket_root)
    _other_machine_appends(layout, index_rows(["c" * 32]), app_id="other")

    # this process's handle is at the version before "c": this append's first try fails, and
    # the next sees "c"
    assert append_rows(layout, ARTIFACT_INDEX, index_rows(["c" * 32, "d" * 32]), app_id="this")

    assert _ids(layout) == ["a" * 32, "b" * 32, "c" * 32, "d" * 32]
    place = table_place(layout, ARTIFACT_INDEX.name)
    table = DeltaTable(place.uri, storage_options=place.options)
    assert table.version() == 3
    assert table.transaction_version("this") == 1


def test_a_transaction_another_machine_committed_after_this_handle_was_read_is_not_made_again(
    bucket_root: str,
) -> None:
    layout = _index_with_a_handle(bucket_root)
    # the same bundle, committed by another machine's recovery while this one was not looking
    _other_machine_appends(layout, index_rows(["e" * 32]), app_id="bundle")

    assert append_rows(layout, ARTIFACT_INDEX, index_rows(["e" * 32]), app_id="bundle") is False
    assert _ids(layout) == ["a" * 32, "b" * 32, "e" * 32]


def test_a_table_without_keys_takes_another_machines_rows_and_this_ones_once_each(
    bucket_root: str,
) -> None:
    layout = RootLayout(resolve_root(bucket_root))
    edge = {
        "execution_run_id": "r",
        "source_artifact_id": "s" * 32,
        "target_artifact_id": "t" * 32,
        "step_boundary": False,
    }
    rows = pl.concat([ARTIFACT_EDGES.empty(), pl.DataFrame([edge])], how="diagonal_relaxed")
    assert append_rows(layout, ARTIFACT_EDGES, rows, app_id="first")
    assert append_rows(layout, ARTIFACT_EDGES, rows, app_id="second")
    place = table_place(layout, ARTIFACT_EDGES.name)
    other = DeltaTable(place.uri, storage_options=place.options)
    write_deltalake(other, ARTIFACT_EDGES.to_arrow(rows), mode="append")

    assert append_rows(layout, ARTIFACT_EDGES, rows, app_id="third")
    assert append_rows(layout, ARTIFACT_EDGES, rows, app_id="third") is False

    assert read_table(layout, ARTIFACT_EDGES).height == 4
