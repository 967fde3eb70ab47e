"""Run by test_odd_root.py in a pytest of its own, with ``STEMMA_TEST_ROOT_NAME`` set.

Not collected by the suite (no ``test_`` prefix on the file): it writes where its temporary
directories were made to the file ``$STEMMA_ODD_ROOT_PROBE`` names, for the outer test to check.
"""

import json
import os
from pathlib import Path

import pytest


def test_probe(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    made = {"tmp_path": str(tmp_path), "mktemp": str(tmp_path_factory.mktemp("clean"))}
    Path(os.environ["STEMMA_ODD_ROOT_PROBE"]).write_text(json.dumps(made))
