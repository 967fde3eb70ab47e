"""The graph the committed fixture root ``fixtures/keys_v0/`` was built from (stemma at 3f484f0).

Keys are a contract: every later engine must answer this graph from that root entirely from
cache, with the same fingerprints and artifact ids (``fixtures/keys_v0/expected.json``). Never
edit a step's name, inputs or version here, or a function's parameters: that changes keys, and
the test's point with them. Rebuild the root only on purpose (``python keys_v0_graph.py``, from
this directory, with the engine of the day) and say so in the changelog.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from stemma.core import OUT, ArtifactStep, apply, run
from stemma.core.examples import DataGenerator, Transform
from stemma.core.graph.operation_steps import output_of

FIXTURE = Path(__file__).parent / "fixtures" / "keys_v0"
DATA_FILE = "raw input.txt"
"""A raw input file (its name has a space), keyed by its content."""
DATA_TEXT = "the quick brown fox jumps over the lazy dog\n"


def write_json(data: dict[str, Any], out_path: str) -> dict[str, int]:
    """Write ``data`` to one file; return how many keys it had."""
    Path(out_path).write_text(json.dumps(data, sort_keys=True))
    return {"keys": len(data)}


def count_words(source: Path, out_path: str) -> int:
    """Count the words of a raw input file into a directory of two files."""
    out = Path(out_path)
    out.mkdir()
    words = source.read_text().split()
    (out / "count.txt").write_text(str(len(words)))
    (out / "first.txt").write_text(words[0] if words else "")
    return len(words)


def scale(upstream: str, factor: float, out_path: str) -> dict[str, float]:
    """Read an upstream JSON file, multiply every value, write it back out."""
    values = json.loads(Path(upstream).read_text())
    scaled = {key: value * factor for key, value in values.items()}
    Path(out_path).write_text(json.dumps(scaled, sort_keys=True))
    return {"total": sum(scaled.values())}


def merge(parts: list[str], words: str, out_path: str) -> list[Any]:
    """A diamond's bottom: several upstream files and a directory into one file."""
    merged = [json.loads(Path(part).read_text()) for part in parts]
    count = int((Path(words) / "count.txt").read_text())
    Path(out_path).write_text(json.dumps({"parts": merged, "words": count}, sort_keys=True))
    return [len(merged), count]


def nothing(label: str, out_path: str) -> None:
    """A step that writes nothing and returns nothing: its output is an empty directory."""


def function_steps(data_dir: Path) -> list[ArtifactStep]:
    """The function-step part of the graph, over the raw file in ``data_dir``."""
    source = apply(
        name="fixture/source", fn=write_json, version="v1", data={"a": 1, "b": 2.5}, out_path=OUT
    )
    words = apply(
        name="fixture/words",
        fn=count_words,
        version="2026.11.30",
        source=data_dir / DATA_FILE,
        out_path=OUT,
    )
    doubled = apply(
        name="fixture/scale", fn=scale, version="v1", upstream=source, factor=2.0, out_path=OUT
    )
    tripled = apply(
        name="fixture/scale", fn=scale, version="v1", upstream=source, factor=3.0, out_path=OUT
    )
    merged = apply(
        name="fixture/merge",
        fn=merge,
        version="v1",
        parts=[doubled, tripled],
        words=words,
        out_path=OUT,
    )
    empty = apply(name="fixture/nothing", fn=nothing, version="v0", label="x", out_path=OUT)
    return [merged, empty, words]


def operation_steps() -> list[ArtifactStep]:
    """The operation-step part: a generator and a transform of its output."""
    generated = apply("fixture/gen", DataGenerator, params={"count": 2, "rows": 3})
    scaled = apply(
        "fixture/transform",
        Transform,
        params={"scale": 0.5},
        dataset=output_of(generated, "datasets"),
    )
    return [scaled]


def main() -> None:
    """Build the graph into a fresh fixture root and record what every wanted step made."""
    root = FIXTURE / "root"
    shutil.rmtree(FIXTURE, ignore_errors=True)
    data = FIXTURE / "data"
    data.mkdir(parents=True)
    (data / DATA_FILE).write_text(DATA_TEXT)
    handles = [*function_steps(data), *operation_steps()]
    artifacts = run(*handles, root=root)
    shutil.rmtree(root / "locks", ignore_errors=True)
    wanted = [
        {
            "name": a.name,
            "fingerprint": a.fingerprint,
            "artifact_id": a.artifact_id,
            "relative_path": a.relative_path,
            "value": a.value,
        }
        for a in artifacts
    ]
    (FIXTURE / "expected.json").write_text(json.dumps(wanted, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
