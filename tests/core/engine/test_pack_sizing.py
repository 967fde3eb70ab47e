"""Sized packs: one unit first, growing while packs come back quickly, shrinking when not."""

from __future__ import annotations

from stemma.core.engine.dispatch.pack_sizing import (
    GROWTH,
    MAX_PACK_UNITS,
    TARGET_PACK_SECONDS,
    PackQueue,
    PackSizer,
)


def test_packs_start_at_one_unit_and_grow_at_most_growth_times_per_pack() -> None:
    sizer = PackSizer(fixed=None, workers=2)
    assert sizer.next_size(waiting=10_000) == 1
    sizer.observe(units=1, seconds=0.001)  # far below the target: grows, but only GROWTH-fold
    assert sizer.size == GROWTH
    sizer.observe(units=GROWTH, seconds=GROWTH * 0.001)
    assert sizer.size == GROWTH * GROWTH


def test_packs_aim_at_the_target_work_and_never_pass_the_ceiling() -> None:
    sizer = PackSizer(fixed=None, workers=2, size=100)
    sizer.observe(units=100, seconds=100 * TARGET_PACK_SECONDS / 250)  # 250 units fill a pack
    assert sizer.size == 250
    sizer.observe(units=250, seconds=1e-9)
    assert sizer.size == MAX_PACK_UNITS


def test_slow_units_shrink_packs_at_once_down_to_one() -> None:
    sizer = PackSizer(fixed=None, workers=2, size=400)
    sizer.observe(units=400, seconds=400 * TARGET_PACK_SECONDS / 20)
    assert sizer.size == 20
    sizer.observe(units=20, seconds=20 * 3.0)  # seconds per unit: one unit per pack
    assert sizer.size == 1


def test_a_pack_takes_its_share_of_what_waits_but_not_less_than_an_eighth_of_the_size() -> None:
    sizer = PackSizer(fixed=None, workers=4, size=100)
    assert sizer.next_size(waiting=1_000) == 100
    assert sizer.next_size(waiting=200) == 50  # the last units spread over every worker
    assert sizer.next_size(waiting=40) == 12  # but do not dwindle into tiny packs
    assert PackSizer(fixed=None, workers=4, size=4).next_size(waiting=1) == 1


def test_a_pack_out_too_long_shrinks_the_next_ones_but_never_grows_them() -> None:
    sizer = PackSizer(fixed=None, workers=2, size=400)
    sizer.overdue(units=400, seconds=400 * TARGET_PACK_SECONDS / 50)  # at least this slow
    assert sizer.size == 50
    sizer.overdue(units=10, seconds=1e-3)  # a lower bound that says "fast" says nothing
    assert sizer.size == 50


def test_a_pack_whose_worker_died_makes_the_next_ones_much_smaller() -> None:
    sizer = PackSizer(fixed=None, workers=2, size=512)
    sizer.died(units=512)
    assert sizer.size == 512 // GROWTH
    sizer.died(units=3)
    assert sizer.size == 1


def test_a_fixed_units_per_worker_is_never_resized() -> None:
    sizer = PackSizer(fixed=7, workers=2)
    sizer.observe(units=7, seconds=0.0001)
    sizer.overdue(units=7, seconds=100.0)
    sizer.died(units=7)
    assert not sizer.sized
    assert sizer.next_size(waiting=3) == 7
    assert sizer.per_pack == 7


def test_the_queue_cuts_packs_as_asked_and_keeps_their_order() -> None:
    queue = PackQueue(range(10), PackSizer(fixed=3, workers=2))
    assert queue.take(2) == [[0, 1, 2], [3, 4, 5]]
    assert queue.take() == [[6, 7, 8], [9]]
    assert not queue


def test_units_sent_alone_go_first_one_per_pack_and_are_counted_as_sent_again() -> None:
    queue = PackQueue(range(4), PackSizer(fixed=2, workers=2))
    first = queue.take(1)
    assert (first, queue.taken_again) == ([[0, 1]], 0)
    queue.send_alone(first[0])  # its worker died
    assert queue.take(3) == [[0], [1], [2, 3]]
    assert queue.taken_again == 2
    queue.send_alone([9])
    assert queue.clear() == 1  # one unit dropped had been sent before
    assert not queue
