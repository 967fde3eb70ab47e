"""Budgets: ``stemma tui`` in a terminal shows a run under 0.5 s on a store with 1,000 runs
and 10^6 executions (issue 18; 1 s in issue 6), each refresh under 200 ms; idle CPU under 1%
with the runs list open and one run live (issue 18; 2% in issue 6); a filter keystroke on a
runs list of 10,000 runs repaints in under 50 ms (issue 18).

The store (``dashboard_store.py``) is written once in bulk and kept under ``--store`` (default:
the system temp dir) for later invocations. Each repetition then times two fresh processes:

- a headless session (``dashboard_session.py``): the real app under ``App.run_test()`` at
  160x48, for the first paint, the refreshes after real commits and the idle CPU;
- the real command (``dashboard_terminal.py``): ``stemma tui ROOT`` in a 160x48 pseudo-terminal,
  timed until a run's row is on the screen: interpreter, CLI and terminal included; then its
  CPU over ``--idle`` seconds on the runs list, once settled;
- on a second root of ``--filter-runs`` runs with state files only (``build_state_runs``), a
  headless filter session (``dashboard_filter.py``) and the real command in a pty, each
  timing ``/`` then ``z`` (a tenth of the runs left) and backspace (all of them back).

    uv run python benchmarks/bench_dashboard.py [--runs 1000] [--executions 1000000]
        [--repeats 5] [--idle 10] [--filter-runs 10000] [--baseline CHECKOUT] [--profile]

``--baseline`` alternates every session with another checkout's ``packages/*/src`` (a
``git archive`` of the commit to compare with), so the machine's load falls on both alike.
``--profile`` runs one more headless session under cProfile (the event loop's thread).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).parent))

from dashboard_store import FILTERED_NAME, HOST, build_state_runs, build_store, write_live_run
from dashboard_terminal import time_first_row, time_keystrokes
from harness import load, spread, write_results

HERE = pathlib.Path(__file__).parent


def session_env(checkout: str | None) -> dict[str, str]:
    """The environment of a session: this one, or one importing ``checkout``'s packages first.

    An installed dashboard imports cached bytecode (pip and uv write it); a development shell
    with PYTHONDONTWRITEBYTECODE would make every session compile Textual anew (~0.7 s here).
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if checkout:
        sources = sorted(str(src) for src in pathlib.Path(checkout).glob("packages/*/src"))
        if not sources:
            raise SystemExit(f"--baseline {checkout}: no packages/*/src under it")
        env["PYTHONPATH"] = os.pathsep.join(sources)
    return env


def warm_up(checkout: str | None = None) -> None:
    """Import what the sessions import once, untimed, so each finds its bytecode cached."""
    code = "import stemma.tui.app, stemma.tui.cli_command, stemma.core.cli.main"
    subprocess.run([sys.executable, "-c", code], check=True, env=session_env(checkout))


def session(
    root: pathlib.Path, idle: float, repeats: int, *, profile: bool, checkout: str | None = None
) -> dict[str, Any]:
    """One fresh headless dashboard process; returns its figures."""
    write_live_run(root)
    command = [sys.executable, str(HERE / "dashboard_session.py"), str(root), str(time.time())]
    command += [str(idle), str(repeats)] + (["--profile"] if profile else [])
    done = subprocess.run(
        command, capture_output=True, text=True, check=False, env=session_env(checkout)
    )
    if done.returncode != 0 or profile:
        print(done.stderr, file=sys.stderr)
    done.check_returncode()
    return json.loads(done.stdout.strip().splitlines()[-1])


def terminal_session(
    root: pathlib.Path, idle: float, checkout: str | None = None
) -> dict[str, Any]:
    """``stemma tui root`` in a pty until a row shows, then idle; returns its figures."""
    write_live_run(root)
    paint = time_first_row(root, HOST, env=session_env(checkout), idle=idle)
    if paint.exit_code != 0:
        raise RuntimeError(f"stemma tui exited with {paint.exit_code} after q")
    return {
        "terminal_first_row_s": paint.first_row_s,
        "terminal_first_output_s": paint.first_output_s,
        "terminal_cpu_s": paint.cpu_at_row_s,
        "terminal_idle_cpu_percent": paint.idle_cpu_percent,
    }


