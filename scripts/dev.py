#!/usr/bin/env python3
"""stemma's developer entry point: demo, lint, typecheck, test, check, bench.

Needs only Python 3.11+ and pip. If `uv` is not on PATH (or is too old), it is installed once
into a bootstrap venv under `.venvs/bootstrap/` and used from there; nothing goes to the user's
or the system's site-packages.

Every stage prints its command before running it, and `check` stops at the first failure.
To add a stage to `check`, add one line to `CHECK` below.

    python3 scripts/dev.py demo     # sync, then run examples/lazy_steps.py
    python3 scripts/dev.py check    # everything CI runs
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import venv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENVS = ROOT / ".venvs"
BOOTSTRAP = VENVS / "bootstrap"
MIN_UV = (0, 5, 0)
UV_REQUIREMENT = "uv>=0.5"
PACKAGES = ("core", "storage", "slurm", "tui")

# pytest's exit code when it collected nothing.
PYTEST_NO_TESTS = 5

if sys.version_info < (3, 11):  # noqa: UP036 - this guard is for people running an old python3
    sys.exit(
        f"stemma needs Python 3.11 or newer; this is {sys.version.split()[0]} ({sys.executable})"
    )


# --------------------------------------------------------------------------- stages


@dataclass(frozen=True, kw_only=True)
class Stage:
    """One command of a workflow.

    `argv` starts with the literal "uv" for uv commands; it is replaced by the uv binary in use.
    """

    name: str
    """Short label shown in the banner and the summary."""
    argv: tuple[str, ...]
    """The command, run from the repository root."""
    env: Mapping[str, str] = field(default_factory=dict[str, str])
    """Extra environment variables, shown before the command."""
    tests_dir: str | None = None
    """For a pytest stage: exit code 5 (nothing collected) passes only if this holds no tests."""
    requires: str | None = None
    """A path that must exist for the stage to run; when it does not, the stage is skipped."""
    background: bool = False
    """Started, then left running beside the stages after it; its output is shown, and its
    verdict counted, when they are done (see ``run_workflow``)."""


def run_tool(*argv: str) -> tuple[str, ...]:
    """A command run in the root environment, already synced by the first stage."""
    return ("uv", "run", "--no-sync", *argv)


SYNC = Stage(name="uv sync", argv=("uv", "sync", "--all-packages", "--group", "docs"))
RUFF_CHECK = Stage(name="ruff check", argv=run_tool("ruff", "check", "."))
RUFF_FORMAT = Stage(name="ruff format --check", argv=run_tool("ruff", "format", "--check", "."))
BASEDPYRIGHT = Stage(name="basedpyright (strict)", argv=run_tool("basedpyright"))
IMPORT_LINTER = Stage(name="import-linter", argv=run_tool("lint-imports"))
PYTEST = Stage(name="pytest (whole suite)", argv=run_tool("pytest"), tests_dir="tests")

# Most tests wait on other processes (workers, a run's orchestrator, tmux, the SLURM cluster), so
# three pytest-xdist workers keep a 2-core machine busy where one left it half idle; worksteal
# evens out suites whose slow tests sit together. Every test is written to run beside others:
# its own temporary root, tmux session and run ids.
PARALLEL = ("--numprocesses", "3", "--dist", "worksteal")
# The SLURM tests share one 2-CPU node: run side by side, they would wait for each other's
# allocations and their time-limit tests would measure the queue. They run one at a time, but
# beside the other test stages (``background``): they spend most of their minutes waiting on
# the scheduler, the others on the CPU, and no other stage uses the cluster.
SLURM_PACKAGE = "slurm"


def across_packages() -> Stage:
    """The tests that span packages (integration, docs): every tests/ folder not a package's.

    `check` runs these in the workspace environment and each package's own tests in that
    package's environment alone, so every test runs once and each package is proven alone.
    """
    folders = sorted(
        f"tests/{path.name}"
        for path in (ROOT / "tests").iterdir()
        if path.is_dir() and path.name not in PACKAGES and not path.name.startswith((".", "_"))
    )
    return Stage(
        name="pytest (tests across packages)", argv=run_tool("pytest", *PARALLEL, *folders)
    )


def package_alone(package: str) -> Stage:
    """Install one member alone in its own exact environment and run its own tests there.

    stemma-storage's tests run with every test root under an odd path (``ODD_ROOT_ENV``): once,
    where it costs nothing more; the integration tests read Delta under ordinary roots.
    """
    odd = ODD_ROOT_ENV if package == "storage" else {}
    slurm = package == SLURM_PACKAGE
    return Stage(
        name=f"stemma-{package} alone" + (" (under an odd root path)" if odd else ""),
        argv=(
            "uv",
            "run",
            "--exact",
            "--package",
            f"stemma-{package}",
            "pytest",
            *(() if slurm else PARALLEL),
            f"tests/{package}",
        ),
        env={"UV_PROJECT_ENVIRONMENT": f".venvs/{package}", **odd},
        tests_dir=f"tests/{package}",
        background=slurm,
    )


# The integration tests that read real roots' Delta tables (runs, artifacts, lineage, commit order,
# recovery) once more, every test's root below a directory whose name has a space and a non-ASCII
# letter (tests/conftest.py reads the variable): such a root once broke every Delta read, because
# delta-rs hands back escaped file URIs. The storage suite runs under such a root in its own stage
# (package_alone). Not all of tests/integration: a second pass of everything took 12 minutes on
# this machine; the kill-9 matrix (test_fault_promises) is left to the first pass, its Delta reads
# under an odd root being those of test_kill_during_commit and test_commit_order.
ODD_ROOT_ENV = {"STEMMA_TEST_ROOT_NAME": "root with space é"}
ODD_ROOT_TESTS = (
    "tests/integration/test_pipeline.py",
    "tests/integration/test_lazy_steps_on_delta.py",
    "tests/integration/test_cli_history.py",
    "tests/integration/test_cli_run.py",
    "tests/integration/test_materialize_as.py",
    "tests/integration/test_commit_order.py",
    "tests/integration/test_kill_during_commit.py",
)
ODD_ROOT = Stage(
    name="pytest (Delta reads again, under an odd root path)",
    argv=run_tool("pytest", *PARALLEL, *ODD_ROOT_TESTS),
    env=ODD_ROOT_ENV,
)
# The integration tests that drive whole runs through the public API (both front doors, the CLI,
# history, lineage, materializing, kill -9 mid-commit, concurrent runs) once more with every root
# a new bucket of the local S3 server (tests/roots_under_test.py reads the variable), as a user
# on S3 gives them: issue 32's "the integration suite runs once more with every root on S3".
S3_ROOT_TESTS = (
    "tests/integration/test_pipeline.py",
    "tests/integration/test_lazy_steps_on_delta.py",
    "tests/integration/test_cli_history.py",
    "tests/integration/test_cli_run.py",
    "tests/integration/test_materialize_as.py",
    "tests/integration/test_composites.py",
    "tests/integration/test_builtins.py",
    "tests/integration/test_lazy_lineage.py",
    "tests/integration/test_kill_during_commit.py",
    "tests/integration/test_concurrent_pipelines.py",
)
S3_ROOT = Stage(
    name="pytest (whole runs again, every root in an S3 bucket)",
    argv=run_tool("pytest", *PARALLEL, *S3_ROOT_TESTS),
    env={"STEMMA_TEST_ROOT_STORE": "s3"},
)
# The slurm tests run against a real single-node cluster on this machine; starting it is idempotent.
SLURM_CLUSTER = Stage(
    name="local SLURM cluster", argv=("bash", "scripts/slurm-dev-cluster.sh", "start")
)
# Roots in object stores are tested against real servers on 127.0.0.1 (S3, GCS, Azure Blob),
# installed from the registries into .venvs/ and started like the cluster; idempotent.
OBJECT_STORES = Stage(
    name="object-store servers", argv=("bash", "scripts/object-stores.sh", "start")
)
# tmux drives the dashboard's end-to-end test; installed from apt when missing.
SYSTEM_TOOLS = Stage(name="system tools (tmux)", argv=("bash", "scripts/system-tools.sh"))


LINT = [SYNC, RUFF_CHECK, RUFF_FORMAT]
TYPECHECK = [SYNC, BASEDPYRIGHT]
TEST = [SYNC, OBJECT_STORES, PYTEST]
# One line per stage, run in order, stopping at the first failure. A stage that is not a uv command
# is a plain argv, like SLURM_CLUSTER.
CHECK = [
    SYNC,
    RUFF_CHECK,
    RUFF_FORMAT,
    BASEDPYRIGHT,
    IMPORT_LINTER,
    Stage(
        name="docs (mkdocs build --strict)",
        argv=run_tool("mkdocs", "build", "--strict", "--site-dir", "site"),
        env={"NO_MKDOCS_2_WARNING": "1"},
    ),
    SLURM_CLUSTER,
    OBJECT_STORES,
    SYSTEM_TOOLS,
    package_alone(SLURM_PACKAGE),  # (in the background, beside the stages below)
    across_packages(),
    ODD_ROOT,
    S3_ROOT,
    *(package_alone(p) for p in PACKAGES if p != SLURM_PACKAGE),
]
DEMO = [
    SYNC,
    Stage(name="demo", argv=run_tool("python", "examples/lazy_steps.py")),
]
BENCH = [
    SYNC,
    Stage(
        name="benchmarks",
        argv=run_tool("python", "benchmarks/run.py"),
        requires="benchmarks/run.py",
    ),
]
FORMAT = [
    SYNC,
    Stage(name="ruff format", argv=run_tool("ruff", "format", ".")),
    Stage(name="ruff check --fix", argv=run_tool("ruff", "check", "--fix", ".")),
]
INSTALL = [SYNC]

WORKFLOWS: dict[str, tuple[list[Stage], str]] = {
    "install": (INSTALL, "create .venv with every package and the dev tools"),
    "demo": (DEMO, "run the lazy-steps example (examples/lazy_steps.py)"),
    "lint": (LINT, "ruff lint and format check"),
    "format": (FORMAT, "apply ruff format and safe lint fixes"),
    "typecheck": (TYPECHECK, "basedpyright in strict mode over packages, tests and scripts"),
    "test": (TEST, "the whole pytest suite in the workspace environment"),
    "check": (CHECK, "everything CI runs: lint, types, imports, tests, each package alone"),
    "bench": (BENCH, "the benchmarks (benchmarks/run.py), if present"),
}


# --------------------------------------------------------------------------- uv bootstrap


def parse_version(text: str) -> tuple[int, ...]:
    """The first dotted version number in `text`, e.g. 'uv 0.13.9 (…)' -> (0, 13, 9)."""
    found = re.search(r"(\d+)\.(\d+)\.(\d+)", text)
    return tuple(int(part) for part in found.groups()) if found else ()


def usable_uv(candidate: str | None) -> bool:
    """Whether `candidate` is a uv binary at least MIN_UV."""
    if candidate is None or not Path(candidate).exists():
        return False
    try:
        out = subprocess.run(
            [candidate, "--version"], capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return False
    return parse_version(out) >= MIN_UV


def bootstrap_bin(name: str) -> Path:
    """Where a console script lives in the bootstrap venv."""
    if os.name == "nt":
        return BOOTSTRAP / "Scripts" / f"{name}.exe"
    return BOOTSTRAP / "bin" / name


def bootstrap_uv() -> str:
    """Install uv into `.venvs/bootstrap` with pip and return its path."""
    print(f"==> uv not found on PATH (or older than {'.'.join(map(str, MIN_UV))}); ", end="")
    print(f"installing it into {BOOTSTRAP.relative_to(ROOT)}", flush=True)
    python = bootstrap_bin("python")
    if not python.exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(BOOTSTRAP)
    command = [str(python), "-m", "pip", "install", "--quiet", UV_REQUIREMENT]
    print(f"$ {shlex.join(command)}", flush=True)
    subprocess.run(command, check=True)
    uv = bootstrap_bin("uv")
    if not usable_uv(str(uv)):
        sys.exit(f"error: installed {UV_REQUIREMENT} into {BOOTSTRAP} but {uv} does not run")
    return str(uv)


def find_uv() -> str:
    """A usable uv: the one on PATH, else the bootstrap one, installing it if needed."""
    for candidate in (shutil.which("uv"), str(bootstrap_bin("uv"))):
        if usable_uv(candidate):
            assert candidate is not None
            return candidate
    return bootstrap_uv()


# --------------------------------------------------------------------------- running


def base_environment() -> dict[str, str]:
    """The environment every stage starts from.

    The caller's activated venv and project-environment override are dropped so that stages
    always use this repository's environments; uv uses the Python running this script, so a
    machine with only Python 3.11 never needs uv to fetch an interpreter.
    """
    env = dict(os.environ)
    env.pop("VIRTUAL_ENV", None)
    env.pop("UV_PROJECT_ENVIRONMENT", None)
    env.setdefault("UV_PYTHON", sys.executable)
    env.setdefault("UV_PYTHON_DOWNLOADS", "never")
    # The tests start thousands of short Python processes (runs, workers, CLI calls, SLURM
    # elements). Where PYTHONDONTWRITEBYTECODE is set, as on these machines, each of them
    # compiled every module it imported from source: half the CPU of a small run, which an
    # installed package never pays. The bytecode is kept under .venv (ignored by git), never
    # beside the sources; every process the stages start inherits both settings.
    env["PYTHONDONTWRITEBYTECODE"] = ""
    env.setdefault("PYTHONPYCACHEPREFIX", str(ROOT / ".venv" / "pycache"))
    return env


def has_test_files(directory: Path) -> bool:
    """Whether `directory` holds any file pytest would collect by default."""
    patterns = ("test_*.py", "*_test.py")
    return any(next(directory.rglob(pattern), None) is not None for pattern in patterns)


def shown(stage: Stage) -> str:
    """The command line as a person would type it (with `uv` on PATH)."""
    prefix = " ".join(f"{key}={shlex.quote(value)}" for key, value in stage.env.items())
    return f"{prefix} {shlex.join(stage.argv)}".strip()


def _argv(stage: Stage, uv: str) -> list[str]:
    return [uv, *stage.argv[1:]] if stage.argv[0] == "uv" else list(stage.argv)


def _verdict(stage: Stage, code: int) -> tuple[bool, str]:
    """Whether a stage that exited with ``code`` passed, and a note for the summary."""
    if code == 0:
        return True, "ok"
    if code == PYTEST_NO_TESTS and stage.tests_dir is not None:
        if has_test_files(ROOT / stage.tests_dir):
            return False, f"pytest collected no tests, but {stage.tests_dir} has test files"
        return True, f"ok: {stage.tests_dir} has no tests yet"
    return False, f"exit code {code}"


def run_stage(stage: Stage, uv: str, env: Mapping[str, str]) -> tuple[bool, str]:
    """Run one stage; return whether it passed and a note for the summary."""
    if stage.requires is not None and not (ROOT / stage.requires).exists():
        return True, f"skipped: {stage.requires} does not exist yet"
    print(f"$ {shown(stage)}", flush=True)
    argv = _argv(stage, uv)
    code = subprocess.run(argv, cwd=ROOT, env={**env, **stage.env}, check=False).returncode
    return _verdict(stage, code)


STOPPED = "stopped: an earlier stage failed"


@dataclass
class Background:
    """A stage running beside the next ones, its output going to a file until it is shown."""

    index: int
    stage: Stage
    process: subprocess.Popen[bytes]
    log: Path
    started: float
    ended: list[float] = field(default_factory=list[float])
    """When it exited, noted by ``watcher``: it may end long before it is waited for."""
    watcher: threading.Thread | None = None

    def __post_init__(self) -> None:
        def note_the_end() -> None:
            self.process.wait()
            self.ended.append(time.monotonic())

        self.watcher = threading.Thread(target=note_the_end, daemon=True)
        self.watcher.start()

    @classmethod
    def start(cls, index: int, stage: Stage, uv: str, env: Mapping[str, str]) -> Background:
        """Start ``stage`` in its own session (so that it can be stopped whole)."""
        print(f"$ {shown(stage)}", flush=True)
        handle, name = tempfile.mkstemp(prefix="stemma-check-", suffix=".log")
        with os.fdopen(handle, "wb") as log:
            process = subprocess.Popen(
                _argv(stage, uv),
                cwd=ROOT,
                env={**env, **stage.env},
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        print(f"-- {stage.name}: running in the background; its output follows when it ends")
        return cls(index, stage, process, Path(name), time.monotonic())

    def finish(self, total: int, *, stop: bool) -> tuple[bool, str, float]:
        """Wait for it (stop it first when ``stop``: an earlier stage failed), show its output."""
        if stop:
            self.stop()
        code = self.process.wait()
        if self.watcher is not None:
            self.watcher.join()
        elapsed = self.ended[0] - self.started
        banner(f"[{self.index}/{total}] {self.stage.name} (ran in the background)")
        with self.log.open("rb") as log:
            shutil.copyfileobj(log, sys.stdout.buffer)
        sys.stdout.flush()
        self.log.unlink(missing_ok=True)
        passed, note = (
            (False, "stopped: an earlier stage failed") if stop else _verdict(self.stage, code)
        )
        print(
            f"-- {self.stage.name}: {'PASSED' if passed else 'FAILED'} ({note}) in {elapsed:.1f}s"
        )
        return passed, note, elapsed

    def stop(self) -> None:
        """End it and whatever it started: SIGTERM, then SIGKILL after a grace."""
        if self.process.poll() is not None:
            return
        for sig, grace in ((signal.SIGTERM, 30.0), (signal.SIGKILL, 30.0)):
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.process.wait(timeout=grace)
                return
            except subprocess.TimeoutExpired:
                continue


def said(stage: Stage, passed: bool, note: str, elapsed: float) -> None:
    """The line that ends a stage's output."""
    print(f"-- {stage.name}: {'PASSED' if passed else 'FAILED'} ({note}) in {elapsed:.1f}s")


