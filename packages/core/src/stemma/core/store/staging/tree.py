"""Where staged bundles are: the staging tree of a root, the same for every store.

A bundle is ``staging/{step dir}/{ab}/{cd}/{execution_run_id}/``: the step directory
(``{number}_{name}``, made path-safe; function steps' bundles staged by an older stemma sit
under ``{name}``), then two levels of the bundle's name, so no directory holds more than a few
hundred entries. Both stores find their own bundles under one root's staging, each leaving the
other's alone (a Delta bundle holds ``executions.parquet``; a SQLite one ``records.json`` and
``sentinel.json``). The directories :data:`QUARANTINE`, :data:`RETIRED` and :data:`WAVES` under
staging are never bundles' steps.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from stemma.core.store.locations import RootLayout
from stemma.core.store.staging.problems import StagedBundleError

QUARANTINE = ".quarantine"
"""The directory under ``staging`` unreadable bundles are moved into."""
RETIRED = ".retired"
"""The directory under ``staging`` committed bundles are moved into, then removed from."""
WAVES = ".waves"
"""The directory under ``staging`` the Delta store's wave commits move their bundles into."""
RESERVED = frozenset({QUARANTINE, RETIRED, WAVES})
"""The directories under ``staging`` that are not a step's."""
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(text: str) -> str:
    """``text`` as one path segment (``step`` if nothing of it is left).

    Runs of characters other than letters, digits, ``.``, ``_`` and ``-`` become ``_``; leading
    and trailing ``.`` and ``_`` are dropped.
    """
    return _UNSAFE.sub("_", text).strip("._") or "step"


def step_dir_name(step_number: int, step_name: str) -> str:
    """The staging directory of one step of a run: ``{number}_{name}``, its name made safe."""
    return f"{step_number}_{safe_name(step_name)}"


def matches_step(directory: str, step_name: str) -> bool:
    """Whether a staging directory name is ``step_name``'s: ``{name}`` or ``{number}_{name}``.

    Both spellings of ``{number}_{name}`` count: :func:`step_dir_name`'s (the name made safe on
    its own, the SQLite store's) and ``safe_name(f"{number}_{name}")`` (the Delta store's), which
    differ for a name that starts with ``_`` or ``.`` (``3_a`` and ``3__a`` for ``_a``).
    """
    alone = re.escape(safe_name(step_name))
    after_number = re.escape(_UNSAFE.sub("_", step_name).rstrip("._"))
    return re.fullmatch(rf"(\d+_)?{alone}|\d+_{after_number}", directory) is not None


def bundle_dir(layout: RootLayout, step_dir: str, execution_run_id: str) -> Path:
    """Where a bundle named ``execution_run_id`` is staged under the step directory ``step_dir``."""
    run = execution_run_id
    return layout.staging / step_dir / run[0:2] / run[2:4] / run


def step_dir_of(layout: RootLayout, bundle: Path, *, reserved_ok: bool = False) -> str:
    """The step directory a bundle was staged under.

    Args:
        layout: the store root.
        bundle: the bundle directory, as staging returned it.
        reserved_ok: take a path under :data:`RESERVED` as any other (the Delta store's wave
            claim has always done so; no stemma code stages a bundle there).

    Raises:
        StagedBundleError: ``bundle`` is not ``staging/{step}/{ab}/{cd}/{id}`` under this root
            (or, unless ``reserved_ok``, its step is one of :data:`RESERVED`).
    """
    # On strings, not ``relative_to``: a wave checks every one of its thousands of bundles.
    staging = f"{layout.staging}{os.sep}"
    text = str(bundle)
    parts = text.removeprefix(staging).split(os.sep) if text.startswith(staging) else []
    name = bundle.name
    if len(parts) != 4 or parts[1:] != [name[0:2], name[2:4], name] or "" in parts:
        raise StagedBundleError(f"{bundle} is not a bundle staged under {layout.staging}")
    if parts[0] in RESERVED and not reserved_ok:
        raise StagedBundleError(f"{bundle} is under {parts[0]}, not a step's staging directory")
    return parts[0]


def staged_bundles(layout: RootLayout, step_name: str | None = None) -> list[Path]:
    """Every bundle directory under staging (or of one step name), complete or not, sorted.

    Bundles claimed by a wave commit (under ``staging/.waves``) are not listed: recovery finds
    them through their wave. Nor are quarantined or retired ones.
    """
    tops = [top for top in subdirs(layout.staging, 1) if top.name not in RESERVED]
    if step_name is not None:
        tops = [top for top in tops if matches_step(top.name, step_name)]
    return sorted(path for top in tops for path in subdirs(top, 3))


def subdirs(base: Path, depth: int) -> list[Path]:
    """The directories ``depth`` levels below ``base``, tolerating concurrent removal.

    A committer renames and deletes bundles while recovery scans: a directory that vanishes
    mid-scan is simply not there (``glob`` would raise ``FileNotFoundError`` instead).
    """
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
