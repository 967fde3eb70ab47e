"""`LineFeed`: statuses at once, count-only lines at most every `count_every` seconds."""

from __future__ import annotations

from dataclasses import replace

from stemma.core.live import RunState, RunStatus, StepState
from stemma.core.runs.watch_lines import LineFeed

from .conftest import StateFactory


def _transform(state: RunState, **changes: object) -> RunState:
    return replace(state, steps=(state.steps[0], replace(state.steps[1], **changes)))  # pyright: ignore[reportArgumentType]


def test_line_feed_holds_count_lines_until_due_and_tells_statuses_at_once(
    make_state: StateFactory,
) -> None:
    first = make_state()
    feed = LineFeed(count_every=10.0)
    assert len(feed.lines(first, now=0.0)) == 3  # the run, then each step

    assert feed.lines(_transform(first, succeeded=2, running=1), now=1.0) == []
    assert feed.lines(_transform(first, succeeded=3, running=1), now=2.0) == []
    assert feed.lines(_transform(first, succeeded=3, running=1), now=10.5) == [
        "step 1 transform: 3/4 (succeeded 3, cached 0, failed 0, cancelled 0, running 1)"
    ]
    done: RunState = _transform(
        first, status="completed", succeeded=4, running=0
    )  # a step's end is told at once, with its counts, and not again at the next due time
    assert feed.lines(done, now=11.0) == [
        "step 1 transform: completed 4/4 (succeeded 4, cached 0, failed 0, cancelled 0, running 0)"
    ]
    assert feed.lines(done, now=25.0) == []
    ended = replace(done, status=RunStatus.COMPLETED)
    assert feed.lines(ended, now=25.5) == []  # the run's end is its summary line (write_lines)


def test_line_feed_with_no_interval_tells_every_change_as_watch_does(
    make_state: StateFactory,
) -> None:
    first = make_state()
    feed = LineFeed()
    feed.lines(first, now=0.0)
    moved = _transform(first, succeeded=2, running=1)
    assert feed.lines(moved, now=0.1) == [
        "step 1 transform: 2/4 (succeeded 2, cached 0, failed 0, cancelled 0, running 1)"
    ]
    jobs = _transform(moved, jobs={"RUNNING": 1})
    assert feed.lines(jobs, now=0.2) == ["step 1 transform: jobs RUNNING=1"]


def test_line_feed_shows_a_new_step_at_once_between_count_times(
    make_state: StateFactory,
) -> None:
    first = make_state()
    feed = LineFeed(count_every=10.0)
    feed.lines(first, now=0.0)
    third = StepState(number=2, name="load", operation="example.load", status="pending", total=4)
    grown = replace(first, steps=(*first.steps, third))
    assert feed.lines(grown, now=1.0) == [
        "step 2 load: pending 0/4 (succeeded 0, cached 0, failed 0, cancelled 0, running 0)"
    ]


def test_line_feed_holds_count_lines_per_step_not_per_run(make_state: StateFactory) -> None:
    first = make_state()
    feed = LineFeed(count_every=10.0)
    feed.lines(first, now=0.0)
    third = StepState(number=2, name="load", operation="example.load", status="running", total=4)
    grown = replace(first, steps=(*first.steps, third))
    assert len(feed.lines(grown, now=8.0)) == 1  # its status line, with its counts
    moved = replace(grown, steps=(first.steps[0], replace(first.steps[1], succeeded=2), third))
    assert feed.lines(moved, now=10.5) == [
        "step 1 transform: 2/4 (succeeded 2, cached 0, failed 0, cancelled 0, running 2)"
    ]
    loading = replace(moved, steps=(*moved.steps[:2], replace(third, succeeded=1)))
    assert feed.lines(loading, now=12.0) == []  # step 2 was told at 8.0
    # 10 s after step 2 was told, though step 1 was told only 8 s ago
    assert feed.lines(loading, now=18.5) == [
        "step 2 load: 1/4 (succeeded 1, cached 0, failed 0, cancelled 0, running 0)"
    ]