def banner(text: str) -> None:
    """A line that stands out in a long log."""
    print(f"\n{'=' * 8} {text} {'=' * max(4, 80 - len(text))}", flush=True)


def run_workflow(name: str, stages: Sequence[Stage], uv: str) -> int:
    """Run `stages` in order, stopping at the first failure; print a timed summary.

    A ``background`` stage is started and left running while the stages after it run; it is
    waited for (or stopped, after a failure) at the end, and its output shown then.
    """
    env = base_environment()
    results: dict[int, tuple[Stage, bool, str, float]] = {}
    running: list[Background] = []
    started = time.monotonic()
    try:
        for index, stage in enumerate(stages, start=1):
            banner(f"[{index}/{len(stages)}] {stage.name}")
            if stage.background:
                running.append(Background.start(index, stage, uv, env))
                continue
            t0 = time.monotonic()
            passed, note = run_stage(stage, uv, env)
            elapsed = time.monotonic() - t0
            results[index] = (stage, passed, note, elapsed)
            said(stage, passed, note, elapsed)
            if not passed:
                break
        failed = not all(passed for _, passed, _, _ in results.values())
        for job in running:
            passed, note, elapsed = job.finish(len(stages), stop=failed)
            results[job.index] = (job.stage, passed, note, elapsed)
    finally:
        for job in running:  # (Ctrl-C: nothing left behind)
            job.stop()
    print_summary(name, stages, results, time.monotonic() - started)
    return 0 if all(passed for _, passed, _, _ in results.values()) else 1


