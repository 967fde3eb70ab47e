"""``stemma plan`` of a Pipeline script: run it with the dry-run switch on, and show its steps.

The script runs as under ``stemma run`` (its ``__main__`` block, its arguments), but
``$STEMMA_DRY_RUN`` makes its ``Pipeline.create`` return a pipeline that plans each step and runs
none (:mod:`stemma.core.front.dry_pipeline`). What the script prints goes to stderr, so stdout
holds the plan alone (``--format json`` is for programs).
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Generator, Sequence
from contextlib import contextmanager, redirect_stdout
from typing import TextIO

from stemma.core.cli.output import OutputFormat, print_rows
from stemma.core.dry_run_switch import DRY_RUN_ENV, DryRunRefusedError
from stemma.core.engine import StepForecast
from stemma.core.errors import DamagedStoreError
from stemma.core.exit_codes import CliError, ExitCode
from stemma.core.front.dry_pipeline import forecasts
from stemma.core.runs.error_lines import error_line
from stemma.core.runs.launching import run_script

PIPELINE_PLAN_COLUMNS = ("step", "name", "action", "units", "cached", "reason")


def plan_pipeline_script(script: str, argv: Sequence[str]) -> tuple[StepForecast, ...]:
    """The steps ``script`` would run, each with what it would do and why; runs nothing.

    Raises:
        CliError: the script raised or exited with an error, started no Pipeline, or would have run
            something for real (a lazy ``run()``, ``Pipeline.resume``): it was stopped first.
    """
    seen = len(forecasts())
    try:
        with _dry_run(), redirect_stdout(sys.stderr):
            code = run_script(script, argv)
    except DryRunRefusedError as err:
        raise CliError(str(err), ExitCode.USAGE) from None
    except (CliError, DamagedStoreError):  # stemma's own one-line errors, exit codes kept
        raise
    except Exception as err:  # the script's own failure: say its line, not stemma's frames
        line = error_line("".join(traceback.format_exception(err)))
        raise CliError(f"{script} raised while planned: {line}", ExitCode.RUN_FAILED) from None
    planned = forecasts()[seen:]
    if code:
        raise CliError(
            f"{script!r} exited with code {code} while it was planned (its output is above)",
            ExitCode.RUN_FAILED,
        )
    if not planned:
        raise CliError(
            f"{script!r} submitted no step to a Pipeline.create(...) run; for lazy steps, "
            "give it a steps() function returning them (or name one: module:function)",
            ExitCode.NOT_FOUND,
        )
    return planned


@contextmanager
def _dry_run() -> Generator[None]:
    before = os.environ.get(DRY_RUN_ENV)
    os.environ[DRY_RUN_ENV] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ[DRY_RUN_ENV]
        else:
            os.environ[DRY_RUN_ENV] = before


def print_forecasts(planned: Sequence[StepForecast], fmt: str, out: TextIO | None = None) -> None:
    """The plan as a table (one row a step; a miss's changed fields below it) or JSON/CSV."""
    stream = out or sys.stdout
    if OutputFormat(fmt) is OutputFormat.JSON:
        stream.write(json.dumps([_as_json(f) for f in planned], indent=1) + "\n")
        return
    names = {f.run_name for f in planned}
    runs = {f.run_id for f in planned}
    rows = [_row(f, named=len(runs) > 1, by_id=len(names) < len(runs)) for f in planned]
    print_rows(rows, PIPELINE_PLAN_COLUMNS, fmt, stream=stream)


def _row(forecast: StepForecast, *, named: bool, by_id: bool) -> dict[str, object]:
    """One step's row.

    ``named``: the script starts several runs, so each step says its run, by its pipeline's
    name, or (``by_id``, two runs of one name) by ``name#short id``.
    """
    run = forecast.run_name
    if by_id:
        run = f"{run}#{forecast.run_id.rsplit('_', 1)[-1]}"
    reason = "; ".join(
        [forecast.reason, *(c for c in forecast.changes if c not in forecast.reason)]
    )
    return {
        "step": f"{run}:{forecast.number}" if named else forecast.number,
        "name": forecast.name,
        "action": forecast.action,
        "units": "?" if forecast.units is None else forecast.units,
        "cached": "?" if forecast.cached_units is None else forecast.cached_units,
        "reason": reason,
    }


def _as_json(forecast: StepForecast) -> dict[str, object]:
    return {
        "pipeline": forecast.run_name,
        "step": forecast.number,
        "name": forecast.name,
        "action": forecast.action,
        "fingerprint": forecast.fingerprint,
        "units": forecast.units,
        "cached": forecast.cached_units,
        "reason": forecast.reason,
        "changes": list(forecast.changes),
    }
