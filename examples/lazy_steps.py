"""stemma's demo: a small graph of lazy function steps, built, then found already built.

Run it with ``python3 scripts/dev.py demo`` (or ``uv run python examples/lazy_steps.py``).
Results go under ``.stemma/`` in the current directory, or ``$STEMMA_ROOT``. Run it twice: the
second time nothing executes. Change ``SCALE`` below and run it again: the plan says which
field changed, and only the steps downstream of it rerun; ``stemma plan examples/lazy_steps.py``
says the same without running anything (it plans what ``steps()`` returns). Each step runs in a
worker process, which imports this file to find its function: hence the ``if __name__ ==
"__main__":`` below.
"""

from __future__ import annotations

import json
import pathlib
import random
import statistics
import time

from stemma.core import OUT, ArtifactStep, StepSpec, apply, open_store, plan, run
from stemma.core.live import list_states

SCALE = 2.0
SHARDS = 3


def make_shard(seed: int, size: int, out_path: str) -> dict[str, int]:
    """Write ``size`` pseudo-random measurements as a JSON list."""
    rng = random.Random(seed)
    values = [round(rng.gauss(10, 3), 3) for _ in range(size)]
    pathlib.Path(out_path).write_text(json.dumps(values))
    return {"rows": size}


def normalize(shard: str, scale: float, out_path: str) -> dict[str, float]:
    """Scale a shard's values and write them to a directory; return their mean."""
    values = [v * scale for v in json.loads(pathlib.Path(shard).read_text())]
    out = pathlib.Path(out_path)
    out.mkdir()
    (out / "values.json").write_text(json.dumps(values))
    time.sleep(0.2)  # stands in for real work
    return {"mean": round(statistics.fmean(values), 4)}


def report(shards: list[str], out_path: str) -> dict[str, float]:
    """Summarize every normalized shard into one report file."""
    values = [
        v for shard in shards for v in json.loads((pathlib.Path(shard) / "values.json").read_text())
    ]
    summary = {"count": len(values), "mean": round(statistics.fmean(values), 4)}
    pathlib.Path(out_path).write_text(json.dumps(summary, indent=2))
    return summary


def build_graph() -> ArtifactStep:
    """The graph: SHARDS raw shards → normalized shards → one report. Nothing runs here."""
    raw = [
        apply(name=f"demo/raw/{i}", fn=make_shard, version="v1", seed=i, size=1000, out_path=OUT)
        for i in range(SHARDS)
    ]
    normalized = [
        apply(
            name=f"demo/normalized/{i}",
            fn=normalize,
            version="v1",
            shard=shard,
            scale=SCALE,
            out_path=OUT,
        )
        for i, shard in enumerate(raw)
    ]
    return apply(name="demo/report", fn=report, version="v1", shards=normalized, out_path=OUT)


def steps() -> ArtifactStep:
    """What ``stemma plan examples/lazy_steps.py`` plans: the graph (its main block is not run)."""
    return build_graph()


def main() -> None:
    """Plan, run and show where everything went."""
    store = open_store()
    top = build_graph()
    memo: dict[ArtifactStep, StepSpec] = {}
    spec = top.lower(memo)
    print(f"store: {store.layout.root} ({type(store).__name__})")
    print(f"graph: {len(memo)} steps; report fingerprint {spec.fingerprint}\n")
    print("plan (a dry run, nothing written):")
    entries = plan(top, store=store)
    for entry in entries:
        print(f"  {entry.action:>6}  {entry.spec.name:<22} {entry.reason}")
    root = store.layout.root
    if any(entry.action == "run" for entry in entries):
        print("\nbuilding; `stemma watch demo` in another terminal follows the run")
    before = {state.run_id for state in list_states(root)}
    started = time.perf_counter()
    (artifact,) = run(top, store=store, name="demo")
    elapsed = time.perf_counter() - started
    _say_which_run(root, before)
    print(f"\nran in {elapsed:.2f} s; the report is {'cached' if artifact.cached else 'new'}:")
    print(f"  value: {artifact.value}")
    print(f"  path:  {artifact.path()}")
    print(f"  id:    {artifact.artifact_id}")
    if getattr(store, "kind", None) == "delta":
        _show_tables(root, artifact.artifact_id)
    else:  # stemma-core alone (or STEMMA_STORE=sqlite): the history is in one SQLite file
        print(f"\nrecorded in {root / 'core.sqlite'} (stemma-storage adds Delta tables)")


def _say_which_run(root: pathlib.Path, before: set[str]) -> None:
    """Name the run ``run()`` just made (it made none if everything was built)."""
    made = [state.run_id for state in list_states(root) if state.run_id not in before]
    if not made:
        print("\neverything was built already: no run was started")
        return
    print(f"run {made[0]}: `stemma status {made[0]}` lists its steps,")
    print("`stemma runs` every run of this root, `stemma tui` opens the dashboard")


def _show_tables(root: pathlib.Path, artifact_id: str) -> None:
    from stemma.storage import lineage, steps

    print(f"\nsteps table: {steps(root).height} events under {root / 'delta'}")
    up = lineage(root, artifact_id, direction="up")
    print(f"lineage of the report: {up.height} edges up to the raw shards")


if __name__ == "__main__":
    main()
