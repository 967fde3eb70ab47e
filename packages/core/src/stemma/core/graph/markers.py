"""The sentinels a step's inputs may hold, and the tags that stand for them in a key.

The lowest layer of the lazy graph: ``step`` (handles), ``step_spec`` (lowering), ``context``
(resolution at run time) and ``operation_steps`` all read these, and none of them is read
here, so the graph's modules import one another in one direction only. The strings are part of
every function step's fingerprint: changing one changes every key.
"""

from __future__ import annotations

from typing import Final

FUNCTION_KIND: Final = "function"
"""The ``kind`` of a function step in its fingerprint payload."""
OUT_TAG: Final = "$out"
"""``OUT`` inside a step's encoded inputs."""
DEP_TAG: Final = "$dep"
"""A dependency handle inside a step's encoded inputs (its index among the deps)."""
FILE_TAG: Final = "$file"
"""An input file inside a step's encoded inputs (its content id)."""

OUTPUT_PLACEHOLDER: Final = "<output_path>"


class _OutputPath:
    """The type of :data:`OUT`; there is exactly one instance."""

    _instance: _OutputPath | None = None

    def __new__(cls) -> _OutputPath:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "OUT"

    def __reduce__(self) -> str:
        # Pickles as the module-level name, so OUT survives a trip to a worker process.
        return "OUT"


OUT: Final = _OutputPath()
"""Stands for the step's own output path; replaced by the real path when the step runs."""
