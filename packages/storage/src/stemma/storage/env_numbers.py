"""Numbers read from environment variables, refused with the variable's name when malformed.

A bad setting must stop a run when the store is opened, before anything is staged, with an
error that names the variable, what it holds and a value that would work.
"""

from __future__ import annotations

import os
from typing import TypeVar

_N = TypeVar("_N", int, float)


def env_number(name: str, default: _N, *, minimum: _N, expected: str) -> _N:
    """``$name`` as a number of the default's type, at least ``minimum``; ``default`` if unset.

    Args:
        name: the environment variable.
        default: the value when it is unset or empty; its type is the type read (int or float).
        minimum: the smallest value allowed.
        expected: what the value must be, for the error ("a number of seconds >= 0").

    Raises:
        ValueError: the variable holds something else than such a number.
    """
    text = os.environ.get(name)
    if not text:
        return default
    try:
        value = type(default)(text)
    except ValueError:
        value = None
    if value is None or not value >= minimum:
        raise ValueError(
            f"{name}={text!r} is not {expected}; set it to e.g. {default} (or unset it)"
        )
    return value
