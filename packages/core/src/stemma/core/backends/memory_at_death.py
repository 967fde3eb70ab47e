"""What a worker killed for memory leaves to read: its peak, and the machine's memory then.

A worker that dies by SIGKILL was most often taken by the OOM killer (the kernel's, or a
cgroup's at its limit). Whether the worker asked too much or the machine had too little left is
told by four numbers, gathered by the orchestrator as it finds the death
(:func:`memory_at_death`):

- ``peak_rss_bytes``: the worker's peak resident memory (see ``reaped_workers``: the kernel's
  own count, handed over as the worker is reaped), or None when unknown;
- ``system_total_bytes`` and ``system_available_bytes``: ``MemTotal`` and ``MemAvailable`` of
  ``/proc/meminfo`` on the orchestrator's host (the worker's: local workers run beside it);
- ``cgroup_limit_bytes``: the tightest memory limit of the cgroup the orchestrator, and so its
  workers, run in and of the cgroups above it (v2 ``memory.max``, v1
  ``memory.limit_in_bytes``), or None when there is none (or it cannot be read).

They are recorded as ``metadata.memory`` of the unit's execution row (:meth:`as_metadata`: those
four keys, always all of them, integers or null), written out in its failure log, and said in
its one-line error (:meth:`describe`).
"""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass
from pathlib import Path

MEMORY_KEY = "memory"
"""The key of an execution's ``metadata`` that holds :meth:`MemoryAtDeath.as_metadata`."""
_UNLIMITED = 1 << 60
"""A cgroup v1 limit at least this large is no limit (v1 writes ~2**63 rounded to pages)."""


@dataclass(frozen=True)
class MemoryAtDeath:
    """A dead worker's peak and its host's memory when the death was found (bytes, or None)."""

    peak_rss_bytes: int | None
    system_total_bytes: int | None
    system_available_bytes: int | None
    cgroup_limit_bytes: int | None

    def as_metadata(self) -> dict[str, int | None]:
        """The four facts by name, for an execution's ``metadata.memory`` (JSON)."""
        return asdict(self)

    def describe(self) -> str:
        """``peak RSS 3.1 GiB; system 2.0 GiB of 24.0 GiB available; cgroup limit 4.0 GiB``."""
        peak = "peak RSS " + (
            "unknown" if self.peak_rss_bytes is None else _size(self.peak_rss_bytes)
        )
        total, available = self.system_total_bytes, self.system_available_bytes
        if total is None or available is None:
            system = "system memory unknown"
        else:
            system = f"system {_size(available)} of {_size(total)} available"
        limit = self.cgroup_limit_bytes
        cgroup = "no cgroup limit" if limit is None else f"cgroup limit {_size(limit)}"
        return f"{peak}; {system}; {cgroup}"

    def block(self) -> str:
        """The facts one a line, exact and readable, for the error text and the failure log."""
        lines = ["Memory when the worker's death was found (metadata.memory):"]
        for name, value in self.as_metadata().items():
            shown = "null" if value is None else f"{value} ({_size(value)})"
            lines.append(f"  {name}: {shown}")
        return "\n".join(lines)


def memory_at_death(peak_rss_kb: int | None) -> MemoryAtDeath:
    """The facts now, for a worker whose peak was ``peak_rss_kb`` KiB (None: unknown)."""
    total, available = system_memory()
    return MemoryAtDeath(
        peak_rss_bytes=None if peak_rss_kb is None else peak_rss_kb * 1024,
        system_total_bytes=total,
        system_available_bytes=available,
        cgroup_limit_bytes=cgroup_memory_limit(),
    )


def system_memory(meminfo: Path = Path("/proc/meminfo")) -> tuple[int | None, int | None]:
    """``MemTotal`` and ``MemAvailable`` in bytes (None each where not readable)."""
    found: dict[str, int] = {}
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in meminfo.read_text().splitlines():
            name, _, rest = line.partition(":")
            if name in ("MemTotal", "MemAvailable"):
                found[name] = int(rest.split()[0]) * 1024  # (the kernel says kB: KiB)
    return found.get("MemTotal"), found.get("MemAvailable")


def cgroup_memory_limit(proc: Path = Path("/proc/self")) -> int | None:
    """The tightest memory limit over this process's cgroup and its ancestors, or None.

    Read from cgroup v2 (``memory.max``) or v1's memory controller (``memory.limit_in_bytes``),
    whichever this process is in, where ``/proc/self/mountinfo`` says each is mounted.
    """
    try:
        memberships = (proc / "cgroup").read_text().splitlines()
        mounts = (proc / "mountinfo").read_text().splitlines()
    except OSError:
        return None
    limits: list[int] = []
    for line in memberships:
        number, controllers, path = [*line.split(":", 2), "", ""][:3]
        if number == "0" and not controllers:
            limits += _limits(_mount(mounts, "cgroup2", None), path, "memory.max")
        elif "memory" in controllers.split(","):
            limits += _limits(_mount(mounts, "cgroup", "memory"), path, "memory.limit_in_bytes")
    return min(limits, default=None)


def _mount(mounts: list[str], fstype: str, option: str | None) -> tuple[str, Path] | None:
    """The first mount of ``fstype`` (with ``option`` among its options): its root and place."""
    for line in mounts:
        fields = line.split()
        if " - " not in line or len(fields) < 5:
            continue
        kind, _, options = line.split(" - ", 1)[1].partition(" ")
        options = options.split(" ")[-1].split(",") if options else []
        if kind == fstype and (option is None or option in options):
            return fields[3], Path(fields[4])
    return None


def _limits(mount: tuple[str, Path] | None, path: str, name: str) -> list[int]:
    """The finite limits ``name`` holds in the cgroup at ``path`` and its ancestors."""
    if mount is None:
        return []
    root, place = mount
    if root != "/" and path.startswith(root):  # a mount of a subtree (a container's)
        path = path[len(root) :]
    folder = place / path.strip("/")
    limits: list[int] = []
    while True:
        with contextlib.suppress(OSError, ValueError):
            text = (folder / name).read_text().strip()
            if text != "max" and int(text) < _UNLIMITED:
                limits.append(int(text))
        if folder == place or place not in folder.parents:
            return limits
        folder = folder.parent


def _size(count: int) -> str:
    """Bytes in words: ``3.1 GiB``, ``300 MiB``."""
    if count >= 1 << 30:
        return f"{count / (1 << 30):.1f} GiB"
    return f"{count / (1 << 20):.0f} MiB"
