"""stemma.slurm: reserved for the slurm package; nothing is exported yet.

See DESIGN.md and the project's issues for what lands here.
"""

__all__: list[str] = []
