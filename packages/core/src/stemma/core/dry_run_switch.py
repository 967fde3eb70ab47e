"""The dry-run switch ``stemma plan`` sets for the script it reads: plan every step, run none.

An environment variable, so a script needs no change to be planned: ``Pipeline.create`` reads
it and returns a pipeline that keys and looks up each step but dispatches and writes nothing;
anything else that would open a real run refuses (it would run for real).
"""

from __future__ import annotations

import os

DRY_RUN_ENV = "STEMMA_DRY_RUN"
"""Set to ``1`` by ``stemma plan`` while it runs a Pipeline script."""


def dry_run_requested() -> bool:
    """True while a script runs under ``stemma plan`` (``$STEMMA_DRY_RUN`` is ``1``)."""
    return os.environ.get(DRY_RUN_ENV) == "1"


class DryRunRefusedError(RuntimeError):
    """Something would have run for real under ``stemma plan``; it was stopped before it did."""


def refuse_in_dry_run(what: str) -> None:
    """Raise if a dry run is on: ``what`` would run for real.

    Raises:
        DryRunRefusedError: ``$STEMMA_DRY_RUN`` is set; the message names ``what`` and the fix.
    """
    if dry_run_requested():
        raise DryRunRefusedError(
            f"{what} would run for real, and {DRY_RUN_ENV}=1 (stemma plan) runs nothing: "
            "stemma plan reads a script's Pipeline.create(...) runs, or its lazy steps through "
            "a steps() function; run it with `stemma run` to build it"
        )
