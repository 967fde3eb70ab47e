"""Settling a ``slurm-intra`` step from its result file, and watching the steps a run adopted.

A step the run started itself settles when its ``srun`` exits. A step it adopted from a dead
run has no ``srun`` here to wait on: a thread polls squeue (one call for all adopted steps) and
settles each once its result file is written, or once squeue no longer lists it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection
from concurrent.futures import Future
from typing import Any

from stemma.core.backends.base import WorkerCrashedError
from stemma.core.shared_paths import warn_if_writable_by_others
from stemma.slurm.element import ElementFiles, ElementResult, crash_error
from stemma.slurm.errors import ClusterUnavailableError

log = logging.getLogger(__name__)

POLL_SECONDS = 1.0
"""Between two squeue calls for the adopted steps."""


def settle_step(files: ElementFiles, *, exit_code: int | None, reason: str | None) -> Any:
    """The value of a step that ended: from its result file, or the error it died of.

    Args:
        files: its result file and log.
        exit_code: its ``srun``'s exit code (None for an adopted step: nobody saw it exit).
        reason: why it may have ended without a result (the run was cancelled), if known.

    Raises:
        WorkerCrashedError: it ended without a result, or its result file holds none.
        BaseException: the exception its unit raised.
    """
    from submitit.core.utils import pickle_load

    if not files.result.exists():
        raise crash_error(files, state="FAILED", exit_code=exit_code, reason=reason)
    warn_if_writable_by_others(files.result, what="a slurm-intra step's result")
    result = pickle_load(files.result)
    if not isinstance(result, ElementResult):
        raise WorkerCrashedError(
            f"{files.result} holds no step result",
            exit_codes=[] if exit_code is None else [exit_code],
            peak_rss_mb=None,
        )
    if result.error is not None:
        raise result.error
    return result.value


class StepWatcher:
    """Settles adopted steps' futures from one squeue call per poll, in one daemon thread."""

    def __init__(
        self,
        listed: Callable[[], Collection[str]],
        reason: Callable[[], str | None],
        poll_seconds: float = POLL_SECONDS,
    ) -> None:
        """Watch nothing yet.

        Args:
            listed: the step names squeue lists in the allocation.
            reason: why a step may have ended without a result (the run was cancelled).
            poll_seconds: between two polls.
        """
        self._listed = listed
        self._reason = reason
        self._poll_seconds = poll_seconds
        self._steps: dict[str, tuple[ElementFiles, Future[Any]]] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def watch(self, step_name: str, files: ElementFiles) -> Future[Any]:
        """A future settled when step ``step_name`` ends."""
        future: Future[Any] = Future()
        future.set_running_or_notify_cancel()
        with self._lock:
            self._steps[step_name] = (files, future)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="stemma-srun-adopted", daemon=True
                )
                self._thread.start()
        return future

    def join(self, timeout: float | None = None) -> None:
        """Wait until every watched step has settled."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._lock:
                if not self._steps:
                    self._thread = None
                    return
                steps = dict(self._steps)
            self._poll(steps)
            time.sleep(self._poll_seconds)

    def _poll(self, steps: dict[str, tuple[ElementFiles, Future[Any]]]) -> None:
        try:
            names = set(self._listed())
        except ClusterUnavailableError as error:  # no answer is not an end: ask again
            log.warning("could not poll adopted srun steps: %s", error)
            return
        for name, (files, future) in steps.items():
            # (the result file is written whole, by a rename, before the step exits)
            if name in names and not files.result.exists():
                continue
            try:
                future.set_result(settle_step(files, exit_code=None, reason=self._reason()))
            except BaseException as error:  # the unit's own exception is the step's outcome
                future.set_exception(error)
            with self._lock:
                self._steps.pop(name, None)
