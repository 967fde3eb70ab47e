"""stemma.slurm: stemma's SLURM backends through submitit job arrays.

``Pipeline.create(..., backend="slurm")`` finds :class:`SlurmBackend` through the
``stemma.backends`` entry point; :func:`reap` cancels the jobs of a run whose orchestrator died.
"""

from stemma.slurm.backend import SlurmBackend
from stemma.slurm.errors import (
    ClusterUnavailableError,
    NotInAllocationError,
    SlurmError,
    SubmissionError,
)
from stemma.slurm.intra import SlurmIntraBackend
from stemma.slurm.poller import PollSettings
from stemma.slurm.reap import reap, run_jobs

__all__ = [
    # backends
    "SlurmBackend",
    "SlurmIntraBackend",
    "PollSettings",
    # reaping
    "reap",
    "run_jobs",
    # errors
    "SlurmError",
    "ClusterUnavailableError",
    "SubmissionError",
    "NotInAllocationError",
]
