"""stemma.tui: reserved for the tui package; nothing is exported yet.

See DESIGN.md and the project's issues for what lands here.
"""

__all__: list[str] = []
