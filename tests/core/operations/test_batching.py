import pytest

from stemma.core.errors import BatchingError
from stemma.core.operations.batching import count_units, iter_units, make_units, pack_workers
from stemma.core.operations.pairing import GroupBy, PairedGroup, member_rows, pair_inputs


def singles(count: int) -> list[PairedGroup]:
    return pair_inputs({"data": [f"a{i:02d}" for i in range(count)]}, None)


def pairs(count: int) -> list[PairedGroup]:
    ids = [f"{i:02d}" for i in range(count)]
    return pair_inputs({"x": [f"x{i}" for i in ids], "y": [f"y{i}" for i in ids]}, GroupBy.ZIP)


def sizes(units: list[tuple[PairedGroup, ...]]) -> list[int]:
    return [sum(len(group.members) for group in unit) for unit in units]


@pytest.mark.parametrize(
    ("count", "per_unit", "expected"),
    [
        (10, 1, [1] * 10),
        (10, 3, [3, 3, 3, 1]),
        (10, 10, [10]),
        (10, 100, [10]),
        (0, 4, []),
    ],
)
def test_make_units_single_role_packs_to_target(
    count: int, per_unit: int, expected: list[int]
) -> None:
    assert sizes(make_units(singles(count), per_unit, None)) == expected


def test_make_units_keeps_group_order_and_every_group_once() -> None:
    groups = pairs(7)
    units = make_units(groups, 3, None)
    assert [group for unit in units for group in unit] == groups
    assert make_units(groups, 3, None) == units


@pytest.mark.parametrize(("per_unit", "cap"), [(1, None), (3, None), (3, 4), (5, 6), (4, 4)])
def test_make_units_never_splits_groups_and_respects_max(per_unit: int, cap: int | None) -> None:
    groups = pairs(9)
    units = make_units(groups, per_unit, cap)
    assert all(len(group.members) == 2 for unit in units for group in unit)
    assert [group for unit in units for group in unit] == groups
    if cap is not None:
        assert max(sizes(units)) <= cap


def test_make_units_target_below_group_size_gives_one_group_per_unit() -> None:
    assert sizes(make_units(pairs(3), 1, None)) == [2, 2, 2]


def test_make_units_cap_closes_a_unit_before_a_group_would_overflow_it() -> None:
    groups = [*pairs(1), *singles(1), *pairs(2)]
    assert sizes(make_units(groups, 4, 4)) == [3, 4]
    assert sizes(make_units(groups, 3, 3)) == [3, 2, 2]


def test_make_units_group_larger_than_max_raises() -> None:
    groups = pair_inputs({"a": ["1"], "b": ["2"], "c": ["3"]}, GroupBy.ZIP)
    with pytest.raises(BatchingError, match=r"has 3 artifacts \(a, b, c\).*at least 3"):
        make_units(groups, 1, 2)


@pytest.mark.parametrize(
    ("per_unit", "cap", "message"),
    [
        (0, None, "artifacts_per_unit must be at least 1, got 0"),
        (-2, None, "artifacts_per_unit must be at least 1, got -2"),
        (1, 0, "max_artifacts_per_unit must be at least 1, got 0"),
        (5, 4, "max_artifacts_per_unit=4 is below artifacts_per_unit=5"),
    ],
)
def test_make_units_invalid_settings_raise(per_unit: int, cap: int | None, message: str) -> None:
    with pytest.raises(BatchingError, match=message):
        make_units(singles(3), per_unit, cap)


def test_make_units_batching_never_changes_group_ids() -> None:
    groups = pairs(6)
    ids = {group.group_id for group in groups}
    for per_unit in (1, 2, 5, 100):
        units = make_units(groups, per_unit, None)
        assert {group.group_id for unit in units for group in unit} == ids


@pytest.mark.parametrize(
    ("count", "per_worker", "expected"),
    [(10, 1, [1] * 10), (10, 3, [3, 3, 3, 1]), (10, 10, [10]), (10, 25, [10]), (0, 2, [])],
)
def test_pack_workers_counts(count: int, per_worker: int, expected: list[int]) -> None:
    units = make_units(singles(count), 1, None)
    jobs = pack_workers(units, per_worker)
    assert [len(job) for job in jobs] == expected
    assert [unit for job in jobs for unit in job] == units


@pytest.mark.parametrize("per_worker", [0, -1])
def test_pack_workers_below_one_raises(per_worker: int) -> None:
    with pytest.raises(
        BatchingError, match=f"units_per_worker must be at least 1, got {per_worker}"
    ):
        pack_workers(["u"], per_worker)


@pytest.mark.parametrize("per_unit", [1, 2, 3, 4, 7])
@pytest.mark.parametrize("cap", [None, 7, 8, 100])
@pytest.mark.parametrize(
    "inputs",
    [
        {"data": [f"a{i}" for i in range(11)]},
        {"x": [f"x{i}" for i in range(5)], "y": [f"y{i}" for i in range(5)]},
        {"x": [f"x{i}" for i in range(4)], "y": [f"y{i}" for i in range(3)]},
    ],
)
def test_count_units_counts_exactly_the_units_make_units_makes(
    inputs: dict[str, list[str]], per_unit: int, cap: int | None
) -> None:
    group_by = GroupBy.CROSS_PRODUCT if len(inputs) > 1 else None
    groups = pair_inputs(inputs, group_by)
    units = make_units(groups, per_unit, cap)
    assert count_units(member_rows(inputs, group_by), per_unit, cap) == len(units)
    assert list(iter_units(iter(groups), per_unit, cap)) == units


def test_count_units_raises_the_cap_error_make_units_raises() -> None:
    inputs = {"a": ["1"], "b": ["2"], "c": ["3"]}
    with pytest.raises(BatchingError, match=r"has 3 artifacts \(a, b, c\).*at least 3"):
        count_units(member_rows(inputs, GroupBy.ZIP), 1, 2)


def test_iter_units_checks_its_settings_before_the_first_unit() -> None:
    with pytest.raises(BatchingError, match="below artifacts_per_unit=5"):
        iter_units(iter(singles(3)), 5, 4)
