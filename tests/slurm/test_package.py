"""stemma-slurm installs on its own and is a portion of the stemma namespace package."""

import importlib.metadata
import importlib.util
import re
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
