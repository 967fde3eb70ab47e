"""``stemma run --detach`` (and the dashboard's ``n``, which starts scripts the same way) says
at once what it can, and why a script started no run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from stemma.core.exit_codes import CliError, ExitCode
from stemma.core.runs.launching import Detached, detach_command, split_script_line

STEMMA = Path(sys.executable).parent / "stemma"


def test_detach_of_a_missing_script_exits_not_found_and_starts_nothing(tmp_path: Path) -> None:
    root = tmp_path / "store"
    done = subprocess.run(
        [str(STEMMA), "--root", str(root), "run", "--detach", "nope.py", "2"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
        timeout=120,
    )
    assert done.returncode == ExitCode.NOT_FOUND, done.stderr
    assert f"no script 'nope.py' (from {tmp_path})" in done.stderr
    assert not (root / "logs").exists()  # nothing detached, no log to go and read


def test_split_script_line_splits_like_a_shell_and_names_an_open_quote() -> None:
    assert split_script_line("flow.py --day '2026 11 30' 2") == (
        "flow.py",
        ("--day", "2026 11 30", "2"),
    )
    with pytest.raises(CliError, match=r"No closing quotation.*close the quote") as raised:
        split_script_line('flow.py "open')
    assert raised.value.code == ExitCode.USAGE
    with pytest.raises(CliError, match="nothing to run"):
        split_script_line("  ")


def test_detach_command_is_the_cli_line_quoted_for_a_shell() -> None:
    assert detach_command("a b.py", ["2", "x y"], "slurm") == (
        "stemma run --detach --backend slurm 'a b.py' 2 'x y'"
    )


def test_no_run_says_the_exception_line_or_that_the_script_is_still_going(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text(
        "Traceback (most recent call last):\n"
        '  File "flow.py", line 3, in <module>\n'
        "    main()\n"
        "KeyError: 'day'\n"
    )
    ended = Detached(pid=4242, log=log, run_ids=(), ended=True)
    assert ended.no_run() == "the script ended before starting a run: KeyError: 'day'"
    log.write_text("planning 10000 units…\n")
    waiting = Detached(pid=4242, log=log, run_ids=(), ended=False)
    assert waiting.no_run() == (
        "no run started within 60 s; the script is still going (pid 4242), its log's last "
        "line: planning 10000 units…"
    )
    assert Detached(pid=1, log=log, run_ids=("r",), ended=True).no_run() == ""
