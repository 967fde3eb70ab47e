"""``Artifact.type`` on the Delta store: core's tests of it, run with stemma-storage installed.

stemma-core's own suite runs alone, with the SQLite store only; these are the same tests
(taken from it, so they are one piece of code) given a Delta store.
"""

from __future__ import annotations

import pathlib

import pytest

from stemma.core.store import RunStore, open_run_store
from tests.core.front import test_run_types as on_core

calls_dir = on_core.calls_dir
test_a_fresh_output_has_the_type_its_step_gave_it = (
    on_core.test_a_fresh_output_has_the_type_its_step_gave_it
)
test_an_output_found_built_keeps_the_type_recorded_with_it = (
    on_core.test_an_output_found_built_keeps_the_type_recorded_with_it
)
test_a_type_asked_for_later_does_not_rename_what_was_built = (
    on_core.test_a_type_asked_for_later_does_not_rename_what_was_built
)
test_a_dependency_built_in_the_same_run_keeps_its_own_type = (
    on_core.test_a_dependency_built_in_the_same_run_keeps_its_own_type
)


@pytest.fixture
def store(tmp_path: pathlib.Path) -> RunStore:
    return open_run_store(tmp_path / "root", kind="delta")
