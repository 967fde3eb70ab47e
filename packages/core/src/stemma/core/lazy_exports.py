"""A package's public names imported on first use (PEP 562), as stemma's ``__init__`` files do.

Importing one module of a package runs its ``__init__`` first; one that imported every public
name would load what those names need (the engine, pydantic, deltalake) into every reader of
one small module. Such a package lists where each name lives and sets
``__getattr__ = lazy_getattr(__name__, homes, globals())``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(
    package: str, homes: Mapping[str, str], namespace: dict[str, Any]
) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports ``name`` from ``homes[name]`` and keeps it.

    Args:
        package: the package's name, for the error.
        homes: each public name and the module that defines it.
        namespace: the package's ``globals()``: a name found is stored there, so the next
            access is a plain attribute.
    """

    def find(name: str) -> Any:
        home = homes.get(name)
        if home is None:  # a submodule (``from package import module``) is found without this
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value
        return value

    return find
