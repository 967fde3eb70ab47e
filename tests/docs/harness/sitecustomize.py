"""The docs tests' stand-ins, loaded by every Python process a page's transcripts start.

``tests/docs/console_runner.py`` puts this directory on ``PYTHONPATH`` (never the page's own
directory, whose listing a page may show), so the scripts, the ``stemma`` commands and their
spawned workers all load it at startup:

- ``$STEMMA_DOCS_HOST``: the machine's name every process sees (``socket.gethostname()``), the
  one the page shows;
- ``$STEMMA_DOCS_GATE`` and ``$STEMMA_DOCS_CODE``: a ``time.sleep`` called from the page's own
  code (a file under ``$STEMMA_DOCS_CODE``) returns at once while ``GATE/open`` exists, and is
  held until it does otherwise (leaving a ``GATE/held-…`` file per sleep held). So a command
  the page shows running in the background stays at the moment the page shows, for as long as
  the test needs, and time in the page's code costs nothing. stemma's own sleeps are untouched.
"""

from __future__ import annotations

import os
import socket
import sys
import time
import uuid
from pathlib import Path

_HOST = os.environ.get("STEMMA_DOCS_HOST")
_GATE = os.environ.get("STEMMA_DOCS_GATE")
_CODE = os.environ.get("STEMMA_DOCS_CODE")

if _HOST:

    def _hostname() -> str:
        return _HOST or ""

    socket.gethostname = _hostname

if _GATE and _CODE:
    _real_sleep = time.sleep
    _gate = Path(_GATE)

    def _sleep(seconds: float) -> None:
        caller = sys._getframe(1).f_code.co_filename  # pyright: ignore[reportPrivateUsage]
        if not caller.startswith(_CODE or "\0"):
            _real_sleep(seconds)
            return
        if (_gate / "open").exists():
            return
        (_gate / f"held-{os.getpid()}-{uuid.uuid4().hex}").touch()
        while not (_gate / "open").exists():
            _real_sleep(0.02)

    time.sleep = _sleep
