"""What a stale run's description says of its elements still in the scheduler (pure)."""

from __future__ import annotations

from stemma.core.runs.alive_jobs import AliveElement, AliveJobs
from stemma.core.runs.stale_runs import SHOWN_PER_STEP, alive_lines

RUN = "train_20261202_100000_ab12cd34"


def _element(index: int, state: str = "PENDING", *, step: int = 1, keys: int = 1) -> AliveElement:
    return AliveElement(element=f"77_{index}", state=state, step_number=step, keys=keys)


def test_alive_lines_list_elements_per_step_and_count_the_rest() -> None:
    many = tuple(_element(i) for i in range(SHOWN_PER_STEP + 3))
    jobs = AliveJobs(elements=(_element(99, "RUNNING", step=0), *many))
    lines = alive_lines(jobs, RUN)
    assert (
        lines[0]
        == f"  {len(many) + 1} elements still in the scheduler: {len(many)} PENDING, 1 RUNNING"
    )
    assert lines[1] == "    step 0: 77_99 RUNNING"
    assert lines[2].startswith("    step 1: 77_0 PENDING, 77_1 PENDING")
    assert lines[2].endswith(" and 3 more")
    assert lines[3] == (
        f"  `stemma resume {RUN}` starts it again and waits for them; "
        f"`stemma reap {RUN}` cancels them and settles it"
    )


def test_alive_lines_say_which_elements_a_resume_cannot_wait_for() -> None:
    jobs = AliveJobs(elements=(_element(0), _element(1, keys=0)))
    assert jobs.adoptable == 1
    assert "waits for the 1 whose execution keys its ledger recorded" in alive_lines(jobs, RUN)[-1]


def test_alive_lines_of_a_run_with_nothing_left_say_both_ways_on_and_any_problem() -> None:
    lines = alive_lines(AliveJobs(problem="slurm: squeue did not answer"), RUN)
    assert lines == [
        "  (could not ask the scheduler what still runs: slurm: squeue did not answer)",
        f"  nothing of it is left in a scheduler; `stemma resume {RUN}` starts it again "
        f"(what it finished is cached), `stemma reap {RUN}` settles it",
    ]


def test_watch_s_last_line_of_a_stale_run_names_resume_then_reap() -> None:
    from stemma.core.live import RunState, RunStatus
    from stemma.core.runs.watch_lines import summary_line

    state = RunState(
        run_id=RUN,
        name="train",
        status=RunStatus.STALE,
        pid=1,
        host="login1",
        root="/r",
        backend="slurm",
        started_at="2026-12-02T10:00:00+00:00",
        heartbeat="2026-12-02T10:05:00+00:00",
    )
    line = summary_line(state)
    assert line.endswith(
        f"its orchestrator is gone: `stemma resume {RUN}` starts it again "
        f"(waiting for what still runs), `stemma reap {RUN}` settles it"
    ), line
