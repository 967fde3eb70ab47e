from collections.abc import Mapping, Sequence

import pytest

from stemma.core.errors import PairingError
from stemma.core.identity import hash_plain
from stemma.core.operations.pairing import (
    GroupBy,
    PairedGroup,
    group_id_of,
    iter_pairs,
    member_rows,
    pair_inputs,
)

# Two designs, each with a structure and a score derived from it; a third structure with none.
PARENTS = {
    "struct_1": "design_1",
    "struct_2": "design_2",
    "struct_3": "design_3",
    "score_1": "design_1",
    "score_2": "design_2",
    "score_1b": "design_1",
    "msa_1": "design_1",
    "msa_2": "design_2",
    "msa_3": "design_3",
}


def ancestry(artifact_id: str) -> frozenset[str]:
    parent = PARENTS.get(artifact_id)
    return frozenset({artifact_id} if parent is None else {artifact_id, parent})


def members(groups: Sequence[PairedGroup]) -> list[dict[str, str]]:
    return [dict(group.members) for group in groups]


def test_paired_group_id_is_stable_and_role_aware() -> None:
    group = PairedGroup.of({"b": "y", "a": "x"})
    assert group == PairedGroup.of({"a": "x", "b": "y"})
    assert group.group_id == group_id_of({"a": "x", "b": "y"})
    assert len(group.group_id) == 32
    assert list(group.members) == ["a", "b"]
    assert group.artifact_ids == ("x", "y")
    assert PairedGroup.of({"a": "y", "b": "x"}).group_id != group.group_id


def test_paired_group_members_are_read_only() -> None:
    group = PairedGroup.of({"a": "x"})
    with pytest.raises(TypeError):
        group.members["a"] = "z"  # pyright: ignore[reportIndexIssue]


def test_pair_inputs_zip_pairs_by_position() -> None:
    groups = pair_inputs({"left": ["l1", "l2"], "right": ["r1", "r2"]}, GroupBy.ZIP)
    assert members(groups) == [{"left": "l1", "right": "r1"}, {"left": "l2", "right": "r2"}]


def test_pair_inputs_zip_length_mismatch_raises_naming_each_role_length() -> None:
    with pytest.raises(PairingError) as caught:
        pair_inputs({"structures": ["a", "b", "c"], "sequences": ["x", "y"]}, GroupBy.ZIP)
    message = str(caught.value)
    assert "'sequences' has 2, 'structures' has 3" in message
    assert "fix:" in message


def test_pair_inputs_cross_product_2x3_gives_6_distinct_groups_deterministically() -> None:
    inputs = {"model": ["m2", "m1"], "data": ["d3", "d1", "d2"]}
    groups = pair_inputs(inputs, GroupBy.CROSS_PRODUCT)
    assert len(groups) == 6
    assert len({group.group_id for group in groups}) == 6
    assert members(groups)[:2] == [{"data": "d1", "model": "m1"}, {"data": "d1", "model": "m2"}]
    assert pair_inputs(inputs, GroupBy.CROSS_PRODUCT) == groups
    shuffled = {"data": ["d2", "d3", "d1"], "model": ["m1", "m2"]}
    assert [g.group_id for g in pair_inputs(shuffled, GroupBy.CROSS_PRODUCT)] == [
        g.group_id for g in groups
    ]


@pytest.mark.parametrize("group_by", [GroupBy.ZIP, GroupBy.CROSS_PRODUCT, GroupBy.LINEAGE])
def test_pair_inputs_group_ids_stable_across_calls_and_role_order(group_by: GroupBy) -> None:
    forward = {"struct": ["struct_1", "struct_2"], "msa": ["msa_1", "msa_2"]}
    backward = {"msa": ["msa_1", "msa_2"], "struct": ["struct_1", "struct_2"]}
    first = [g.group_id for g in pair_inputs(forward, group_by, ancestry=ancestry)]
    again = [g.group_id for g in pair_inputs(forward, group_by, ancestry=ancestry)]
    reordered = [g.group_id for g in pair_inputs(backward, group_by, ancestry=ancestry)]
    assert first == again == reordered
    assert first


