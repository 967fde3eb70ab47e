"""A stateful model test: random runs, reruns, edits, cancels, kills and resumes on one root.

A hypothesis ``RuleBasedStateMachine`` drives real orchestrators (``model_pipeline.py``: ingest
a folder of CSV files, scale each slowly, transform) on one real Delta root, and keeps a model
of what must have been committed (``root_model.py``). Each rule leaves no run going: it waits
for the runs it started, or kills them. After every rule the tables are held to the promises
(``root_checks.py``): no artifact indexed twice, no execution key run again once it succeeded,
no cache hit on anything uncommitted, every count in the live state equal to the tables,
nothing committed lost; and every rerun of a combo that finished executes nothing.

CI runs a few short, derandomized examples (reproducible); ``STEMMA_MODEL_EXAMPLES`` and
``STEMMA_MODEL_STEPS`` run more, with fresh randomness, e.g.
``STEMMA_MODEL_EXAMPLES=30 STEMMA_MODEL_STEPS=12 pytest tests/model -k stateful``.
Examples it found that failed are kept as plain tests in ``test_model_regressions.py``.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import signal
import tempfile
from typing import ClassVar

import polars as pl
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from stemma.core.engine.cancel.cancellation import HARD_EXIT_CODE
from stemma.core.live import RunStatus, list_states, read_state, request_cancel
from tests.model import root_checks
from tests.model.orchestrators import Ended, Orchestrator
from tests.model.root_model import FILES, SCALES, VARIANTS, Combo, RootModel

EXAMPLES = int(os.environ.get("STEMMA_MODEL_EXAMPLES", "2"))
STEPS = int(os.environ.get("STEMMA_MODEL_STEPS", "6"))
EXPLORING = "STEMMA_MODEL_EXAMPLES" in os.environ
"""A longer local run explores with fresh randomness; CI replays the same examples each time."""
UNIT_SECONDS = 0.8
"""How long each slow unit sleeps: the slow step (two waves) outlasts the ~2 s a cancel can take
to land (the live state that shows a unit running, then the control folder, each read once a
second)."""
ENDS_OF_A_HARD_CANCEL = (0, -signal.SIGINT, HARD_EXIT_CODE)
"""A hard cancel raises KeyboardInterrupt in the script (docs/concepts/cancellation.md)."""


class RootMachine(RuleBasedStateMachine):
    """One root, one input folder, and the runs a user could make on them."""

    base: ClassVar[pathlib.Path]
    """Where each example makes its folder (the test's ``tmp_path``)."""

    def __init__(self) -> None:
        super().__init__()
        self.folder = pathlib.Path(tempfile.mkdtemp(prefix="example-", dir=self.base))
        self.root = self.folder / "root"
        self.inputs = self.folder / "inputs"
        self.model = RootModel()
        self.history: list[str] = []
        """What the rules did, for a failure's message (a flaky replay prints no steps)."""
        self._write(self.inputs, self.model.files())

    # ------------------------------------------------------------------ helpers

    @staticmethod
    def _write(folder: pathlib.Path, files: dict[str, str]) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (folder / name).write_text(text)

    def _start(
        self,
        *,
        resume: str | None = None,
        inputs: pathlib.Path | None = None,
        scale: float | None = None,
    ) -> Orchestrator:
        return Orchestrator(
            self.root,
            inputs or self.inputs,
            self.model.scale if scale is None else scale,
            UNIT_SECONDS,
            resume=resume,
        )

    def _executed_by(self, run_id: str, numbers: list[int]) -> int:
        """Execution rows of the units steps ``numbers`` of ``run_id`` ran: not what its start
        recovered of other runs, nor what a resumed run's first attempt ran."""
        tables = root_checks.read_tables(self.root)
        steps, executions = tables.get(root_checks.STEPS), tables.get(root_checks.EXECUTIONS)
        if steps is None or executions is None:
            return 0
        ours = (pl.col("pipeline_run_id") == run_id) & pl.col("step_number").is_in(numbers)
        attempts = steps.filter(ours).get_column("step_run_id")
        return executions.filter(pl.col("step_run_id").is_in(attempts.to_list())).height

    def _completed(self, ended: Ended, combo: Combo, *, done_before: bool) -> None:
        """The run succeeded; if ``combo`` had finished before (``done_before``), it ran nothing.

        Judged on the run's live state: a resumed run's summary also holds the steps its first
        attempt cancelled, while its live state holds the steps this process ran.
        """
        state = read_state(self.root, ended.run_id)
        steps = [(s.name, s.status, s.total, s.cached, s.failed) for s in state.steps]
        assert ended.returncode == 0, (
            f"run {ended.run_id} ended {ended.returncode}:\n{ended.stderr}"
        )
        assert state.status is RunStatus.COMPLETED, f"{state.status}: {steps}\n{ended.stderr}"
        assert all(s.status == "completed" and not s.failed for s in state.steps), steps
        if done_before:
            redone = [s for s in state.steps if s.cached != s.total]
            assert not redone, f"a rerun of finished {combo} executed work: {steps}"
            ran = self._executed_by(ended.run_id, [s.number for s in state.steps])
            assert not ran, f"a rerun of finished {combo} ran {ran} unit(s)"
        self.model.finished.add(combo)
        self.model.staged_left = False  # the run's start committed anything left staged

    def _run_to_end(
        self,
        *,
        inputs: pathlib.Path | None = None,
        combo: Combo | None = None,
        resume: str | None = None,
    ) -> None:
        combo = combo or self.model.combo
        done = combo in self.model.finished
        ended = self._start(resume=resume, inputs=inputs, scale=combo[1]).wait()
        self.history.append(f"run {ended.run_id} of {combo} (resuming {resume})")
        self._completed(ended, combo, done_before=done)

    # ------------------------------------------------------------------ rules

    @rule()
    def run(self) -> None:
        """Run the pipeline on the inputs as they are (a rerun, if nothing changed)."""
        self._run_to_end()

    @precondition(lambda self: bool(self.model.finished))
    @rule(data=st.data())
    def rerun_a_finished_combo(self, data: st.DataObject) -> None:
        """Rerun inputs and a param some run finished, from a folder of their own: no work."""
        self.rerun(data.draw(st.sampled_from(sorted(self.model.finished)), label="combo"))

    def rerun(self, combo: Combo) -> None:
        """Rerun ``combo`` from a folder of its own (the contents are the key, not the paths)."""
        folder = self.folder / "rerun"
        shutil.rmtree(folder, ignore_errors=True)
        self._write(folder, self.model.files(combo))
        self._run_to_end(inputs=folder, combo=combo)

    @rule(scale=st.sampled_from(SCALES))
    def change_param(self, scale: float) -> None:
        """The next runs scale by ``scale``."""
        self.model.scale = scale
        self.history.append(f"scale {scale}")

    @rule(name=st.sampled_from(FILES), variant=st.integers(0, VARIANTS - 1))
    def edit_input(self, name: str, variant: int) -> None:
        """Rewrite one input file (its content may be one already run)."""
        self.model.variants[name] = variant
        self.history.append(f"edit {name} to variant {variant}")
        self._write(self.inputs, {name: self.model.files()[name]})

    @rule(level=st.sampled_from((1, 2, 3)))
    def cancel(self, level: int) -> None:
        """Start a run and cancel it at ``level`` once its slow units run."""
        combo = self.model.combo
        done = combo in self.model.finished
        running = self._start()
        landed = running.wait_until_slow_units_run()
        if landed:
            request_cancel(self.root, running.run_id, level)
        ended = running.wait()
        state = running.state()
        assert state is not None, ended.stderr
        landed = landed and state.status is not RunStatus.COMPLETED
        self.history.append(f"cancel {ended.run_id} of {combo} at {level} (landed: {landed})")
        if not landed:  # it finished first (the request is read within a second): a plain run
            self._completed(ended, combo, done_before=done)
            return
        assert state.cancel_level == level, ended.stderr
        assert state.status is RunStatus.CANCELLED, f"{state.status}:\n{ended.stderr}"
        codes = (0,) if level < 3 else ENDS_OF_A_HARD_CANCEL
        assert ended.returncode in codes, f"exit {ended.returncode}:\n{ended.stderr}"
        self.model.interrupted.append(ended.run_id)
        self.model.staged_left = level == 3

    @rule()
    def kill_9(self) -> None:
        """Start a run and ``kill -9`` it (and its workers) while its slow units run."""
        running = self._start()
        running.wait_until_slow_units_run()
        running.kill()
        self.history.append(f"kill -9 {running.run_id} of {self.model.combo}")
        self.model.interrupted.append(running.run_id)
        self.model.staged_left = True

    @precondition(lambda self: bool(self.model.interrupted))
    @rule()
    def resume(self) -> None:
        """Resume the newest cancelled or killed run (``Pipeline.resume``) on today's inputs."""
        self._run_to_end(resume=self.model.interrupted.pop())

    @rule()
    def second_runner(self) -> None:
        """Two orchestrators at once on the same root and inputs: each step executes once."""
        combo = self.model.combo
        done = combo in self.model.finished
        first, second = self._start(), self._start()
        ended = [first.wait(), second.wait()]
        self.history.append(f"two runners {first.run_id}, {second.run_id} of {combo}")
        for one in ended:
            self._completed(one, combo, done_before=done)

    # ------------------------------------------------------------------ invariants

    @invariant()
    def promises_hold(self) -> None:
        """What the tables and the live states must say after every rule."""
        if not self.root.exists():
            return  # nothing run yet
        running = [s.run_id for s in list_states(self.root) if s.status is RunStatus.RUNNING]
        assert not running, f"runs left going: {running}"
        tables = root_checks.read_tables(self.root)
        problems = [
            *root_checks.indexed_twice(tables),
            *root_checks.executed_twice(tables),
            *root_checks.uncommitted_hits(self.root, tables),
            *root_checks.live_counts_differ(self.root, tables),
        ]
        if not self.model.staged_left:  # else the next start commits the rest
            problems.extend(root_checks.dangling(tables))
        committed = root_checks.committed_keys(tables)
        if lost := self.model.committed - committed:
            problems.append(f"{len(lost)} committed execution(s) lost")
        self.model.committed |= committed
        assert not problems, "\n".join([*problems, "after:", *self.history])


SETTINGS = settings(
    max_examples=EXAMPLES,
    stateful_step_count=STEPS,
    deadline=None,
    derandomize=not EXPLORING,
    database=None,
    suppress_health_check=(HealthCheck.too_slow, HealthCheck.data_too_large),
    print_blob=True,
)
BUDGET_SECONDS = max(300, EXAMPLES * STEPS * 60)
"""What the examples may take at worst (a rule is one or two runs of ~10 s on a loaded machine)."""


@pytest.mark.timeout(BUDGET_SECONDS)
def test_random_runs_cancels_kills_and_resumes_on_one_root_keep_every_promise(
    tmp_path: pathlib.Path,
) -> None:
    RootMachine.base = tmp_path
    run_state_machine_as_test(RootMachine, settings=SETTINGS)


def _tour(machine: RootMachine, moves: list[tuple[str, dict[str, object]]]) -> None:
    """Apply ``moves`` (rule name, arguments) to ``machine``, holding the promises after each."""
    machine.promises_hold()
    for name, arguments in moves:
        getattr(machine, name)(**arguments)
        machine.promises_hold()
    machine.teardown()


def test_every_rule_in_turn_keeps_every_promise(tmp_path: pathlib.Path) -> None:
    # Every rule at least once, in an order where each matters: a resume of a graceful cancel
    # and of a kill; a hard cancel's staged work committed by the next start; a rerun of a
    # finished combo from another folder whose start commits what a kill of another combo left
    # staged (it must still execute nothing); two runners on work a force cancel interrupted.
    RootMachine.base = tmp_path
    a = ((0, 0, 0), 1.0)
    _tour(
        RootMachine(),
        [
            ("cancel", {"level": 1}),
            ("resume", {}),  # a finishes
            ("edit_input", {"name": "b.csv", "variant": 1}),
            ("cancel", {"level": 3}),
            ("kill_9", {}),
            ("rerun", {"combo": a}),
            ("resume", {}),  # the killed run, on b's new content
            ("change_param", {"scale": 2.0}),
            ("cancel", {"level": 2}),
            ("second_runner", {}),
            ("run", {}),
        ],
    )
