"""How the orchestrator process was started, kept in its run's state so a resume can start it again.

A run's live state records the process's whole command line (:func:`launch_command`) and its
working directory; ``stemma resume RUN`` runs that line again, detached, with the run's root and
backend in the environment and :data:`RESUMES_ENV` naming the run it resumes.
"""

from __future__ import annotations

import os
import sys

from stemma.core.run_ids import check_run_id

RESUMES_ENV = "STEMMA_RESUMES"
"""Set by ``stemma resume RUN`` for the process it starts: the run of that process's pipeline
records that it resumes ``RUN``."""


def launch_command() -> tuple[str, ...]:
    """This process's command line as its interpreter was started, runnable again.

    ``sys.orig_argv`` rather than ``sys.argv``: it keeps ``-m module`` (``sys.argv`` has the
    module's file instead, which runs without its package), ``-c CODE`` and the console script
    (``stemma run flow.py``). Its first word becomes ``sys.executable``: ``python`` found on
    the ``PATH`` of the shell that started it may not be the same Python in another shell.
    """
    words = tuple(sys.orig_argv)
    if not words or not sys.executable:
        return words
    return (sys.executable, *words[1:])


def resumed_run(pipeline_name: str) -> str:
    """The run a new run of ``pipeline_name`` resumes, from :data:`RESUMES_ENV`; else empty.

    Only a run of the same pipeline resumes it: a script that runs a preparing pipeline
    before the one that went stale starts that one afresh.
    """
    resumed = os.environ.get(RESUMES_ENV, "")
    if not resumed:
        return ""
    try:
        check_run_id(resumed)
    except ValueError:
        return ""  # not ours to trust: a run id is all it may hold
    name = resumed.rsplit("_", 3)[0] if resumed.count("_") >= 3 else resumed
    return resumed if name == pipeline_name else ""