def filter_sessions(root: pathlib.Path, runs: int, checkout: str | None = None) -> dict[str, Any]:
    """The filter keystrokes, headless (3 rounds) and in a pty (3 rounds); their figures."""
    command = [sys.executable, str(HERE / "dashboard_filter.py"), str(root), str(runs), "3"]
    done = subprocess.run(
        command, capture_output=True, text=True, check=False, env=session_env(checkout)
    )
    if done.returncode != 0:
        print(done.stderr, file=sys.stderr)
    done.check_returncode()
    headless: dict[str, list[float]] = json.loads(done.stdout.strip().splitlines()[-1])
    keys = [(b"/", "filter")] + [(b"z", FILTERED_NAME), (b"\x7f", "demo")] * 3
    typed = time_keystrokes(root, "demo", keys, env=session_env(checkout))
    return {
        "filter_narrow_s": statistics.median(headless["z -> 'z' wall_s"]),
        "filter_same_rows_s": statistics.median(headless["e -> 'ze' wall_s"]),
        "filter_widen_s": statistics.median(headless["backspace -> '' wall_s"]),
        "filter_narrow_cpu_s": statistics.median(headless["z -> 'z' cpu_s"]),
        "filter_widen_cpu_s": statistics.median(headless["backspace -> '' cpu_s"]),
        "terminal_filter_narrow_s": statistics.median(typed[1::2]),
        "terminal_filter_widen_s": statistics.median(typed[2::2]),
    }


