"""The siblings' commands and stores are found from their entry_points.txt as importlib.metadata
finds them, and `stemma tui` starts without importing importlib.metadata (~35 ms of each start).

Here, not in tests/core: these need stemma-tui and stemma-storage installed beside the core.
"""

from __future__ import annotations

import json

import pytest

from tests.core.plugins.test_entry_point_files import COMPARE, PROBE, run_python


@pytest.mark.parametrize(
    ("group", "name"),
    [
        ("stemma.commands", "tui"),
        ("stemma.commands", "artifacts"),
        ("stemma.stores", "delta"),
        ("stemma.worker_stores", "delta"),
    ],
)
def test_the_siblings_entry_points_read_from_files_match_importlib_metadata(
    group: str, name: str
) -> None:
    done = run_python(COMPARE, group, name, path=[])
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["files"] == found["importlib"] != []


def test_stemma_tui_finds_its_command_without_importing_importlib_metadata() -> None:
    done = run_python(PROBE, "tui", path=[])
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {"code": 0, "metadata": False}
