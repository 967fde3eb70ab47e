"""What the stateful model test expects of a root: its inputs, and what has been committed.

Pure bookkeeping, no I/O: the state machine tells it what it did and what the tables showed,
and it answers what the next run must (or must not) do.
"""

from __future__ import annotations

from dataclasses import dataclass, field

FILES = ("a.csv", "b.csv", "c.csv")
"""The input folder's files: one slow unit each."""
VARIANTS = 3
"""Contents a file can be edited to: few, so an edit can bring back content already run."""
SCALES = (1.0, 2.0, 3.0)
"""Params the slow step can be changed to (few, for the same reason)."""


def content(name: str, variant: int) -> str:
    """A small CSV, different for each (file, variant)."""
    return f"x,y\n1,{FILES.index(name)}\n2,{variant}\n"


Combo = tuple[tuple[int, ...], float]
"""What a run's work depends on: each file's variant, and the slow step's scale."""


@dataclass
class RootModel:
    """The inputs as they are now, and what the tables must hold."""

    variants: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FILES, 0))
    scale: float = SCALES[0]
    finished: set[Combo] = field(default_factory=set[Combo])
    """Combos some run completed: rerunning them must execute nothing."""
    committed: set[str] = field(default_factory=set[str])
    """Execution keys the tables held a success for: they may never disappear."""
    interrupted: list[str] = field(default_factory=list[str])
    """Runs cancelled or killed: what ``resume`` picks from."""
    staged_left: bool = False
    """A ``kill -9`` may have left work staged, not yet committed (the next start commits it)."""

    @property
    def combo(self) -> Combo:
        """The combo a run started now would do."""
        return tuple(self.variants[name] for name in FILES), self.scale

    def files(self, combo: Combo | None = None) -> dict[str, str]:
        """The input folder's content for ``combo`` (the current one by default)."""
        variants = (combo or self.combo)[0]
        return {name: content(name, v) for name, v in zip(FILES, variants, strict=True)}
