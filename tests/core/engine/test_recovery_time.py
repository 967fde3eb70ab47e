"""Every wave a run sends says when the run's recovery began, on both front doors.

A scheduler adopts a dead run's element that finished after that moment (its bundles were not
committed by the recovery): counted from any later moment, such as the backend's opening, an
element finishing in between is sent again and what it staged stays in staging.
"""

import pathlib
import time
from collections.abc import Collection

import pytest

from stemma.core import OUT, Pipeline, apply, run
from stemma.core.backends.base import AdoptedElement, WaveRequest
from stemma.core.backends.thread import ThreadBackend
from stemma.core.engine import run_setup
from stemma.core.examples import DataGenerator
from stemma.core.store import open_run_store
from tests.core.lazy_functions import pid


class AskingBackend(ThreadBackend):
    """A thread backend that queues waves and can adopt (nothing), as a scheduler does.

    It keeps the requests it was asked to adopt with.
    """

    queues_whole_waves = True

    def adopt(self, keys: Collection[str], request: WaveRequest) -> list[AdoptedElement]:
        ASKED.append(request)
        return []


ASKED: list[WaveRequest] = []
"""What the runs' backends were asked to adopt with, in order."""


def _open_asking(name: str, *, max_workers: int | None = None, **_: object) -> AskingBackend:
    return AskingBackend(max_workers)


@pytest.fixture
def recoveries(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """When each recovery of the store began; the runs open ``AskingBackend``."""
    ASKED.clear()
    monkeypatch.setattr(run_setup, "open_backend", _open_asking)
    store_class = type(open_run_store(tmp_path / "probe"))
    recover = store_class.recover
    began: list[float] = []

    def timed(self: object, *args: object, **kwargs: object) -> int:
        began.append(time.time())
        return recover(self, *args, **kwargs)  # pyright: ignore[reportArgumentType]

    monkeypatch.setattr(store_class, "recover", timed)
    return began


def test_a_lazy_run_s_waves_say_when_its_recovery_began(
    tmp_path: pathlib.Path, recoveries: list[float]
) -> None:
    before = time.time()
    run(apply("pid", pid, version="v1", out_path=OUT), root=tmp_path / "root", backend="local")
    assert ASKED, "the run never asked its backend for work to adopt"
    first = recoveries[0]  # the run's own; a function step recovers its name again, later
    assert all(before <= wave.recovered_at <= first for wave in ASKED)


def test_a_pipeline_s_waves_say_when_its_recovery_began(
    tmp_path: pathlib.Path, recoveries: list[float]
) -> None:
    before = time.time()
    pipeline = Pipeline.create("recovery_time", root=tmp_path / "root", backend="local")
    pipeline.run(DataGenerator, params={"count": 2, "rows": 2})
    pipeline.finalize()
    assert ASKED, "the run never asked its backend for work to adopt"
    assert all(before <= wave.recovered_at <= recoveries[0] for wave in ASKED)
