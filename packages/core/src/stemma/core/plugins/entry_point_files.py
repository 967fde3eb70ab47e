"""One entry point's value, read from the installed distributions' files.

``stemma tui`` finds its command by entry point name before anything else, and importing
``importlib.metadata`` for that (it loads ``zipfile``, ``email``, ``csv``…) was ~35 ms of every
start, a tenth of the dashboard's first paint. The same answer is in a few small files: the
``entry_points.txt`` of each ``*.dist-info`` (or ``*.egg-info``) directory on ``sys.path``. They
are read here in importlib.metadata's order and with its precedence (the first distribution of a
name on ``sys.path`` wins, so a stale copy later on the path is ignored, as it would be), and
parsed as it parses them. What this cannot see (distributions in zip files, found by custom
finders) it does not find: the caller then asks importlib.metadata.
"""

from __future__ import annotations

import os
import re
import sys

_DISTRIBUTION_DIRS = (".dist-info", ".egg-info")


def entry_point_values(group: str, name: str, paths: list[str] | None = None) -> list[str]:
    """The values (``module:attribute``) of the entry points called ``name`` in ``group``.

    Args:
        group: the entry point group (``stemma.commands``).
        name: the entry point's name (``tui``).
        paths: where to look, in order (default: ``sys.path``).

    Returns:
        One value per distribution that declares it, in ``sys.path`` order; empty when none
        of the distributions found here does.
    """
    values: list[str] = []
    seen: set[str] = set()
    for directory in sys.path if paths is None else paths:
        for info in _distribution_dirs(directory):
            distribution = _normalized(info.rpartition(".")[0].partition("-")[0])
            if distribution in seen:
                continue  # importlib.metadata keeps the first distribution of a name
            seen.add(distribution)
            text = _read(os.path.join(directory or ".", info, "entry_points.txt"))
            values += [
                value for section, key, value in _pairs(text) if (section, key) == (group, name)
            ]
    return values


def _distribution_dirs(directory: str) -> list[str]:
    try:
        children = os.listdir(directory or ".")
    except OSError:  # missing, or a zip file: importlib.metadata's to read
        return []
    return sorted(c for c in children if c.lower().endswith(_DISTRIBUTION_DIRS))


def _normalized(name: str) -> str:
    """A distribution's name as importlib.metadata compares them (PEP 503, then ``_``)."""
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError:  # a distribution without entry points
        return ""


def _pairs(text: str) -> list[tuple[str, str, str]]:
    """``(section, name, value)`` of an ``entry_points.txt``, as importlib.metadata reads it.

    Lines are stripped, ``#`` comments and blank lines skipped, and split at the first ``=``.
    """
    pairs: list[tuple[str, str, str]] = []
    section: str | None = None
    for line in map(str.strip, text.splitlines()):
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")
        elif section is not None:
            key, _, value = line.partition("=")
            pairs.append((section, key.strip(), value.strip()))
    return pairs
