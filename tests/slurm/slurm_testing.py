"""Test doubles and helpers shared by the SLURM tests (imported by name, like slurm_tasks)."""

import os
import pathlib
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass

from stemma.core.backends.base import WaveRequest
from stemma.core.run_ids import job_name, run_tag

START = "bash scripts/slurm-dev-cluster.sh start"


@dataclass(frozen=True)
class Run:
    """A fresh run id, its wave requests' defaults and its store root."""

    run_id: str
    root: pathlib.Path

    @property
    def tag(self) -> str:
        return run_tag(self.run_id)

    def request(self, *, step: int = 1, max_parallel: int = 2, **options: object) -> WaveRequest:
        return WaveRequest(
            job_name=job_name(self.run_id, step, "test"),
            run_id=self.run_id,
            run_tag=self.tag,
            step_number=step,
            max_parallel=max_parallel,
            memory_gb=0.25,
            time_limit="5",
            log_dir=str(self.root / "logs" / "slurm" / self.run_id),
            **options,  # pyright: ignore[reportArgumentType]
        )

    @property
    def ledger(self) -> pathlib.Path:
        return self.root / "runs" / self.run_id / "slurm_jobs.jsonl"


@dataclass(frozen=True)
class CommandLog:
    """The SLURM commands the code under test ran, through logging wrappers on PATH."""

    path: pathlib.Path

    def calls(self, command: str) -> list[list[str]]:
        if not self.path.exists():
            return []
        lines = self.path.read_text().splitlines()
        return [line.split(" ")[1:] for line in lines if line.split(" ")[0] == command]


def queued(tag: str, *states: str) -> list[str]:
    """The run's array elements in squeue (in one of ``states`` if given), as ``id|name``."""
    filters = ["-t", ",".join(states)] if states else []
    out = subprocess.run(
        ["squeue", "-h", "-r", *filters, "-o", "%i|%j"], capture_output=True, text=True, check=True
    ).stdout
    return [line for line in out.splitlines() if f"|{tag}-" in line]


def processes_under(directory: pathlib.Path) -> list[int]:
    """Live processes whose command line names ``directory`` (a job's log folder, say).

    A command line is bytes, matched as bytes: another process's may be anything (a test fed
    random bytes as an argument), and one that is not UTF-8 must not fail the search.
    """
    wanted = os.fsencode(directory)
    found: list[int] = []
    for proc in pathlib.Path("/proc").iterdir():
        if not proc.name.isdigit():  # self, thread-self: this process again
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ")
            state = (proc / "stat").read_text(errors="replace").rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if wanted in cmdline and state != "Z":
            found.append(int(proc.name))
    return found


def wait_until(condition: Callable[[], object], seconds: float, what: str) -> None:
    """Poll ``condition`` until it holds; fail naming ``what`` after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {seconds}s waiting for {what}"
        time.sleep(0.2)


def flaky_command(
    bin_dir: pathlib.Path, command: str, failures: int, error: str, *, subcommand: str = ""
) -> pathlib.Path:
    """Put in ``bin_dir`` a ``command`` that fails as a loaded slurmctld does, then is the real one.

    Its first ``failures`` calls (of those whose first argument is ``subcommand``, if given)
    print ``error`` and exit 1 without reaching the controller. Returns the file that counts
    the calls (those of ``subcommand``, if given), one line each.
    """
    real = shutil.which(command)
    assert real is not None, f"{command} is not installed: {START}"
    bin_dir.mkdir(exist_ok=True)
    count = bin_dir / f"{command}.calls"
    count.write_text("")
    wrapper = bin_dir / command
    wrapper.write_text(
        "#!/bin/sh\n"
        f'if [ -z "{subcommand}" ] || [ "$1" = "{subcommand}" ]; then\n'
        f'  echo x >> "{count}"\n'
        f'  if [ "$(wc -l < "{count}")" -le {failures} ]; then\n'
        f'    echo "{error}" >&2\n'
        "    exit 1\n"
        "  fi\n"
        "fi\n"
        f'exec "{real}" "$@"\n'
    )
    wrapper.chmod(0o755)
    return count
