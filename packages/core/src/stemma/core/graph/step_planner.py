"""What would run, and why: the read-only half of the runner, also behind ``plan``.

Everything here only reads: the store's records and whether recorded outputs still exist. A dry
run therefore writes nothing, not even the store's directories.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from stemma.core.artifact import Artifact
from stemma.core.graph.explain import miss_reason
from stemma.core.graph.step_graph import expand, needed
from stemma.core.graph.step_spec import StepSpec
from stemma.core.records import StepRecord
from stemma.core.store.protocols import Store


@dataclass(frozen=True, kw_only=True)
class PlanEntry:
    """One line of a dry run (``plan()``): a step, whether it would run, and why.

    (Named apart from the engine's ``PlannedStep``, a step submitted to a run.)
    """

    spec: StepSpec
    """The step."""
    action: Literal["run", "cached"]
    """``run`` if it would execute, ``cached`` if it is built already."""
    reason: str
    """Why: ``new``, ``changed since …: field: old → new``, ``mutable``, ``output missing``, …"""


class StepPlanner:
    """Answers "is it built?" and "why would it run?" against one store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def built(self, specs: Sequence[StepSpec]) -> dict[str, Artifact]:
        """The specs already built (recorded completed, output on this machine), with artifacts.

        Mutable (``dev``) specs are never built: they always rerun. On a root in an object
        store, an output not fetched to this machine yet is not counted: the engine's lookup
        fetches it (``function_cache.output_in_place``) when the step comes to run.
        """
        return self._built(specs, self._here)

    def _built(
        self, specs: Sequence[StepSpec], present: Callable[[str], bool]
    ) -> dict[str, Artifact]:
        wanted = [spec.fingerprint for spec in specs if not spec.mutable]
        if not wanted:
            return {}
        records = self.store.completed(wanted)
        return {
            fingerprint: artifact_from_record(self.store.layout.root, record)
            for fingerprint, record in records.items()
            if record.output_path and present(record.output_path)
        }

    def _here(self, relative: str) -> bool:
        return self.store.layout.output_dir(relative).exists()

    def _kept(self, relative: str) -> bool:
        """On this machine, or whole in the root's bucket (a ``HEAD``; a dry run fetches nothing).

        Another machine's plan of a root in a bucket said every step built elsewhere would run
        ("output missing"), though its run would find each of them there.
        """
        if self._here(relative):
            return True
        holds = getattr(self.store, "holds_output", None)
        return bool(holds(relative)) if callable(holds) else False

    def reason(self, spec: StepSpec) -> str:
        """Why ``spec`` must run, assuming it is not built."""
        if spec.mutable:
            return f"mutable version {spec.version!r}: always reruns"
        previous = self.store.latest_by_name(spec.name)
        return miss_reason(spec.name, spec.fingerprint, spec.config, previous)

    def plan(self, specs: Iterable[StepSpec]) -> list[PlanEntry]:
        """A dry run: every step reachable from ``specs``, deps first, with what would happen.

        Steps below a built step are not listed: they would not be looked at.
        """
        seen: dict[str, StepSpec] = {}  # insertion order is deps-first
        built: dict[str, Artifact] = {}
        wanted: set[str] = set()
        shown_built: set[str] = set()
        for root in specs:
            built.update(self._built(expand(root, seen), self._kept))
            if root.fingerprint in built:
                shown_built.add(root.fingerprint)
            wanted.update(spec.fingerprint for spec in needed(root, set(built)))
        for fingerprint in wanted:
            shown_built.update(
                dep.fingerprint for dep in seen[fingerprint].deps if dep.fingerprint in built
            )
        out: list[PlanEntry] = []
        for fingerprint, spec in seen.items():
            if fingerprint in wanted:
                out.append(PlanEntry(spec=spec, action="run", reason=self.reason(spec)))
            elif fingerprint in shown_built:
                out.append(PlanEntry(spec=spec, action="cached", reason="built already"))
        return out


def artifact_from_record(root: Path, record: StepRecord) -> Artifact:
    """The artifact of a step recorded built under ``root`` (``cached``: this run did not)."""
    return Artifact(
        name=record.name,
        fingerprint=record.fingerprint,
        root=root,
        relative_path=record.output_path or "",
        artifact_id=record.output_artifact_id or "",
        value=record.value,
        cached=True,
    )