def print_summary(
    name: str,
    stages: Sequence[Stage],
    results: Mapping[int, tuple[Stage, bool, str, float]],
    total: float,
) -> None:
    """One line per stage: passed, failed, or not run after a failure."""
    banner(f"{name}: summary")
    stopped = {stage.name for stage, _, note, _ in results.values() if note == STOPPED}
    for index, stage in enumerate(stages, start=1):
        if index not in results:
            print(f"  --          -  {stage.name}  (not run)")
            continue
        _, passed, note, elapsed = results[index]
        print(f"  {'ok  ' if passed else 'FAIL'}  {elapsed:7.1f}s  {stage.name}  ({note})")
    failed = [results[i][0].name for i in sorted(results) if not results[i][1]]
    failed.sort(key=lambda n: n in stopped)  # (the stage that failed, not one it stopped)
    verdict = f"FAILED at {failed[0]}" if failed else "all stages passed"
    print(f"{name}: {verdict} in {total:.1f}s", flush=True)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """The command line: one workflow name."""
    parser = argparse.ArgumentParser(
        prog="scripts/dev.py", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command, (_, description) in WORKFLOWS.items():
        commands.add_parser(command, help=description, description=description)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the workflow named on the command line."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    command: str = args.command
    stages, _ = WORKFLOWS[command]
    try:
        uv = find_uv()
        print(f"using {uv} with {sys.executable}", flush=True)
        return run_workflow(command, stages, uv)
    except KeyboardInterrupt:
        print(f"\n{command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
