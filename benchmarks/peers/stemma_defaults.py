"""stemma's side of the N-no-op-task workload with the execution settings left at their defaults.

The same step as ``stemma_units``, without its hand-picked ``units_per_worker``: packs are sized
as they come back (one unit first, then about half a second of work each), which is what a user
who never heard of packing gets.
"""

from __future__ import annotations

import pathlib

from stemma_units import VERSIONS, StemmaUnits

__all__ = ["VERSIONS", "open_workload"]


def open_workload(n: int, workdir: pathlib.Path, workers: int) -> StemmaUnits:
    workload = StemmaUnits(n, workdir, workers)
    workload.units_per_worker = None
    return workload
