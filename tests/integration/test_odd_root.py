"""``STEMMA_TEST_ROOT_NAME`` puts every test's temporary directory, and so its roots, below it.

``check`` runs the storage and integration suites a second time that way (a root with a space
and a non-ASCII letter once broke every Delta read); this proves the variable does what that pass
relies on, in a pytest of its own, whichever pass runs it.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

ODD_NAME = "root with space é"
CHECKOUT = pathlib.Path(__file__).resolve().parents[2]
PROBE = pathlib.Path(__file__).with_name("odd_root_probe.py")


def test_root_name_variable_puts_every_temporary_directory_below_that_name(
    tmp_path: pathlib.Path,
) -> None:
    report = tmp_path / "made.json"
    env = {**os.environ, "STEMMA_TEST_ROOT_NAME": ODD_NAME, "STEMMA_ODD_ROOT_PROBE": str(report)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(PROBE)],
        cwd=CHECKOUT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    made = {key: pathlib.Path(path) for key, path in json.loads(report.read_text()).items()}
    for path in made.values():
        assert ODD_NAME in path.parts, path
        odd = path.parents[len(path.parts) - path.parts.index(ODD_NAME) - 2]
        assert odd.name == ODD_NAME
        assert not odd.exists()  # the session passed: its directories are gone


def test_root_name_variable_must_be_one_directory_name(tmp_path: pathlib.Path) -> None:
    env = {**os.environ, "STEMMA_TEST_ROOT_NAME": "a/b"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(PROBE)],
        cwd=CHECKOUT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0
    assert "STEMMA_TEST_ROOT_NAME must be one directory name" in done.stderr
