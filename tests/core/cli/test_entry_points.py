"""Installed packages add subcommands through the `stemma.commands` entry point group."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from stemma.core.exit_codes import ExitCode

PLUGIN = """
from stemma.core.cli import Command

def _configure(parser):
    parser.add_argument("word")

def _run(args):
    print(f"hello {args.word} from {args.root}")
    return 0

COMMAND = Command(name="hello", help="say hello", configure=_configure, run=_run)
"""


def _install_fake_distribution(site: Path, entry_points: str) -> None:
    """A distribution on sys.path, as pip would leave it: its module and its dist-info."""
    (site / "fake_stemma_plugin.py").write_text(PLUGIN)
    info = site / "fake_stemma_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: fake-stemma-plugin\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text(f"[stemma.commands]\n{entry_points}\n")


def _stemma(site: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from stemma.core.cli.main import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(site)},
        check=False,
        timeout=60,
    )


def test_a_command_registered_by_an_installed_package_runs_with_the_common_root_option(
    tmp_path: Path,
) -> None:
    _install_fake_distribution(tmp_path, "hello = fake_stemma_plugin:COMMAND")
    done = _stemma(tmp_path, "hello", "world", "--root", "/r")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hello world from /r\n"


def test_a_command_whose_package_fails_to_import_is_listed_and_explains_itself(
    tmp_path: Path,
) -> None:
    _install_fake_distribution(tmp_path, "broken = fake_stemma_plugin_missing:COMMAND")
    assert "broken" in _stemma(tmp_path, "--help").stdout
    done = _stemma(tmp_path, "broken")
    assert done.returncode == ExitCode.UNAVAILABLE
    assert "failed to load" in done.stderr
