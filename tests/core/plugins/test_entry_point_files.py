"""A subcommand found by name reads the distributions' entry_points.txt, not importlib.metadata
(~35 ms of every `stemma tui`), and finds what importlib.metadata would find."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from stemma.core.plugins.entry_point_files import entry_point_values

PLUGIN = """
from stemma.core.cli import Command

def _run(args):
    print("hello from", __name__)
    return 0

COMMAND = Command(name="hello", help="say hello", configure=lambda parser: None, run=_run)
"""

COMPARE = """
import json, sys
from importlib.metadata import entry_points
from stemma.core.plugins.entry_point_files import entry_point_values
group, name = sys.argv[1:]
print(json.dumps({
    "importlib": [p.value for p in entry_points(group=group) if p.name == name],
    "files": entry_point_values(group, name),
}))
"""


def _distribution(site: Path, directory: str, module: str, entry_points: str) -> None:
    """A distribution as pip leaves it: its module, and its metadata directory."""
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{module}.py").write_text(PLUGIN)
    info = site / directory
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(entry_points)


def run_python(code: str, *argv: str, path: list[Path]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(map(str, path))},
        check=False,
        timeout=60,
    )


def test_core_s_own_entry_point_read_from_its_file_matches_importlib_metadata() -> None:
    # (the siblings' commands and stores: tests/integration/test_installed_entry_points.py)
    done = run_python(COMPARE, "stemma.stores", "sqlite", path=[])
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["files"] == found["importlib"] != []


def test_the_first_distribution_of_a_name_on_the_path_wins_as_in_importlib_metadata(
    tmp_path: Path,
) -> None:
    # The same distribution twice (a stale copy later on the path), spelled two ways that
    # normalize alike, and comments, blank lines and spaces as entry_points.txt may hold them.
    text = "# generated\n[stemma.commands]\n\n  hello =  {module}:COMMAND  \n[other]\nhello = x:y\n"
    first, second = tmp_path / "first", tmp_path / "second"
    _distribution(
        first, "Fake_Plugin-2.0.dist-info", "plugin_new", text.format(module="plugin_new")
    )
    _distribution(
        second, "fake.plugin-1.0.dist-info", "plugin_old", text.format(module="plugin_old")
    )
    _distribution(second, "another-1.0.egg-info", "plugin_more", text.format(module="plugin_more"))
    done = run_python(COMPARE, "stemma.commands", "hello", path=[first, second])
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["files"] == found["importlib"]
    assert sorted(found["files"]) == ["plugin_more:COMMAND", "plugin_new:COMMAND"]


def test_a_command_in_a_zipped_distribution_is_still_found_through_importlib_metadata(
    tmp_path: Path,
) -> None:
    # Files in a zip are not read here: the lookup falls back to importlib.metadata.
    archive = tmp_path / "plugin.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("zipped_plugin.py", PLUGIN)
        zipped.writestr("zipped_plugin-1.0.dist-info/METADATA", "Name: zipped-plugin\n")
        zipped.writestr(
            "zipped_plugin-1.0.dist-info/entry_points.txt",
            "[stemma.commands]\nhello = zipped_plugin:COMMAND\n",
        )
    assert entry_point_values("stemma.commands", "hello", [str(archive)]) == []
    code = "import sys; from stemma.core.cli.main import main; sys.exit(main(sys.argv[1:]))"
    done = run_python(code, "hello", path=[archive])
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hello from zipped_plugin\n"


PROBE = """
import json, sys
from stemma.core.cli.main import main
try:
    main([sys.argv[1], "--help"])
except SystemExit as done:
    code = done.code
print(json.dumps({"code": code, "metadata": "importlib.metadata" in sys.modules}))
"""
"""Runs ``stemma NAME --help``; prints its exit code and whether importlib.metadata was imported."""


def test_a_plugin_command_is_found_without_importing_importlib_metadata(tmp_path: Path) -> None:
    site = tmp_path / "site"
    entry = "[stemma.commands]\nhello = hello_plugin:COMMAND\n"
    _distribution(site, "hello_plugin-1.0.dist-info", "hello_plugin", entry)
    done = run_python(PROBE, "hello", path=[site])
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {"code": 0, "metadata": False}
