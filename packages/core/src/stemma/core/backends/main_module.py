"""Whether spawned workers must run the script's ``__main__`` again, and keeping them from it.

A spawned worker re-runs the parent's main script (as ``__mp_main__``) so that functions defined
there can be unpickled. For a script without an ``if __name__ == "__main__":`` guard that means
running the whole script again inside every worker — its ``run()`` call included, which starts
another run there and never returns. So a run whose functions all live in importable modules
starts its workers with the main module hidden, and a run that needs ``__main__`` is refused
unless the script is guarded (see :func:`main_problem`).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import re
import sys
from collections.abc import Generator
from pathlib import Path

_GUARD = re.compile(r"""^if\s+__name__\s*==\s*(['"])__main__\1\s*:""", re.MULTILINE)
_MISSING = object()


def main_problem() -> str | None:
    """Why workers cannot get functions defined in ``__main__``; None when they can.

    They can when ``__main__`` is a script file whose top-level work is under a ``__name__``
    guard (a worker re-running it then only defines things).
    """
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if path is None:
        return "it is defined interactively (a notebook or the REPL), where workers cannot see it"
    try:
        guarded = _GUARD.search(Path(path).read_text(errors="replace")) is not None
    except OSError:
        guarded = False
    if guarded:
        return None
    return (
        f"it is defined in the script being run ({path}), which every worker would run again "
        'from the top; put the script\'s work under `if __name__ == "__main__":`'
    )


def bootstrapping_worker() -> bool:
    """Whether this process is a spawned worker still importing its parent's main script."""
    return bool(getattr(multiprocessing.current_process(), "_inheriting", False))


@contextlib.contextmanager
def main_hidden(hide: bool) -> Generator[None]:
    """While active (and ``hide``), workers spawned here do not re-run the main script."""
    main = sys.modules.get("__main__")
    if not hide or main is None:
        yield
        return
    saved = {key: main.__dict__.get(key, _MISSING) for key in ("__spec__", "__file__")}
    main.__spec__ = None
    main.__dict__.pop("__file__", None)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is _MISSING:
                main.__dict__.pop(key, None)
            else:
                main.__dict__[key] = value
