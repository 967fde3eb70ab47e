"""``RaceGenerate``: the step the Pipelines of the concurrency table race to build.

Only the ``pipeline`` writers of ``concurrency_writer.py`` import it, so that the others start
without the Pipeline's imports.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel

from stemma.core.operations.definition import OperationDefinition
from stemma.core.operations.drafts import DataDraft
from stemma.core.operations.results import ArtifactResult, ExecuteInput, PostprocessInput
from stemma.core.operations.specs import OutputSpec

COMMON_CSV = "x,y\n0,0\n"
"""Bytes every seed writes alike: one artifact id for all the runs."""
DEADLINE_SECONDS = 120.0
"""How long the unit waits for every run to ask before it fails."""


class RaceGenerate(OperationDefinition):
    """Write one file every seed writes alike and one of the seed's own, once all runs asked.

    Its unit appends a line to ``{barrier}/ran`` (so the test counts how often it really ran),
    then holds until all ``writers`` runs have touched ``{barrier}/asked-*``: every run is then
    inside its ``Pipeline.run`` while this unit has neither finished nor committed.
    """

    class Params(BaseModel):
        seed: int = 0
        barrier: str = ""
        writers: int = 1

    name = "race.generate"
    outputs: ClassVar = {
        "datasets": OutputSpec(artifact_type="data", infer_lineage_from={"inputs": []})
    }
    params: Params = Params()

    def execute(self, inp: ExecuteInput) -> Any:
        barrier = Path(self.params.barrier)
        with (barrier / "ran").open("a") as ran:
            ran.write(f"{os.getpid()} seed {self.params.seed}\n")
        deadline = time.monotonic() + DEADLINE_SECONDS
        while len(list(barrier.glob("asked-*"))) < self.params.writers:
            if time.monotonic() > deadline:
                raise TimeoutError(f"not every one of {self.params.writers} runs asked in time")
            time.sleep(0.01)
        (inp.execute_dir / "common.csv").write_text(COMMON_CSV)
        (inp.execute_dir / f"own_{self.params.seed}.csv").write_text(f"x,y\n{self.params.seed},1\n")

    def postprocess(self, inp: PostprocessInput) -> ArtifactResult:
        drafts = [
            DataDraft.draft(path.read_bytes(), path.name, step_number=inp.step_number)
            for path in sorted(inp.files)
        ]
        return ArtifactResult(artifacts={"datasets": drafts})
