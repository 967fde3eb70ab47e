"""Retiring staged bundles: the staging protocol's (:mod:`stemma.core.store.staging.removal`).

Named here too, where this package's commit of a single bundle (``commit.py``) imports it.
"""

from __future__ import annotations

from stemma.core.store.staging.removal import clear_retired, retire_bundle, retired_dir
from stemma.core.store.staging.tree import RETIRED

__all__ = ["RETIRED", "clear_retired", "retire_bundle", "retired_dir"]
