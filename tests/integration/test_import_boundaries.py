"""Importing a package loads only what its place in the dependency graph allows.

import-linter checks the static imports; these tests check what really gets loaded, each in a
fresh interpreter, so an import hidden behind a plugin lookup or a transitive dependency shows up.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MEMBERS = ("core", "storage", "slurm", "tui")

SIBLINGS_OF_CORE = ["stemma.storage", "stemma.slurm", "stemma.tui"]
HEAVY = {
    "stemma.core": [*SIBLINGS_OF_CORE, "deltalake", "pyarrow", "textual", "submitit"],
    "stemma.storage": ["stemma.slurm", "stemma.tui", "textual", "submitit"],
    # what a worker opens to stage (issue 19): no Delta reader, no Arrow until it reads
    "stemma.storage.worker_store": ["deltalake", "pyarrow", "stemma.slurm", "stemma.tui"],
    "stemma.slurm": ["stemma.tui", "textual"],
    "stemma.tui": ["stemma.slurm", "submitit"],
}

PROBE = """
import importlib, json, sys
importlib.import_module(sys.argv[1])
print(json.dumps(sorted(sys.modules)))
"""


def loaded_modules(module: str) -> set[str]:
    """The names in sys.modules after a fresh interpreter imports `module`."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, module],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, f"importing {module} failed:\n{done.stderr}"
    names: list[str] = json.loads(done.stdout)
    return set(names)


def is_loaded(package: str, loaded: set[str]) -> bool:
    """Whether `package` or any of its submodules is in `loaded`."""
    return any(name == package or name.startswith(f"{package}.") for name in loaded)


@pytest.mark.parametrize(("module", "forbidden"), sorted(HEAVY.items()))
def test_import_loads_no_forbidden_module(module: str, forbidden: list[str]) -> None:
    loaded = loaded_modules(module)
    assert module in loaded
    assert [name for name in forbidden if is_loaded(name, loaded)] == []


def test_probe_sees_modules_loaded_behind_the_import() -> None:
    # Guards the test above against passing vacuously: a transitive import must show up.
    loaded = loaded_modules("xml.dom.minidom")
    assert is_loaded("xml.dom.minicompat", loaded)
    assert is_loaded("xml", loaded)
    assert not is_loaded("xml.do", loaded)


def test_members_have_no_stemma_init_so_stemma_stays_a_namespace() -> None:
    portions = [ROOT / "packages" / member / "src" / "stemma" for member in MEMBERS]
    assert [p for p in portions if not p.is_dir()] == []
    assert [p for p in portions if (p / "__init__.py").exists()] == []
