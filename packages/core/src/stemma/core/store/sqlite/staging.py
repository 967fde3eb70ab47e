"""Staging: a worker's finished units written as one bundle of files, and where bundles are.

A worker, possibly on another node, stages what its units made; only the orchestrator commits.
So staging needs no connection and takes no database lock: it writes the bundle's files
(:mod:`~stemma.core.store.sqlite.bundle_files`) under
``staging/{step number}_{step name}/{ab}/{cd}/{execution_run_id}/`` and returns the directory.

The same shape as the Delta store's bundles, so both stores find their own under one root's
staging, each leaving the other's alone (a Delta bundle holds ``executions.parquet``; one of
this store holds ``records.json`` and ``sentinel.json``). The directories ``.quarantine``,
``.retired`` and ``.waves`` under staging are never bundles.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from stemma.core.execution_records import ExecutionRecord
from stemma.core.store.locations import RootLayout
from stemma.core.store.sqlite.bundle_files import write_bundle
from stemma.core.store.sqlite.execution_rows import staged_rows
from stemma.core.store.staging.problems import StagedBundleError

QUARANTINE = ".quarantine"
"""The directory under ``staging`` unreadable bundles are moved into."""
RETIRED = ".retired"
"""The directory under ``staging`` committed bundles are moved into, then removed from."""
_NOT_STEPS = frozenset({QUARANTINE, RETIRED, ".waves"})
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def stage_executions(layout: RootLayout, records: Sequence[ExecutionRecord]) -> Path:
    """Write one bundle holding a worker's pack of units; return it.

    A pack is units of one step run, or of several function steps packed together (the
    engine's ``function_packs``). The bundle is named after the first unit, and is committed or
    recovered whole.

    Raises:
        ValueError: no records.
        ArtifactTypeError: an artifact's fields or metadata are not plain JSON data.
    """
    if not records:
        raise ValueError("stage_executions needs at least one record")
    first = records[0]
    rows = staged_rows(records)
    step_dir = step_dir_name(first.step_number, first.step_name)
    bundle = bundle_dir(layout, step_dir, first.execution_run_id)
    write_bundle(bundle, rows)
    return bundle


def step_dir_name(step_number: int, step_name: str) -> str:
    """The staging directory of one step of a run: ``{number}_{name}``, made path-safe."""
    return f"{step_number}_{_safe(step_name)}"


def bundle_dir(layout: RootLayout, step_dir: str, execution_run_id: str) -> Path:
    """Where a bundle named after ``execution_run_id`` is staged."""
    run = execution_run_id
    return layout.staging / step_dir / run[0:2] / run[2:4] / run


def matches_step(directory: str, step_name: str) -> bool:
    """Whether a staging directory name is ``step_name``'s: ``{name}`` or ``{number}_{name}``."""
    return re.fullmatch(rf"(\d+_)?{re.escape(_safe(step_name))}", directory) is not None


def step_dir_of(layout: RootLayout, bundle: Path) -> str:
    """The step directory a bundle was staged under.

    Raises:
        StagedBundleError: ``bundle`` is not ``staging/{step}/{ab}/{cd}/{id}`` under this root.
    """
    staging = f"{layout.staging}{os.sep}"
    text = str(bundle)
    parts = text.removeprefix(staging).split(os.sep) if text.startswith(staging) else []
    name = bundle.name
    if len(parts) != 4 or parts[1:] != [name[0:2], name[2:4], name] or "" in parts:
        raise StagedBundleError(f"{bundle} is not a bundle staged under {layout.staging}")
    if parts[0] in _NOT_STEPS:
        raise StagedBundleError(f"{bundle} is under {parts[0]}, not a step's staging directory")
    return parts[0]


def staged_bundles(layout: RootLayout, step_name: str | None = None) -> list[Path]:
    """Every bundle directory under staging (or of one step name), complete or not, sorted."""
    tops = [top for top in _dirs(layout.staging, 1) if top.name not in _NOT_STEPS]
    if step_name is not None:
        tops = [top for top in tops if matches_step(top.name, step_name)]
    return sorted(path for top in tops for path in _dirs(top, 3))


def _safe(step_name: str) -> str:
    return _UNSAFE.sub("_", step_name).strip("._") or "step"


def _dirs(base: Path, depth: int) -> list[Path]:
    """The directories ``depth`` levels below ``base``, tolerating concurrent removal."""
    level = [base]
    for _ in range(depth):
        below: list[Path] = []
        for directory in level:
            try:
                with os.scandir(directory) as entries:
                    below.extend(Path(e.path) for e in entries if e.is_dir(follow_symlinks=False))
            except (FileNotFoundError, NotADirectoryError):
                continue
        level = below
    return level