def test_pair_inputs_lineage_pairs_artifacts_sharing_an_ancestor() -> None:
    inputs = {"structure": ["struct_3", "struct_2", "struct_1"], "score": ["score_2", "score_1"]}
    groups = pair_inputs(inputs, GroupBy.LINEAGE, ancestry=ancestry)
    assert members(groups) == [
        {"score": "score_1", "structure": "struct_1"},
        {"score": "score_2", "structure": "struct_2"},
    ]


def test_pair_inputs_lineage_pairs_an_artifact_with_itself_as_ancestor() -> None:
    groups = pair_inputs(
        {"a": ["design_1"], "b": ["struct_1", "struct_2"]}, GroupBy.LINEAGE, ancestry=ancestry
    )
    assert members(groups) == [{"a": "design_1", "b": "struct_1"}]


@pytest.mark.parametrize(
    "inputs",
    [
        {"a": ["struct_1"], "b": ["score_1"], "c": ["msa_1"]},
        {"a": ["struct_1"], "b": ["score_1"], "c": ["msa_1"], "d": ["x"]},
    ],
)
def test_pair_inputs_lineage_needs_exactly_two_roles(inputs: Mapping[str, Sequence[str]]) -> None:
    with pytest.raises(PairingError, match=f"exactly two input roles, got {len(inputs)}"):
        pair_inputs(inputs, GroupBy.LINEAGE, ancestry=ancestry)


def test_pair_inputs_lineage_without_ancestry_raises() -> None:
    with pytest.raises(PairingError, match="needs ancestry="):
        pair_inputs({"a": ["x"], "b": ["y"]}, GroupBy.LINEAGE)


def test_pair_inputs_anchor_drops_incomplete_and_pairs_each_anchor_independently() -> None:
    inputs = {
        "structure": ["struct_1", "struct_2", "struct_3"],
        "score": ["score_1", "score_2"],
        "msa": ["msa_3", "msa_2", "msa_1"],
    }
    groups = pair_inputs(inputs, GroupBy.LINEAGE, ancestry=ancestry, anchor="structure")
    assert members(groups) == [
        {"msa": "msa_1", "score": "score_1", "structure": "struct_1"},
        {"msa": "msa_2", "score": "score_2", "structure": "struct_2"},
    ]


def test_pair_inputs_anchor_with_several_matches_makes_one_group_per_match() -> None:
    inputs = {"structure": ["struct_1"], "score": ["score_1b", "score_1", "score_2"]}
    groups = pair_inputs(inputs, None, ancestry=ancestry, anchor="structure")
    assert members(groups) == [
        {"score": "score_1", "structure": "struct_1"},
        {"score": "score_1b", "structure": "struct_1"},
    ]


@pytest.mark.parametrize(
    ("anchor", "group_by", "message"),
    [
        ("missing", None, "anchor role 'missing' is not an input role"),
        ("a", GroupBy.ZIP, "cannot be combined with group_by=zip"),
        ("a", GroupBy.CROSS_PRODUCT, "cannot be combined with group_by=cross_product"),
    ],
)
def test_pair_inputs_anchor_misuse_raises(
    anchor: str, group_by: GroupBy | None, message: str
) -> None:
    with pytest.raises(PairingError, match=message):
        pair_inputs({"a": ["x"], "b": ["y"]}, group_by, ancestry=ancestry, anchor=anchor)


def test_pair_inputs_anchor_asks_ancestry_once_per_artifact() -> None:
    calls: list[str] = []

    def counting(artifact_id: str) -> frozenset[str]:
        calls.append(artifact_id)
        return ancestry(artifact_id)

    inputs = {"structure": ["struct_1", "struct_2"], "score": ["score_1"], "msa": ["msa_1"]}
    pair_inputs(inputs, None, ancestry=counting, anchor="structure")
    assert sorted(calls) == ["msa_1", "score_1", "struct_1", "struct_2"]


