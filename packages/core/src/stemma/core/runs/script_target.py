"""What a ``SCRIPT`` argument names: a Python file or a module, and maybe a function in it.

``stemma run``, ``stemma run --detach`` and ``stemma plan`` all take one; each says a missing
one the same way (exit 3) before anything starts, rather than a traceback from deep in runpy.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from stemma.core.exit_codes import CliError, ExitCode


@dataclass(frozen=True, kw_only=True)
class ScriptTarget:
    """A script argument, found."""

    text: str
    """The argument as given (``file.py``, ``package.module``, ``module:function``)."""
    path: Path | None
    """The file of a file script; None for a module."""
    module: str | None
    """The module name of a module script; None for a file."""
    function: str
    """The function after ``:``; empty to run the script as ``__main__``."""
    source: Path | None
    """The Python source to read (the file, or the module's ``.py``); None if it has none."""


def resolve_script(script: str) -> ScriptTarget:
    """The file or module ``script`` names, checked to exist (nothing of it is run).

    A name ending in ``.py``, or naming a file, is a file; anything else is a module, found as
    ``python -m`` would find it (its parent packages are imported to look inside them).

    Raises:
        CliError: NOT_FOUND, no such file or no such module (the message says where it looked).
    """
    target, _, function = script.partition(":")
    path = Path(target)
    if path.suffix == ".py" or path.is_file():
        if not path.is_file():
            raise CliError(
                f"no script {target!r} (from {Path.cwd()}): give the path of a Python file, a "
                "module name, or module:function",
                ExitCode.NOT_FOUND,
            )
        return ScriptTarget(text=script, path=path, module=None, function=function, source=path)
    try:
        spec = importlib.util.find_spec(target)
    except (ImportError, ValueError) as err:  # a parent package missing, or an empty name
        raise _no_module(target, f"{type(err).__name__}: {err}") from None
    if spec is None:
        raise _no_module(target, "no file, and no module of that name")
    origin = spec.origin if spec.origin and spec.origin.endswith(".py") else None
    return ScriptTarget(
        text=script,
        path=None,
        module=target,
        function=function,
        source=Path(origin) if origin else None,
    )


def _no_module(target: str, why: str) -> CliError:
    return CliError(
        f"no script {target!r} (from {Path.cwd()}): {why}; give the path of a Python file "
        "(ending in .py), or a module importable here",
        ExitCode.NOT_FOUND,
    )
