"""Verifying staged bundles before a commit: late files waited for, corrupt files named.

On a shared filesystem (NFS, Lustre) a bundle a worker finished on another node may show up
late on the committer's node: its directory, its sentinel, or a file its sentinel lists.
:func:`check_bundle` looks once; the wave commit calls it again with exponential backoff
(:class:`Backoff`) until the bundle is whole or the staging timeout passes
(:func:`staging_timeout`: ``DeltaStore(staging_timeout=…)``, else ``$STEMMA_STAGING_TIMEOUT``,
else :data:`DEFAULT_STAGING_TIMEOUT`). A file that is there but cannot be read is *corrupt*:
waiting does not fix it, so it is reported at once.
"""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl

from stemma.core.staging_problems import (
    DEFAULT_STAGING_TIMEOUT,
    STAGING_TIMEOUT_ENV,
    Backoff,
    ProblemKind,
    StagingProblem,
    WaveReport,
    corrupt,
    missing,
    staging_timeout,
)
from stemma.storage.errors import StagedBundleError
from stemma.storage.sentinel import SENTINEL, Listing, read_listing

__all__ = [  # the vocabulary is core's (every store speaks it); the checks are Parquet's
    "DEFAULT_STAGING_TIMEOUT",
    "STAGING_TIMEOUT_ENV",
    "Backoff",
    "ProblemKind",
    "StagingProblem",
    "WaveReport",
    "check_bundle",
    "check_readable",
    "staging_timeout",
]


def check_bundle(bundle: Path) -> Listing | StagingProblem:
    """Look once whether a bundle is whole: its directory, its sentinel, every listed file.

    Only the sentinel's Parquet footer is read (to list the tables and their rows); the other
    files are checked for presence, all from one listing of the directory (a wave checks
    thousands of bundles, and a ``stat`` per file would cost a third of their claim).

    Returns:
        What the sentinel lists, when the bundle can be committed, else what is wrong.
    """
    try:
        with os.scandir(bundle) as entries:
            present = {entry.name for entry in entries if entry.is_file()}
    except (FileNotFoundError, NotADirectoryError):
        return missing(bundle, (), f"the staged bundle {bundle} is not there")
    if SENTINEL not in present:
        return missing(bundle, (SENTINEL,), f"{bundle} has no {SENTINEL} (its sentinel)")
    try:
        listing = read_listing(bundle)
    except StagedBundleError as err:
        return corrupt(bundle, (SENTINEL,), str(err))
    absent = tuple(s.staged_name for s in listing.tables if s.staged_name not in present)
    if absent:
        return missing(
            bundle, absent, f"{bundle} lists {', '.join(absent)} in its {SENTINEL}, not there"
        )
    return listing


def check_readable(bundle: Path) -> StagingProblem | None:
    """Read every file of a whole bundle through; name the first one that cannot be read."""
    checked = check_bundle(bundle)
    if isinstance(checked, StagingProblem):
        return checked
    for spec in checked.tables:
        file = bundle / spec.staged_name
        try:
            pl.read_parquet(file)
        except (OSError, pl.exceptions.PolarsError) as err:
            return corrupt(bundle, (file.name,), f"cannot read the staged file {file}: {err}")
    return None
