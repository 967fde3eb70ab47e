"""When the Delta store compacts a table after a commit: the policy, and the choice it makes.

Every stemma commit adds one small Parquet file to each table it writes, and a commit's cost
grows with the files a table holds (design note 0012: 34 ms a commit at 100 files, 102 ms at
1,500; an artifact table's append reads the key column of every file). So after its commits the
store compacts, in the background (:mod:`stemma.storage.auto_compaction`), each table that holds
:attr:`CompactionPolicy.small_files` files smaller than :attr:`CompactionPolicy.small_file_bytes`.
It rewrites only files below :attr:`CompactionPolicy.target_bytes`, into files of about that
size, so one table's compaction rewrites a few megabytes at most however large the table is;
the weekly ``stemma compact`` still makes the large files.

A store takes its policy from its ``compact`` argument, else from the environment
(:func:`compaction_policy`). This module decides; it reads no table.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from stemma.storage.env_numbers import env_number

COMPACT_ENV = "STEMMA_COMPACT"
"""``on`` (the default) or ``off``: whether a store given no ``compact`` compacts after commits."""
SMALL_FILES_ENV = "STEMMA_COMPACT_SMALL_FILES"
"""How many small files make a table due for compaction, when the store is given no policy."""
DEFAULT_SMALL_FILES = 100
"""At 100 small files a commit costs about 7 ms more than at none (design note 0012), and a
compaction of them about 70 ms: paid once in 100 commits, in the background."""
DEFAULT_SMALL_FILES_IN_BUCKET = 16
"""The same for a root in an object store, where every data file costs each read of its table a
request (a ``GET``, ~2 ms on a local S3 server, tens of ms on a cloud's): the steps table every
run's cache lookups scan is then read in at most about 20 requests instead of up to 125. A
compaction costs a request per file it rewrites, plus its commit's few, once in 16 commits;
measured in benchmarks/README.md ("A root in S3")."""
_ON = frozenset({"1", "on", "true", "yes"})
_OFF = frozenset({"0", "off", "false", "no"})


@dataclass(frozen=True, kw_only=True)
class CompactionPolicy:
    """When and how much the store compacts after its commits.

    Raises:
        ValueError: a field is out of range (the message names it).
    """

    small_files: int = DEFAULT_SMALL_FILES
    """A table is compacted once it holds this many small files (at least 2)."""
    small_file_bytes: int = 1 << 20
    """A data file smaller than this (1 MiB) counts as small."""
    target_bytes: int = 4 << 20
    """Files below this size (4 MiB) are rewritten into files of about this size; larger ones
    are left alone. It bounds one table's compaction: at most this much of it is rewritten."""
    budget_seconds: float = 1.0
    """Once a pass after a commit has run this long it starts no other table's compaction (the
    rest wait for the next commit); a compaction waits at most this long for a table's lock."""

    def __post_init__(self) -> None:
        if self.small_files < 2:
            raise ValueError(
                f"CompactionPolicy.small_files={self.small_files}: a table of one file has "
                "nothing to compact; give 2 or more"
            )
        if self.small_file_bytes < 1:
            raise ValueError(
                f"CompactionPolicy.small_file_bytes={self.small_file_bytes}: give a size in bytes"
            )
        if self.target_bytes < self.small_file_bytes:
            raise ValueError(
                f"CompactionPolicy.target_bytes={self.target_bytes} is below small_file_bytes="
                f"{self.small_file_bytes}: small files would never be rewritten; give at least "
                f"{self.small_file_bytes}"
            )
        if not self.budget_seconds >= 0:
            raise ValueError(
                f"CompactionPolicy.budget_seconds={self.budget_seconds}: give 0 or more seconds"
            )

    @property
    def count_every(self) -> int:
        """Commits between two counts of the tables' files: a quarter of :attr:`small_files`.

        Counting opens every table (a few milliseconds each); doing it after every commit would
        cost more than the compactions save. A table is thus compacted between
        :attr:`small_files` and a quarter more small files than that (the steps table, which
        also gets the step events between commits, somewhat more).
        """
        return max(1, self.small_files // 4)


def compaction_policy(
    compact: bool | CompactionPolicy | None, *, in_bucket: bool = False
) -> CompactionPolicy | None:
    """The policy a store runs (``None``: it never compacts by itself).

    Args:
        compact: ``False`` for none, ``True`` for the default policy, a policy, or ``None`` for
            ``$STEMMA_COMPACT`` (``on``/``off``, default on) with ``$STEMMA_COMPACT_SMALL_FILES``
            small files (default :data:`DEFAULT_SMALL_FILES`).
        in_bucket: the root is in an object store: the default small files are then
            :data:`DEFAULT_SMALL_FILES_IN_BUCKET` (a policy given, or the variable, still rules).

    Raises:
        ValueError: a variable holds something it cannot be (the message names it).
    """
    if isinstance(compact, CompactionPolicy):
        return compact
    if compact is None:
        text = os.environ.get(COMPACT_ENV, "").strip().lower()
        if text and text not in _ON | _OFF:
            raise ValueError(
                f"{COMPACT_ENV}={os.environ[COMPACT_ENV]!r} is neither on nor off; set it to "
                "off to stop compacting tables after commits (or unset it)"
            )
        compact = text not in _OFF
    if not compact:
        return None
    default = DEFAULT_SMALL_FILES_IN_BUCKET if in_bucket else DEFAULT_SMALL_FILES
    small = env_number(SMALL_FILES_ENV, default, minimum=2, expected="a number of files >= 2")
    return CompactionPolicy(small_files=small)


@dataclass(frozen=True, kw_only=True)
class TableFiles:
    """What a count found in one table."""

    name: str
    """The table's name under ``delta/`` (``orchestration/steps``)."""
    small: int
    """Its data files smaller than the policy's ``small_file_bytes``."""
    files: int
    """All its data files."""


def small_count(sizes: Sequence[int | None], policy: CompactionPolicy) -> int:
    """How many of a table's data files (their sizes as its log records them) are small.

    A file whose log records no size is not counted: compaction could not size its bin.
    """
    return sum(1 for size in sizes if size is not None and size < policy.small_file_bytes)


def due(
    found: Sequence[TableFiles], policy: CompactionPolicy, left: Mapping[str, int]
) -> list[TableFiles]:
    """The tables to compact, most small files first (then by name).

    A table is due once it holds :attr:`~CompactionPolicy.small_files` small files more than
    ``left`` says its last compaction left: a file compaction could not merge (alone between
    larger ones) would otherwise make it due after every commit, for nothing.

    Args:
        found: each table's count.
        policy: the policy.
        left: per table name, the small files its last compaction here left.
    """
    ready = [t for t in found if t.small - left.get(t.name, 0) >= policy.small_files]
    return sorted(ready, key=lambda t: (-t.small, t.name))
