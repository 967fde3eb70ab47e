"""The errors stemma.slurm raises: one root, one subclass per failure a caller can act on."""

from __future__ import annotations

from stemma.core.errors import StemmaError

START_HINT = "start the development cluster with: bash scripts/slurm-dev-cluster.sh start"


class SlurmError(StemmaError, RuntimeError):
    """Root of every error stemma.slurm raises on purpose."""


class ClusterUnavailableError(SlurmError):
    """The SLURM commands are missing, or the controller or accounting does not answer.

    The message names the command that failed, its output, and how to start a cluster.
    """


class SubmissionError(SlurmError):
    """``sbatch`` refused a wave (bad partition, too much memory, an unknown option)."""


class NotInAllocationError(SlurmError):
    """``slurm-intra`` was asked for outside a SLURM allocation (``SLURM_JOB_ID`` is unset)."""
