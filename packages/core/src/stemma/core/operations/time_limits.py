"""SLURM's time forms (``Resources.time_limit``) in seconds: one reading for every backend.

``MM``, ``MM:SS``, ``HH:MM:SS``, ``D-HH``, ``D-HH:MM``, ``D-HH:MM:SS``, as ``sbatch --time``
reads them. The SLURM backends submit it in minutes; the engine sizes array elements within it.
"""

from __future__ import annotations

import re

_TIME = re.compile(r"^(?:(?P<days>\d+)-)?(?P<clock>\d+(?::\d+){0,2})$")


def time_limit_seconds(text: str) -> int:
    """A SLURM time in seconds.

    Raises:
        ValueError: anything but SLURM's forms, naming them.
    """
    found = _TIME.match(text.strip())
    if found is None:
        raise ValueError(
            f"time_limit {text!r} is not a SLURM time; use MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM "
            "or D-HH:MM:SS (for example '01:30:00')"
        )
    fields = [int(part) for part in found["clock"].split(":")]
    days = int(found["days"] or 0)
    if found["days"] is not None:  # after a day count: HH, HH:MM, HH:MM:SS
        hours, minutes, seconds = [*fields, 0, 0][:3]
    elif len(fields) == 3:
        hours, minutes, seconds = fields
    else:  # MM or MM:SS
        hours, (minutes, seconds) = 0, [*fields, 0][:2]
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds
