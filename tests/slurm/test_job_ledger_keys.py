"""The job ledger says which execution keys each array element computes (issue 20's ground).

A unit sent to the cluster must be findable by its key once the orchestrator that sent it is
gone: the ledger line written when sbatch returns lists, per element, the keys of its units.
"""

import json
import pathlib

import polars as pl
import pytest

from stemma.core.examples import DataGenerator, Transform
from stemma.core.front.pipeline import Pipeline
from stemma.slurm.job_ledger import (
    LEDGER_NAME,
    JobLedger,
    LedgerEntry,
    elements_by_key,
    read_ledger,
)
from stemma.storage import executions


def _entry(job_id: str, keys: tuple[tuple[str, ...], ...]) -> LedgerEntry:
    return LedgerEntry(
        job_id=job_id,
        job_name="stemma-abcdef12-s1-transform",
        step_number=1,
        elements=len(keys),
        log_dir="/x/logs/slurm/run",
        submitted_at="2026-12-02T08:00:00+00:00",
        keys=keys,
    )


def test_keys_round_trip_and_map_to_their_element(tmp_path: pathlib.Path) -> None:
    path = tmp_path / LEDGER_NAME
    ledger = JobLedger()
    ledger.record(path, _entry("100", (("k1", "k2"), ("k3",))))
    ledger.record(path, _entry("200", (("k2",),)))  # k2 sent again, alone: a lone job
    assert [e.keys for e in read_ledger(path)] == [(("k1", "k2"), ("k3",)), (("k2",),)]
    assert elements_by_key(path) == {"k1": "100_0", "k2": "200", "k3": "100_1"}


def test_an_old_garbled_or_missing_ledger_reads_as_what_it_can(tmp_path: pathlib.Path) -> None:
    path = tmp_path / LEDGER_NAME
    assert elements_by_key(path) == {}
    old = {k: v for k, v in _entry("7", (("a",),)).__dict__.items() if k != "keys"}
    path.write_text(
        json.dumps(old)
        + "\n{not json\n"
        + json.dumps({**old, "job_id": "8", "keys": 5})
        + "\n"
        + json.dumps({**old, "job_id": "9", "keys": [["z"]]})
        + '\n{"job_id": "10", "keys": [["torn'
    )
    assert [e.job_id for e in read_ledger(path)] == ["7", "9"]
    assert next(read_ledger(path)).keys == ()
    assert elements_by_key(path) == {"z": "9"}


@pytest.mark.slurm
def test_a_run_s_ledger_names_the_element_of_every_unit_it_sent(
    slurm_cluster: None, tmp_path: pathlib.Path
) -> None:
    root = tmp_path / "store"
    pipeline = Pipeline.create("keyed", root=root, backend="slurm")
    generated = pipeline.run(DataGenerator, params={"count": 10, "rows": 2})
    pipeline.run(
        Transform,
        inputs={"dataset": generated.output("datasets")},
        execution={"artifacts_per_unit": 1, "units_per_worker": 3},
    )
    assert pipeline.finalize()["overall_success"] is True
    path = root / "runs" / pipeline.run_id / LEDGER_NAME
    [transform] = [e for e in read_ledger(path) if e.step_number == 1]
    assert [len(keys) for keys in transform.keys] == [3, 3, 3, 1]  # 10 units, 3 per element
    ran = executions(root).filter(pl.col("step_number") == 1)["execution_spec_id"].to_list()
    by_key = elements_by_key(path)
    assert sorted(ran) == sorted(k for keys in transform.keys for k in keys)
    assert {by_key[key] for key in ran} == {f"{transform.job_id}_{i}" for i in range(4)}
