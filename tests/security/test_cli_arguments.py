"""The ``stemma`` command given hostile strings: a clear error or an answer, never a traceback.

Run ids, step names, artifact ids, filters, limits and roots are tried with ``../``, NUL, line
breaks, 300+ characters, undecodable bytes (as ``surrogateescape`` gives them from argv) and
leading dashes, against a real root with one finished run. Every command here reads only, so
nothing may appear in the tree around the root (what the run retired may still be removed).
"""

import contextlib
import io
import os
import pathlib
import subprocess
import sys
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stemma.core import OUT, apply, resolve
from stemma.core.cli.main import main

_NASTY = [
    "../../x",
    "..",
    "a\x00b",
    "a\nb",
    "-",
    "--",
    "-rf",
    "--root=/",
    "x" * 300,
    "é" * 150,
    b"caf\xe9".decode("utf-8", "surrogateescape"),
    "",
    " ",
    "%s%n",
    "[red]markup[/red]",
]
_hostile = st.one_of(st.sampled_from(_NASTY), st.text(max_size=20))
# Roots relative to a working folder four levels down, so even "../../../.." stays in tmp.
_roots = st.one_of(
    st.sampled_from(["../../x", "..", "a\nb", "x" * 300, "-", "é"]),
    st.text(max_size=12).map(lambda text: text.lstrip("/") or "r"),
)
_COMMANDS = st.one_of(
    st.tuples(st.just("status"), _hostile).map(list),
    st.tuples(st.just("watch"), _hostile).map(list),
    st.tuples(st.just("cancel"), _hostile).map(list),
    st.tuples(st.just("cancel"), st.just("no-such-run"), st.just("--level"), _hostile).map(list),
    st.tuples(st.just("explain"), _hostile).map(list),
    st.tuples(st.just("explain"), st.just("cli/text"), st.just("--run"), _hostile).map(list),
    st.tuples(st.just("lineage"), _hostile).map(list),
    st.tuples(st.just("artifacts"), st.just("--step"), _hostile).map(list),
    st.tuples(st.just("artifacts"), st.just("--type"), _hostile).map(list),
    st.tuples(st.just("runs"), st.sampled_from(["--limit", "--status", "--format"]), _hostile).map(
        list
    ),
)


def _write_text(text: str, out: str) -> int:
    pathlib.Path(out).write_text(text)
    return len(text)


def _tree(base: pathlib.Path) -> set[str]:
    """Every path under ``base``; os.walk skips a folder that goes while it walks (a retired
    bundle deleted by the last run's cleanup), where ``rglob`` raised FileNotFoundError."""
    found: set[str] = set()
    for folder, dirs, files in os.walk(base):
        found.update(str(pathlib.Path(folder, name).relative_to(base)) for name in dirs + files)
    return found


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[pathlib.Path]:
    base = tmp_path_factory.mktemp("cli")
    root = base / "root"
    step = apply(name="cli/text", fn=_write_text, version="v0", text="hello", out=OUT)
    resolve(step, root=root, backend="local-thread")
    cwd = base / "w" / "x" / "y" / "z"
    cwd.mkdir(parents=True)
    before = os.getcwd()
    os.chdir(cwd)
    try:
        yield base
    finally:
        os.chdir(before)


def _stemma(argv: list[str]) -> tuple[int, str]:
    """``stemma ARGV``'s exit code and error output, run in this process."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as stop:  # argparse's usage errors
            code = stop.code if isinstance(stop.code, int) else 2
    return code, err.getvalue()


def _check_answer(code: int, errors: str) -> None:
    assert "Traceback" not in errors
    assert code in (0, 2, 3), errors
    if code != 0:
        last = errors.rstrip("\n").split("\n")[-1]
        assert last.startswith("stemma"), errors  # one line that names the command and the fix


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(argv=_COMMANDS)
def test_cli_given_hostile_arguments_answers_or_refuses_in_one_line(
    workdir: pathlib.Path, argv: list[str]
) -> None:
    before = _tree(workdir)
    code, errors = _stemma(["--root", str(workdir / "root"), *argv])
    _check_answer(code, errors)
    assert _tree(workdir) <= before  # nothing made (retired bundles may go meanwhile)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    root=_roots,
    command=st.sampled_from([["runs"], ["status", "x"], ["artifacts"], ["check"], ["vacuum"]]),
)
def test_cli_given_a_hostile_root_answers_or_refuses_and_creates_nothing(
    workdir: pathlib.Path, root: str, command: list[str]
) -> None:
    before = _tree(workdir)
    code, errors = _stemma(["--root", root, *command])
    _check_answer(code, errors)
    assert _tree(workdir) <= before  # nothing made (retired bundles may go meanwhile)


@pytest.mark.parametrize(
    "argv",
    [
        [b"status", b"caf\xe9"],
        [b"--root", b"caf\xe9", b"runs"],
        [b"--root", b"x" * 300, b"artifacts"],
        [b"status", b"../../etc/passwd"],
        [b"lineage", b"-\xff\n"],
    ],
    ids=["non-utf8-run", "non-utf8-root", "long-root", "path-run", "dash-lineage"],
)
def test_stemma_process_given_undecodable_or_hostile_bytes_exits_with_one_line(
    workdir: pathlib.Path, argv: list[bytes]
) -> None:
    # A real process: argv arrives as bytes and Python decodes it with surrogateescape, and
    # stderr must still write whatever the message holds.
    before = _tree(workdir)
    done = subprocess.run(
        [sys.executable, b"-m", b"stemma.core.cli.main", *argv],
        env={**os.environ, "STEMMA_ROOT": str(workdir / "root")},
        capture_output=True,
        check=False,
        timeout=120,
    )
    errors = done.stderr.decode("utf-8", "replace")
    _check_answer(done.returncode, errors)
    assert done.returncode != 0
    assert _tree(workdir) <= before  # nothing made (retired bundles may go meanwhile)
