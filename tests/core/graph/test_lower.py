import json
import pathlib
from typing import Any

from stemma.core import OUT, ArtifactStep, StepSpec, apply, lower


def write_json(data: Any, out_path: str) -> None:
    pathlib.Path(out_path).write_text(json.dumps(data))


def load_data(src: str) -> None:
    raise AssertionError("lowering must never run user code")


def train(data: str, out_path: str) -> None:
    raise AssertionError("lowering must never run user code")


def combine(left: Any, right: Any, out_path: str) -> None:
    raise AssertionError("lowering must never run user code")


def test_lower_seed_memo_example_shares_the_dataset_spec() -> None:
    dataset = apply(name="dataset", fn=load_data, version="v1", src="gs://bucket/data")
    model_a = apply(name="model_a", fn=train, version="v0", data=dataset, out_path=OUT)
    model_b = apply(name="model_b", fn=train, version="v0", data=dataset, out_path=OUT)
    memo: dict[ArtifactStep, StepSpec] = {}
    spec_a = model_a.lower(memo=memo)
    spec_b = model_b.lower(memo=memo)
    assert spec_a.deps[0] is spec_b.deps[0]
    assert memo[dataset] is spec_a.deps[0]


def test_lower_without_memo_gives_equal_fingerprints_but_new_objects() -> None:
    dataset = apply(name="dataset", fn=load_data, version="v1", src="x")
    model = apply(name="model", fn=train, version="v0", data=dataset, out_path=OUT)
    first, second = lower(model), lower(model)
    assert first is not second
    assert first.fingerprint == second.fingerprint
    assert first.deps[0].fingerprint == second.deps[0].fingerprint


def test_lower_dedupes_deps_by_identity_in_first_seen_order() -> None:
    a = apply(name="a", fn=load_data, version="v0", src="a")
    b = apply(name="b", fn=load_data, version="v0", src="b")
    top = apply(
        name="top", fn=write_json, version="v0", data=[b, {"x": a, "y": b}, (a,)], out_path=OUT
    )
    assert top.deps == (b, a)
    assert [dep.name for dep in top.lower().deps] == ["b", "a"]


def test_lower_captures_provenance_once_per_lowering() -> None:
    a = apply(name="a", fn=load_data, version="v0", src="a")
    b = apply(name="b", fn=train, version="v0", data=a, out_path=OUT)
    spec = b.lower()
    assert spec.provenance is spec.deps[0].provenance
    assert spec.provenance.user
    assert spec.provenance.host
    assert spec.provenance.command_line


def _diamond_lattice(levels: int) -> ArtifactStep:
    """Each level has two nodes, each depending on both nodes of the level below."""
    left = right = apply(name="lattice/base", fn=load_data, version="v0", src="base")
    for level in range(levels):
        left, right = (
            apply(
                name=f"lattice/{level}/l",
                fn=combine,
                version="v0",
                left=left,
                right=right,
                out_path=OUT,
            ),
            apply(
                name=f"lattice/{level}/r",
                fn=combine,
                version="v0",
                left=right,
                right=left,
                out_path=OUT,
            ),
        )
    return apply(name="lattice/top", fn=combine, version="v0", left=left, right=right, out_path=OUT)


def test_lower_2000_level_diamond_lattice_lowers_each_node_once_without_recursion() -> None:
    top = _diamond_lattice(2000)
    memo: dict[ArtifactStep, StepSpec] = {}
    spec = lower(top, memo)
    # 2 nodes per level, the base and the top: every node lowered exactly once.
    assert len(memo) == 2 * 2000 + 2
    assert len({s.fingerprint for s in memo.values()}) == len(memo)
    assert spec.fingerprint == lower(_diamond_lattice(2000)).fingerprint


def test_lower_is_pure_and_runs_no_user_code(tmp_path: pathlib.Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    dataset = apply(name="dataset", fn=load_data, version="v1", src="x")
    apply(name="model", fn=train, version="v0", data=dataset, out_path=OUT).lower()
    assert list(tmp_path.iterdir()) == []
