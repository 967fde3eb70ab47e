"""An operation that writes to its captured tool output while it runs (for follow mode).

A module of its own, so the spawned workers import it by name.
"""

import time
from typing import Any

from pydantic import BaseModel

from stemma.core.examples import CopyUnlessRefused
from stemma.core.operations.results import ExecuteInput

TICKS = 60


class ChattyCopy(CopyUnlessRefused):
    """Copy each dataset after writing ``ticks`` lines to the tool log, ``seconds`` apart."""

    class Params(BaseModel):
        ticks: int = TICKS
        seconds: float = 0.1

    name = "tests.chatty_copy"
    params: Params = Params()

    def refusal(self, path: Any) -> str | None:
        return None

    def execute(self, inp: ExecuteInput) -> Any:
        with inp.log_path.open("a") as log:
            for tick in range(self.params.ticks):
                print(f"tick {tick}", file=log, flush=True)
                time.sleep(self.params.seconds)
        return super().execute(inp)
