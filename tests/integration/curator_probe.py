"""A curator that says where it ran: importable by name in workers (local and SLURM tests)."""

import json
import os
import pathlib
import time
from typing import Any, ClassVar

from pydantic import BaseModel

from stemma.core.operations import InputSpec, OperationDefinition, OutputSpec, PassthroughResult


class WhereCurated(OperationDefinition):
    """Pass every dataset on, after noting its process in ``{report}/{step}.json``.

    With ``megabytes`` it first holds that much memory, touched, so its peak shows.
    """

    class Params(BaseModel):
        report: str
        megabytes: int = 0
        seconds: float = 0.0
        """How long it then takes (a cancel's target)."""

    name = "test.where_curated"
    inputs: ClassVar = {"dataset": InputSpec(artifact_type="data")}
    outputs: ClassVar = {"dataset": OutputSpec(artifact_type="data")}
    params: Params

    def execute_curator(self, inputs: Any, step_number: int, store: Any) -> PassthroughResult:
        ballast = bytearray(self.params.megabytes * 1024 * 1024)
        ballast[::4096] = b"x" * len(ballast[::4096])  # touch every page: resident
        where = {
            "pid": os.getpid(),
            "ppid": os.getppid(),
            "slurm_job": os.environ.get("SLURM_JOB_ID"),
        }
        report = pathlib.Path(self.params.report) / f"{step_number}.json"
        report.write_text(json.dumps(where))
        time.sleep(self.params.seconds)
        return PassthroughResult(passthrough={"dataset": list(inputs["dataset"]["artifact_id"])})