@pytest.mark.parametrize(
    ("inputs", "group_by"),
    [
        ({"data": ["b", "a", "c"]}, GroupBy.ZIP),
        ({"data": ["b", "a", "c"]}, GroupBy.LINEAGE),
        ({"data": ["b", "a", "c"]}, None),
    ],
)
def test_pair_inputs_single_role_makes_one_group_per_artifact(
    inputs: Mapping[str, Sequence[str]], group_by: GroupBy | None
) -> None:
    groups = pair_inputs(inputs, group_by)
    assert members(groups) == [{"data": "a"}, {"data": "b"}, {"data": "c"}]


def test_pair_inputs_no_group_by_with_several_roles_keeps_every_artifact_alone() -> None:
    groups = pair_inputs({"b": ["y"], "a": ["x2", "x1"]}, None)
    assert members(groups) == [{"a": "x1"}, {"a": "x2"}, {"b": "y"}]


def test_pair_inputs_repeated_ids_give_each_group_once() -> None:
    groups = pair_inputs({"a": ["x", "x"], "b": ["y", "y"]}, GroupBy.ZIP)
    assert members(groups) == [{"a": "x", "b": "y"}]


@pytest.mark.parametrize("group_by", [GroupBy.ZIP, GroupBy.CROSS_PRODUCT, GroupBy.LINEAGE, None])
def test_pair_inputs_empty_roles_give_no_groups(group_by: GroupBy | None) -> None:
    assert pair_inputs({"a": [], "b": []}, group_by, ancestry=ancestry) == []


# Strings the canonical encoder escapes, or writes as they are though they are not ASCII.
AWKWARD = ["x", "", 'a "quoted" id', "back\\slash", "line\nbreak\ttab\x01", "é", "\u2028", "😀"]


@pytest.mark.parametrize("role", ["data", *AWKWARD[1:]])
@pytest.mark.parametrize("artifact_id", AWKWARD)
def test_group_id_is_the_hash_of_the_canonical_json_of_its_members(
    role: str, artifact_id: str
) -> None:
    members = {role: artifact_id, "other": "y"}
    canonical = hash_plain(["paired_group", [[r, members[r]] for r in sorted(members)]])
    assert group_id_of(members) == canonical


@pytest.mark.parametrize(
    ("inputs", "group_by", "anchor"),
    [
        ({"a": ["x2", "x1", "x2"]}, None, None),
        ({"a": ["x", "x", "z"], "b": ["y", "y", "w"]}, GroupBy.ZIP, None),
        ({"a": ["x1", "x2"], "b": ["y1", "y2", "y1"]}, GroupBy.CROSS_PRODUCT, None),
        (
            {"structure": ["struct_1", "struct_2"], "score": ["score_1", "score_2"]},
            GroupBy.LINEAGE,
            None,
        ),
        (
            {"structure": ["struct_1", "struct_2", "struct_3"], "score": ["score_1", "score_1b"]},
            None,
            "structure",
        ),
    ],
)
def test_iter_pairs_and_member_rows_give_pair_inputs_groups_one_at_a_time(
    inputs: Mapping[str, Sequence[str]], group_by: GroupBy | None, anchor: str | None
) -> None:
    listed = pair_inputs(inputs, group_by, ancestry=ancestry, anchor=anchor)
    streamed = iter_pairs(inputs, group_by, ancestry=ancestry, anchor=anchor)
    assert not isinstance(streamed, list)
    assert [g.group_id for g in streamed] == [g.group_id for g in listed]
    rows = list(member_rows(inputs, group_by, ancestry=ancestry, anchor=anchor))
    assert [PairedGroup.of(row) for row in rows] == listed
    assert len({g.group_id for g in listed}) == len(listed)  # repeated ids: each group once


def test_iter_pairs_raises_a_pairing_error_by_the_first_group() -> None:
    groups = iter_pairs({"a": ["x"], "b": ["y"], "c": ["z"]}, GroupBy.LINEAGE, ancestry=ancestry)
    with pytest.raises(PairingError, match="exactly two input roles"):
        next(groups)