def summarize(
    label: str, sessions: list[dict[str, Any]], args: argparse.Namespace
) -> dict[str, Any]:
    """One results row: the medians (and spread) of ``sessions``, and whether budgets are met."""

    def each(key: str) -> dict[str, Any]:
        return spread([s[key] for s in sessions])

    def median_each(key: str) -> dict[str, Any]:
        return spread([statistics.median(s[key]) for s in sessions])

    row: dict[str, Any] = {
        "code": label,
        "runs": args.runs,
        "executions": args.executions,
        "repeats": len(sessions),
        "runs_shown": sessions[0]["runs_shown"],
        **{key: each(key) for key in ("terminal_first_row_s", "terminal_first_output_s")},
        "terminal_cpu_s": each("terminal_cpu_s"),
        "terminal_idle_cpu_percent": each("terminal_idle_cpu_percent"),
        **{key: each(key) for key in sessions[0] if key.startswith(("filter_", "terminal_filter"))},
        **{key: each(key) for key in ("first_paint_s", "rows_s", "import_s", "mount_to_paint_s")},
        "settled_s": each("settled_s"),
        "runs_refresh_s": median_each("runs_refresh_s"),
        "run_refresh_s": median_each("run_refresh_s"),
        "idle_cpu_percent": each("idle_cpu_percent"),
        "runs_idle_cpu_percent": each("runs_idle_cpu_percent"),
        "first_paint_cpu_s": each("first_paint_cpu_s"),
        "runs_refresh_cpu_s": median_each("runs_refresh_cpu_s"),
        "run_refresh_cpu_s": median_each("run_refresh_cpu_s"),
        "load": load(),
    }
    med: dict[str, float] = {
        key: row[key]["median"] for key in row if key.endswith(("_s", "_percent"))
    }
    filters = [value for key, value in med.items() if "filter_" in key and "cpu" not in key]
    row["met"] = (
        med["terminal_first_row_s"] < 0.5
        and med["runs_refresh_s"] < 0.2
        and med["run_refresh_s"] < 0.2
        and med["idle_cpu_percent"] < 2.0
        and med["runs_idle_cpu_percent"] < 1.0
        and med["terminal_idle_cpu_percent"] < 1.0
        and all(value < 0.05 for value in filters)
    )
    print(
        f"{label}: `stemma tui` first row {med['terminal_first_row_s']:.2f} s (first output "
        f"{med['terminal_first_output_s']:.2f}, CPU {med['terminal_cpu_s']:.2f}); headless first "
        f"paint {med['first_paint_s']:.2f} s (import {med['import_s']:.2f}, start to drawn rows "
        f"{med['mount_to_paint_s']:.2f}, settled {med['settled_s']:.2f}); runs refresh "
        f"{med['runs_refresh_s'] * 1000:.0f} ms; run refresh {med['run_refresh_s'] * 1000:.0f} "
        f"ms; idle CPU {med['idle_cpu_percent']:.1f}% (runs list "
        f"{med['runs_idle_cpu_percent']:.1f}%, in the terminal "
        f"{med['terminal_idle_cpu_percent']:.1f}%); filter keystroke, headless: narrow "
        f"{med['filter_narrow_s'] * 1000:.0f} ms, same rows {med['filter_same_rows_s'] * 1000:.0f}"
        f" ms, widen {med['filter_widen_s'] * 1000:.0f} ms (CPU "
        f"{med['filter_narrow_cpu_s'] * 1000:.0f} / {med['filter_widen_cpu_s'] * 1000:.0f} ms); "
        f"in the terminal: narrow {med['terminal_filter_narrow_s'] * 1000:.0f} ms, widen "
        f"{med['terminal_filter_widen_s'] * 1000:.0f} ms; CPU: paint "
        f"{med['first_paint_cpu_s']:.2f} s, runs refresh {med['runs_refresh_cpu_s'] * 1000:.0f} "
        f"ms, run refresh {med['run_refresh_cpu_s'] * 1000:.0f} ms; medians of {len(sessions)}"
        f"   [{load()}]"
    )
    return row


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    """Build (or reuse) the store, then time fresh dashboard sessions."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1_000)
    parser.add_argument("--executions", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--idle", type=float, default=10.0)
    parser.add_argument("--filter-runs", type=int, default=10_000)
    parser.add_argument("--store", type=pathlib.Path, default=pathlib.Path(tempfile.gettempdir()))
    parser.add_argument(
        "--baseline",
        help="another checkout (with packages/*/src): its sessions alternate with this one's",
    )
    parser.add_argument("--profile", action="store_true", help="one more session, profiled")
    args = parser.parse_args(argv)
    root = args.store / f"stemma-bench-dashboard-{args.runs}-{args.executions}"
    if not (root / "runs" / ".complete").exists():
        print(f"building {root} ({args.runs:,} runs, {args.executions:,} executions)…")
        built = build_store(root, args.runs, args.executions)
        (root / "runs" / ".complete").write_text(f"{built:.1f}\n")
        print(f"built in {built:.0f} s")
    filtered = args.store / f"stemma-bench-dashboard-filter-{args.filter_runs}"
    if not (filtered / "runs" / ".complete").exists():
        print(f"building {filtered} ({args.filter_runs:,} runs, state files only)…")
        (filtered / "runs").mkdir(parents=True, exist_ok=True)
        built = build_state_runs(filtered, args.filter_runs)
        (filtered / "runs" / ".complete").write_text(f"{built:.1f}\n")
    warm_up()
    if args.baseline:
        warm_up(args.baseline)
    ours: list[dict[str, Any]] = []
    theirs: list[dict[str, Any]] = []
    for _ in range(args.repeats):  # alternating, so the machine's load falls on both alike
        ours.append(
            terminal_session(root, args.idle)
            | session(root, args.idle, 3, profile=False)
            | filter_sessions(filtered, args.filter_runs)
        )
        if args.baseline:
            checkout = args.baseline
            theirs.append(
                terminal_session(root, args.idle, checkout)
                | session(root, args.idle, 3, profile=False, checkout=checkout)
                | filter_sessions(filtered, args.filter_runs, checkout)
            )
    if args.profile:
        session(root, 1.0, 1, profile=True)
    rows: list[dict[str, Any]] = [summarize("this checkout", ours, args)]
    if args.baseline:
        rows.append(summarize(f"baseline {args.baseline}", theirs, args))
    write_results(
        "dashboard",
        config=vars(args) | {"store": str(root), "filter_store": str(filtered)},
        rows=rows,
        distributions=("stemma-core", "stemma-storage", "stemma-tui", "textual", "polars"),
    )
    return rows


if __name__ == "__main__":
    main(sys.argv[1:])
