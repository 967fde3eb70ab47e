"""The live channel: a running pipeline's state file and its control requests (concepts/store.md).

Readers (``stemma status``, ``stemma watch``, the dashboard) use :func:`read_state` and
:func:`list_states`; ``stemma cancel`` and the dashboard use :func:`request_cancel`.
"""

from stemma.core.live.control import CancelRequest, pending_requests, request_cancel
from stemma.core.live.state import (
    STALE_AFTER_SECONDS,
    RunState,
    RunStatus,
    StepState,
    list_states,
    read_state,
    run_dir,
    write_state,
)

__all__ = [
    # reading and writing the state
    "STALE_AFTER_SECONDS",
    "RunState",
    "RunStatus",
    "StepState",
    "list_states",
    "read_state",
    "run_dir",
    "write_state",
    # control requests
    "CancelRequest",
    "pending_requests",
    "request_cancel",
]
