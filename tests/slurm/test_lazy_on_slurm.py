"""Lazy function steps on backend="slurm": the same keys and artifacts as on a laptop."""

import json
import pathlib

import pytest
from lazy_tasks import double, square, total, where, write_json
from slurm_testing import CommandLog

from stemma.core import OUT, ArtifactStep, Resources, apply, run
from stemma.core.live import list_states

pytestmark = pytest.mark.slurm


def _graph() -> list[ArtifactStep]:
    data = apply("data", write_json, version="v0", data={"a": 1, "b": 2}, out_path=OUT)
    doubled = apply(
        "double",
        double,
        version="v0",
        source=data,
        out_path=OUT,
        resources=Resources(cpus=1, memory_gb=0.5, time_limit="00:05:00", partition="debug"),
    )
    return [data, doubled]


def _seen(root: pathlib.Path, backend: str) -> list[tuple[str, str, object]]:
    built = run(*_graph(), root=root, backend=backend, max_workers=2)
    return [(a.fingerprint, a.artifact_id, a.value) for a in built]


def test_lazy_steps_on_slurm_local_and_threads_give_the_same_keys_and_artifacts(
    slurm_cluster: None, tmp_path: pathlib.Path, command_log: CommandLog
) -> None:
    on_slurm = _seen(tmp_path / "slurm", "slurm")
    assert on_slurm == _seen(tmp_path / "local", "local")
    assert on_slurm == _seen(tmp_path / "threads", "local-thread")
    assert on_slurm[1][2] == 6
    sbatch = command_log.calls("sbatch")
    assert 1 <= len(sbatch) <= 2  # one array per wave of ready steps
    scripts = [pathlib.Path(call[-1]).read_text() for call in sbatch]
    assert any("#SBATCH --partition=debug" in script for script in scripts), scripts
    (state,) = list_states(tmp_path / "slurm")
    assert state.backend == "slurm"
    assert [step.name for step in state.steps] == ["data", "double"]
    ledger = next((tmp_path / "slurm" / "runs").glob("*/slurm_jobs.jsonl"))
    assert len(ledger.read_text().splitlines()) == len(sbatch)
    # A rerun on any backend finds them built: nothing is submitted again.
    before = len(command_log.calls("sbatch"))
    assert all(a.cached for a in run(*_graph(), root=tmp_path / "slurm", backend="slurm"))
    assert len(command_log.calls("sbatch")) == before


def test_a_lazy_step_runs_inside_a_slurm_job(slurm_cluster: None, tmp_path: pathlib.Path) -> None:
    step = apply("where", where, version="dev", out_path=OUT)
    (artifact,) = run(step, root=tmp_path, backend="slurm")
    assert artifact.value["job"], json.dumps(artifact.value)


def test_ready_lazy_steps_sharing_resources_go_out_as_one_array(
    slurm_cluster: None, tmp_path: pathlib.Path, command_log: CommandLog
) -> None:
    # 24 independent steps become ready at once: one array, cut into max_workers elements
    # (each running several steps), then one more for the step that reads them all.
    leaves = [apply(f"square/{i}", square, version="v0", i=i, out_path=OUT) for i in range(24)]
    top = apply("total", total, version="v0", items=leaves, out_path=OUT)
    (built,) = run(top, root=tmp_path, backend="slurm", max_workers=3)
    assert built.value == sum(i * i for i in range(24))
    sbatch = command_log.calls("sbatch")
    assert len(sbatch) == 2, sbatch
    first = pathlib.Path(sbatch[0][-1]).read_text()
    assert "#SBATCH --array=0-2%3" in first, first
    (state,) = list_states(tmp_path)
    assert {step.status for step in state.steps} == {"completed"}
    # Every leaf is its own step, with its own record: a rerun of one leaf's graph is cached.
    again = run(leaves[5], root=tmp_path, backend="slurm")
    assert again[0].cached
    assert again[0].value == 25
    assert len(command_log.calls("sbatch")) == 2


def test_a_fan_out_whose_function_has_history_goes_out_in_sized_elements(
    slurm_cluster: None, tmp_path: pathlib.Path, command_log: CommandLog
) -> None:
    # Twelve leaves with no history go out one element each; once `square` has a record (here
    # from a run on the local pool), twelve new leaves calling it share 8 elements: milliseconds
    # of work each, spread over as many elements as run at once by default.
    def leaves(version: str) -> list[ArtifactStep]:
        return [apply(f"sq/{i}", square, version=version, i=i, out_path=OUT) for i in range(12)]

    run(*leaves("v0"), root=tmp_path, backend="local")
    built = run(*leaves("v1"), root=tmp_path, backend="slurm")
    assert [a.value for a in built] == [i * i for i in range(12)]
    assert not any(a.cached for a in built)
    (sbatch,) = command_log.calls("sbatch")
    script = pathlib.Path(sbatch[-1]).read_text()
    assert "#SBATCH --array=0-7%8" in script, script
