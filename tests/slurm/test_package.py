"""stemma-slurm installs on its own and is a portion of the stemma namespace package."""

import importlib.metadata
import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from typing import cast

import stemma.slurm

DISTRIBUTION = "stemma-slurm"


def test_slurm_distribution_is_installed_with_a_version() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", importlib.metadata.version(DISTRIBUTION))


def test_slurm_package_all_is_a_list_of_names_it_defines() -> None:
    exported: object = vars(stemma.slurm)["__all__"]
    assert isinstance(exported, list)
    names = [str(name) for name in cast("list[object]", exported)]
    missing = [name for name in names if not hasattr(stemma.slurm, name)]
    assert missing == [], f"stemma.slurm.__all__ names what it does not define: {missing}"


def test_slurm_stemma_is_a_namespace_package_without_init() -> None:
    spec = importlib.util.find_spec("stemma")
    assert spec is not None
    assert spec.origin is None, f"stemma resolves to a regular package at {spec.origin}"
    locations = list(spec.submodule_search_locations or [])
    assert locations, "stemma has no namespace portions"
    assert [loc for loc in locations if (Path(loc) / "__init__.py").exists()] == []


def test_opening_a_backend_imports_submitit_whole_before_any_step_thread_does() -> None:
    # Step threads import submitit's modules lazily; two of them importing it first at once
    # failed with an import _DeadlockError (submitit imports in a cycle). A fresh process: this
    # one may have imported it already.
    code = (
        "import sys\n"
        "from stemma.slurm import SlurmBackend\n"
        "assert 'submitit' not in sys.modules, 'importing stemma.slurm imports submitit'\n"
        "SlurmBackend()\n"
        "print(all(m in sys.modules for m in ('submitit.slurm.slurm', 'submitit.core.utils')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"
