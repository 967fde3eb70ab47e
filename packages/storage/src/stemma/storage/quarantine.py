"""Quarantine: the staging protocol's (:mod:`stemma.core.store.staging.removal`).

A corrupt bundle (a truncated or garbled Parquet file) would otherwise stop every commit and
every recovery that meets it. It is moved by one rename to
``staging/.quarantine/{step dir}/{execution_run_id}`` (out of every path a committer or
``recover()`` looks at), and a note naming the bundle, the file and the error is written beside
the step's failure logs. In this store its caller holds the bundle's lock. Named here too, where
this package's checks of a root (``root_check.py``, ``leftovers.py``) import it.
"""

from __future__ import annotations

from stemma.core.store.staging.removal import quarantine_bundle, quarantine_dir

__all__ = ["quarantine_bundle", "quarantine_dir"]
