"""A script that is not there, file or module, is said the same way by every command: exit 3."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from stemma.core.exit_codes import ExitCode

STEMMA = Path(sys.executable).parent / "stemma"


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "no_such_module_here"],
        ["run", "no_such_package_here.sub"],
        ["run", "--detach", "no_such_module_here"],
        ["plan", "no_such_module_here"],
        ["run", "no_such_file.py"],
        ["run", "--detach", "no_such_file.py"],
        ["plan", "no_such_file.py"],
    ],
    ids=" ".join,
)
def test_missing_script_exits_3_with_one_line_and_starts_nothing(
    tmp_path: Path, argv: list[str]
) -> None:
    root = tmp_path / "root"
    done = subprocess.run(
        [str(STEMMA), "--root", str(root), *argv],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == ExitCode.NOT_FOUND, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith(f"stemma {argv[0]}: no script '{argv[-1].split('.py')[0]}")
    assert f"(from {tmp_path})" in done.stderr
    assert not root.exists()  # nothing was started, not even a detached log
