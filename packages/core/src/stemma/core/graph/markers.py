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
OUT_URL_TAG: Final = "$out_url"
"""``OUT_URL`` inside a step's encoded inputs (a step that uses it is keyed apart from one
using ``OUT``; no step without it changes key)."""
DEP_TAG: Final = "$dep"
"""A dependency handle inside a step's encoded inputs (its index among the deps)."""
FILE_TAG: Final = "$file"
"""An input file inside a step's encoded inputs (its content id)."""

OUTPUT_PLACEHOLDER: Final = "<output_path>"
"""How ``OUT`` reads at fingerprint time (in ``StepSpec.config`` and a placeholder context)."""
PREFIX_PLACEHOLDER: Final = "<prefix>"
"""The root (``StepContext.prefix``) at fingerprint time."""
REGION_PLACEHOLDER: Final = "<region>"
"""The region (``StepContext.region``) at fingerprint time."""
OUTPUT_URL_PLACEHOLDER: Final = "<output_url>"
"""``StepContext.output_url`` at fingerprint time: keyed as this text, the same on every root."""
WRITE_URL_PLACEHOLDER: Final = "<write_url>"
"""How ``OUT_URL`` (``StepContext.write_url``) reads at fingerprint time."""
PLACEHOLDER_STARTS: Final = (
    OUTPUT_PLACEHOLDER,
    OUTPUT_URL_PLACEHOLDER,
    WRITE_URL_PLACEHOLDER,
    PREFIX_PLACEHOLDER,
    REGION_PLACEHOLDER,
    "<dep:",
)
"""How a value made from a placeholder starts: a ``Path`` that does is no input file."""


class Placeholder(str):
    """What a fingerprint-time ``StepContext`` hands ``build_config``: a str standing for a value.

    Returned as it is (``ctx.output_path``, ``ctx.dep(handle)``), it is keyed exactly as ``OUT``
    or the handle would be in keyword inputs. Anything made from it (``f"{ctx.output_path}/a"``)
    is a plain str, keyed as its text: the same for every root and machine.
    """

    stands_for: object
    """``OUT``, ``OUT_URL``, or the dependency's handle."""

    def __new__(cls, text: str, stands_for: object) -> Placeholder:
        """A str reading ``text`` that stands for ``stands_for``."""
        made = super().__new__(cls, text)
        made.stands_for = stands_for
        return made

    def __reduce__(self) -> tuple[type[str], tuple[str]]:
        # Pickles (and copies) as its text: a stand-in never travels to a worker as one.
        return (str, (str(self),))


class _Marker:
    """The type of :data:`OUT` and :data:`OUT_URL`: one instance each, compared by identity."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name

    def __reduce__(self) -> str:
        # Pickles as the module-level name, so a marker is itself again in a worker process.
        return self._name


OUT: Final = _Marker("OUT")
"""Stands for the step's own output path; replaced by the real path when the step runs."""

OUT_URL: Final = _Marker("OUT_URL")
"""Stands for where the step writes its output with its own tools (``s3://``, ``gs://``, ...).

On a root in an object store, a prefix in the root's bucket unique to the attempt; what the
step put there becomes its output once it returns. On a root on a filesystem, the same local
path as ``OUT``.
"""


class StepHandle:
    """The base of every lazy step handle (:class:`~stemma.core.graph.step.ArtifactStep`).

    Lets the graph's lower modules (the step's context) tell a handle from a value without
    importing ``step``, which imports them. No state, no behaviour: never part of a key.
    """

    __slots__ = ()
