"""Which failures become a DamagedTableError: only those a damaged file of the root explains."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from stemma.core.errors import DamagedStoreError
from stemma.core.exit_codes import CliError
from stemma.storage import STEPS, DeltaStore
from stemma.storage.errors import DamagedTableError
from stemma.storage.table_damage import committing, reading

from .conftest import FunctionStepFactory, commit_function_step

_DISK_FULL = OSError(errno.ENOSPC, "No space left on device")


def _filled(store: DeltaStore, make_step: FunctionStepFactory) -> DeltaStore:
    for number in range(2):
        commit_function_step(store, make_step(f"step{number}", value=number))
    return store


def test_reading_a_sound_table_lets_a_full_disk_through_as_it_is(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    layout = _filled(store, make_step).layout
    with pytest.raises(OSError, match="No space left") as raised, reading(layout, STEPS):
        raise _DISK_FULL
    assert not isinstance(raised.value, DamagedTableError)
    with pytest.raises(OSError, match="No space left") as raised, committing(layout):
        raise _DISK_FULL
    assert not isinstance(raised.value, DamagedTableError)


def test_a_failure_a_garbled_file_explains_names_the_table(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    layout = _filled(store, make_step).layout
    table = STEPS.path(layout.delta)
    sorted(table.glob("part-*.parquet"))[0].write_bytes(b"garbage")

    with pytest.raises(DamagedTableError) as raised, reading(layout, STEPS):
        raise _DISK_FULL  # any read failure, once the table is damaged, is said as the damage
    assert raised.value.table == "orchestration/steps"
    assert not raised.value.staged
    with pytest.raises(DamagedTableError) as raised, committing(layout):
        raise _DISK_FULL
    assert raised.value.staged
    assert "Nothing is lost" in str(raised.value)


def test_an_interrupt_is_never_translated(
    store: DeltaStore, make_step: FunctionStepFactory
) -> None:
    layout = _filled(store, make_step).layout
    with pytest.raises(KeyboardInterrupt), reading(layout, STEPS):
        raise KeyboardInterrupt


def test_a_damaged_table_is_a_store_error_not_a_command_line_error() -> None:
    # Core's command line maps every DamagedStoreError to exit 7 (test_damaged_root_commands):
    # the store's error needs nothing of the command line's.
    error = DamagedTableError("orchestration/steps", Path("/r"), "it is damaged")
    assert isinstance(error, DamagedStoreError)
    assert not isinstance(error, CliError)
    assert "stemma check /r" in str(error)
