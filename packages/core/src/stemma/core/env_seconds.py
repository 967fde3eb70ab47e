"""``seconds_setting``: a duration given in code, else by an environment variable, else a default.

One reading for every setting of that shape (the staging timeout, the force-cancel grace), so
each says the same thing when it is not a number of seconds.
"""

from __future__ import annotations

import os


def seconds_setting(explicit: float | None, *, env: str, default: float, what: str) -> float:
    """``explicit``, else ``$env`` (when set and not blank), else ``default``, checked >= 0.

    Args:
        explicit: the value the caller passed; None to read the environment.
        env: the environment variable's name.
        default: what an unset variable means.
        what: the setting's name for the error (``"the staging timeout"``).

    Raises:
        ValueError: the value (given or from the environment) is negative or not a number,
            naming the variable when it came from there.
    """
    if explicit is None:
        text = os.environ.get(env, "").strip()
        if not text:
            return default
        try:
            explicit = float(text)
        except ValueError:
            raise ValueError(f"${env} must be a number of seconds >= 0, got {text!r}") from None
        if not explicit >= 0:  # (NaN too)
            raise ValueError(f"${env} must be a number of seconds >= 0, got {text!r}")
    if not explicit >= 0:
        raise ValueError(f"{what} must be a number of seconds >= 0, got {explicit}")
    return float(explicit)
