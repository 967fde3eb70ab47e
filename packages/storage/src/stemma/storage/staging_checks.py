"""Verifying staged bundles before a commit: late files waited for, corrupt files named.

On a shared filesystem (NFS, Lustre) a bundle a worker finished on another node may show up
late on the committer's node: its directory, its sentinel, or a file its sentinel lists.
:func:`check_bundle` looks once; the wave commit calls it again with exponential backoff
(:class:`Backoff`) until the bundle is whole or the staging timeout passes
(:func:`staging_timeout`: ``DeltaStore(staging_timeout=…)``, else ``$STEMMA_STAGING_TIMEOUT``,
else :data:`DEFAULT_STAGING_TIMEOUT`). A file that is there but cannot be read is *corrupt*:
waiting does not fix it, so it is reported at once. Where the root is shared (the backend's
``shared_filesystem``), files are opened and read rather than listed, and one whose content is
not visible yet counts as late, not corrupt: the check is core's
(:mod:`stemma.core.store.staging.visibility`), the same for both stores.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from stemma.core.store.staging.problems import (
    DEFAULT_STAGING_TIMEOUT,
    STAGING_TIMEOUT_ENV,
    Backoff,
    ProblemKind,
    StagingProblem,
    WaveReport,
    corrupt,
    staging_timeout,
)
from stemma.core.store.staging.visibility import check_staged
from stemma.storage.sentinel import SHAPE, Listing

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


def check_bundle(bundle: Path, *, shared: bool = False) -> Listing | StagingProblem:
    """Look once whether a bundle is whole: its directory, its sentinel, every listed file.

    Only the sentinel's Parquet footer is parsed (to list the tables and their rows). The other
    files are checked for presence: all from one listing of the directory, or, where the root
    is shared, each opened and read (:mod:`stemma.core.store.staging.visibility`).

    Args:
        bundle: the bundle directory.
        shared: the root is on a shared filesystem (the backend's ``shared_filesystem``).

    Returns:
        What the sentinel lists, when the bundle can be committed, else what is wrong.
    """
    return check_staged(bundle, SHAPE, shared=shared)


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
