"""With stemma-core alone installed, every command that needs a sibling package names it (exit 4).

The interpreter is a real virtual environment holding stemma-core and its dependencies only
(linked from this workspace's environment, as an offline install would place them): the
sibling packages are absent, not hidden.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib.metadata import Distribution, PackageNotFoundError, distribution, entry_points
from pathlib import Path
from typing import cast

import pytest

from stemma.core.cli.missing_packages import SIBLING_COMMANDS
from stemma.core.exit_codes import ExitCode


def _closure(name: str, found: dict[str, Distribution]) -> None:
    """``name``'s distribution and every one it requires (extras left out), by name."""
    key = re.sub(r"[-_.]+", "-", name).lower()
    if key in found:
        return
    try:
        found[key] = dist = distribution(name)
    except PackageNotFoundError:
        return  # a marker-excluded requirement (another platform or Python)
    for requirement in dist.requires or []:
        if "extra ==" not in requirement:
            _closure(re.split(r"[ <>=!~;\[(]", requirement, maxsplit=1)[0], found)


def _link_distribution(dist: Distribution, site: Path) -> None:
    """Place ``dist``'s top-level files (packages, .pth, dist-info) into ``site`` as links."""
    tops = {Path(str(f)).parts[0] for f in dist.files or []}
    for top in sorted(tops - {".."}):
        source = Path(str(dist.locate_file(top)))
        if source.exists() and not (site / top).exists():
            (site / top).symlink_to(source)


@pytest.fixture(scope="session")
def core_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The python of a venv with stemma-core (editable, as here) and its dependencies only."""
    venv = tmp_path_factory.mktemp("core-alone") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    [site] = (venv / "lib").glob("python*/site-packages")
    found: dict[str, Distribution] = {}
    _closure("stemma-core", found)
    assert "stemma-storage" not in found
    for dist in found.values():
        _link_distribution(dist, site)
    python = venv / "bin" / "python"
    probe = "import importlib.util as u; print([bool(u.find_spec(m)) for m in SIBLINGS])"
    done = subprocess.run(
        [python, "-c", probe.replace("SIBLINGS", repr(_SIBLING_MODULES))],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "[True, False, False, False]", done.stdout + done.stderr
    return python


_SIBLING_MODULES = ("stemma.core", "stemma.storage", "stemma.tui", "stemma.slurm")


def _stemma(
    python: Path, cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("STEMMA_")}
    return subprocess.run(
        [str(python), "-m", "stemma.core.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
        env={**clean, **(env or {})},
    )


@pytest.mark.parametrize(
    ("argv", "package"),
    [
        (["artifacts"], "stemma-storage"),
        (["artifacts", "--type", "data"], "stemma-storage"),
        (["lineage", "abc123", "--down"], "stemma-storage"),
        (["--root", "somewhere", "compact"], "stemma-storage"),
        (["vacuum", "--apply"], "stemma-storage"),
        (["tui"], "stemma-tui"),
    ],
    ids=lambda value: " ".join(cast(list[str], value)) if isinstance(value, list) else value,
)
def test_core_alone_sibling_command_names_its_package_and_exits_4(
    core_python: Path, tmp_path: Path, argv: list[str], package: str
) -> None:
    done = _stemma(core_python, tmp_path, *argv)
    assert done.returncode == ExitCode.UNAVAILABLE, done.stderr
    assert f"comes with {package}, which is not installed here" in done.stderr
    assert f"pip install {package}" in done.stderr
    assert "invalid choice" not in done.stderr


def test_core_alone_help_lists_what_each_package_would_add(
    core_python: Path, tmp_path: Path
) -> None:
    done = _stemma(core_python, tmp_path, "--help")
    assert done.returncode == 0, done.stderr
    assert re.search(
        r"artifacts\s+\(needs stemma-storage: pip install stemma-storage\s+\(or uv pip",
        done.stdout,
    )
    assert re.search(r"tui\s+\(needs stemma-tui: pip install stemma-tui\s+\(or uv pip", done.stdout)


def test_core_alone_run_with_slurm_backend_names_stemma_slurm(
    core_python: Path, tmp_path: Path
) -> None:
    script = tmp_path / "touch.py"
    script.write_text("import pathlib\npathlib.Path('ran').touch()\n")
    done = _stemma(core_python, tmp_path, "run", "--backend", "slurm", str(script))
    assert done.returncode == ExitCode.UNAVAILABLE, done.stderr
    assert "--backend slurm" in done.stderr
    assert "pip install stemma-slurm" in done.stderr
    assert not (tmp_path / "ran").exists()  # refused before the script started


@pytest.mark.parametrize(
    ("env", "package"),
    [({"STEMMA_STORE": "delta"}, "stemma-storage"), ({"STEMMA_BACKEND": "slurm"}, "stemma-slurm")],
    ids=["STEMMA_STORE=delta", "STEMMA_BACKEND=slurm"],
)
def test_core_alone_demo_refuses_at_once_naming_the_package(
    core_python: Path, tmp_path: Path, env: dict[str, str], package: str
) -> None:
    done = _stemma(core_python, tmp_path, "--root", "root", "demo", "--no-tui", env=env)
    assert done.returncode == ExitCode.UNAVAILABLE, done.stderr
    [name] = env
    assert f"{name}" in done.stderr
    assert f"pip install {package}" in done.stderr
    assert not (tmp_path / "root").exists()  # nothing detached, no log to go and read


def test_core_alone_detached_script_that_dies_says_why_on_stderr(
    core_python: Path, tmp_path: Path
) -> None:
    script = tmp_path / "needs_storage.py"
    script.write_text("import stemma.storage\n")
    done = _stemma(core_python, tmp_path, "--root", "root", "run", "--detach", str(script))
    assert done.returncode == ExitCode.RUN_FAILED, done.stderr
    assert (
        "the script ended before starting a run: "
        "ModuleNotFoundError: No module named 'stemma.storage'"
    ) in done.stderr


def test_sibling_commands_match_the_installed_packages_entry_points() -> None:
    registered = {
        point.name: point.dist.name
        for point in entry_points(group="stemma.commands")
        if point.dist is not None and point.dist.name in {"stemma-storage", "stemma-tui"}
    }
    assert registered == SIBLING_COMMANDS
