import pytest

from stemma.core.errors import LineageError, StemmaError
from stemma.core.operations.stem_matching import (
    NamedArtifact,
    filename_stem,
    infer_lineage,
    match_lineage,
    stem_prefixes,
)


def art(name: str) -> NamedArtifact:
    """An artifact whose id is derived from its name, so assertions can read names."""
    return NamedArtifact(artifact_id=f"id:{name}", original_name=name)


@pytest.mark.parametrize(
    ("name", "stem"),
    [
        ("design_1.pdb", "design_1"),
        ("a.tar.gz", "a"),
        ("model.v2.ckpt.bak", "model"),
        ("noext", "noext"),
        ("runs/7/design_3.pdb", "design_3"),
        (".env", ".env"),
        (".cache.json", ".cache"),
    ],
)
def test_filename_stem_strips_directory_and_every_extension(name: str, stem: str) -> None:
    assert filename_stem(name) == stem


def test_stem_prefixes_never_cut_before_a_digit() -> None:
    assert list(stem_prefixes("d_10x")) == ["d_10x", "d_10", "d"]


@pytest.mark.parametrize(
    ("output", "source"),
    [
        ("design_1_relaxed.pdb", "design_1.pdb"),
        ("design_10_relaxed.pdb", "design_10.pdb"),
        ("design_1.pdb", "design_1.pdb"),
        ("design_10.json", "design_10.pdb"),
        ("design_1-scores.csv", "design_1.pdb"),
    ],
)
def test_match_lineage_design_1_and_design_10_never_confused(output: str, source: str) -> None:
    candidates = [art("design_1.pdb"), art("design_10.pdb")]
    assert match_lineage([art(output)], candidates) == {f"id:{output}": f"id:{source}"}


def test_match_lineage_design_10_without_its_input_is_not_matched_to_design_1() -> None:
    with pytest.raises(
        LineageError,
        match=r"output 'design_10_relaxed\.pdb' \(stem 'design_10_relaxed'\) matches none",
    ):
        match_lineage([art("design_10_relaxed.pdb")], [art("design_1.pdb"), art("other.pdb")])


def test_match_lineage_multi_extension_stems_match() -> None:
    outputs = [art("sample_a.filtered.tar.gz"), art("sample_b.vcf.gz")]
    candidates = [art("sample_a.tar.gz"), art("sample_b.bam.bai")]
    assert match_lineage(outputs, candidates) == {
        "id:sample_a.filtered.tar.gz": "id:sample_a.tar.gz",
        "id:sample_b.vcf.gz": "id:sample_b.bam.bai",
    }


def test_match_lineage_longest_prefix_wins_over_shorter() -> None:
    candidates = [art("protein.pdb"), art("protein_a.pdb")]
    assert match_lineage([art("protein_a_relaxed.pdb")], candidates) == {
        "id:protein_a_relaxed.pdb": "id:protein_a.pdb"
    }


def test_match_lineage_many_outputs_may_share_one_source() -> None:
    outputs = [art("x_model_0.pdb"), art("x_model_1.pdb"), art("y_model_0.pdb")]
    assert match_lineage(outputs, [art("x.fa"), art("y.fa")]) == {
        "id:x_model_0.pdb": "id:x.fa",
        "id:x_model_1.pdb": "id:x.fa",
        "id:y_model_0.pdb": "id:y.fa",
    }


def test_match_lineage_ambiguous_stem_raises_naming_output_candidates_and_fix() -> None:
    candidates = [art("d1.pdb"), art("d1.json"), art("d.pdb")]
    with pytest.raises(LineageError) as caught:
        match_lineage([art("d1_out.pdb")], candidates, context="step 2 'relax'")
    message = str(caught.value)
    assert message.startswith("step 2 'relax': output 'd1_out.pdb' is ambiguous")
    assert "'d1.pdb'" in message
    assert "'d1.json'" in message
    assert "fix: name each output so that it starts with the stem" in message
    assert caught.value.output_name == "d1_out.pdb"
    assert caught.value.candidate_names == ["d1.pdb", "d1.json", "d.pdb"]
    assert isinstance(caught.value, StemmaError)


def test_match_lineage_no_match_raises_listing_candidates_and_counting_other_failures() -> None:
    outputs = [art("ok_1.pdb"), art("zzz.pdb"), art("yyy.pdb")]
    with pytest.raises(LineageError) as caught:
        match_lineage(outputs, [art("ok.pdb"), art("other.pdb")])
    message = str(caught.value)
    assert "output 'zzz.pdb' (stem 'zzz') matches none of the 2 candidates" in message
    assert "'ok.pdb', 'other.pdb'" in message
    assert "(1 more output failed too)" in message
    assert caught.value.output_name == "zzz.pdb"


def test_match_lineage_long_candidate_list_is_truncated_in_message() -> None:
    candidates = [art(f"in_{i}.pdb") for i in range(25)]
    with pytest.raises(LineageError, match=r"… and 15 more; fix:"):
        match_lineage([art("unrelated.pdb")], candidates)


def test_match_lineage_same_candidate_twice_is_not_ambiguous() -> None:
    candidate = art("design_1.pdb")
    assert match_lineage([art("design_1_x.pdb")], [candidate, candidate]) == {
        "id:design_1_x.pdb": "id:design_1.pdb"
    }


def test_match_lineage_identical_outputs_from_two_sources_raise() -> None:
    first = NamedArtifact(artifact_id="same", original_name="a_out.txt")
    second = NamedArtifact(artifact_id="same", original_name="b_out.txt")
    with pytest.raises(LineageError, match="same content"):
        match_lineage([first, second], [art("a.txt"), art("b.txt")])


def test_infer_lineage_generated_from_nothing_has_no_edges() -> None:
    assert infer_lineage([art("x.csv")], [], generated=True) == {}


def test_infer_lineage_single_candidate_takes_every_output_whatever_its_name() -> None:
    outputs = [art("unrelated.csv"), art("design_10.csv")]
    only = art("design_1.pdb")
    assert infer_lineage(outputs, [only, only]) == {
        "id:unrelated.csv": "id:design_1.pdb",
        "id:design_10.csv": "id:design_1.pdb",
    }


def test_infer_lineage_several_candidates_uses_stem_matching() -> None:
    candidates = [art("design_1.pdb"), art("design_10.pdb")]
    assert infer_lineage([art("design_1_r.pdb")], candidates) == {
        "id:design_1_r.pdb": "id:design_1.pdb"
    }
    with pytest.raises(LineageError):
        infer_lineage([art("nothing.pdb")], candidates)


def test_infer_lineage_outputs_without_candidates_raise() -> None:
    with pytest.raises(LineageError, match="matches none of the 0 candidates by stem: \\(none\\)"):
        infer_lineage([art("x.csv")], [])
