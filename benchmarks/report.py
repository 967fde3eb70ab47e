"""Print the latest results (``benchmarks/results/*.json``) as the Markdown tables of README.md.

uv run python benchmarks/report.py
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

from harness import RESULTS


def _load(name: str) -> dict[str, Any] | None:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def _med(figure: Any) -> float:
    return figure["median"] if isinstance(figure, dict) else figure


def budgets() -> None:
    """One line per measured budget, with the load it was measured under."""
    print("| budget (benchmarks/README.md) | measured | load | verdict |\n|---|---|---|---|")
    if doc := _load("lower"):
        for row in doc["rows"]:
            if row["nodes"] >= 100_000:
                cpu = _med(row.get("lower_cpu_s", row["lower_s"]))
                print(
                    f"| `lower()` {row['shape']} of {row['nodes']:,} nodes < 1 s | "
                    f"{row['lower_median_s']:.2f} s wall, {cpu:.2f} s CPU "
                    f"({row['lower_us_per_node']:.1f} µs/node, {row['repeats']} runs) | "
                    f"{row['load']} | {'met' if row['lower_median_s'] < 1 else 'missed'} |"
                )
    if doc := _load("dispatch"):
        for row in doc["rows"]:
            print(
                f"| dispatch ≤ 1 ms orchestrator CPU/unit ({row['units']:,} units) | "
                f"{row['orchestrator_ms_per_unit']:.3f} ms/unit "
                f"(wall {row['wall_ms_per_unit']:.1f} ms/unit) | {row['load']} | "
                f"{'met' if row['met'] else 'missed'} |"
            )
    if doc := _load("cached_rerun"):
        row = doc["rows"][0]
        print(
            f"| cached rerun {row['steps']} steps x {row['artifacts']:,} artifacts < 2 s | "
            f"{row['rerun_median_s']:.2f} s ({row['repeats']} runs) | {row['load']} | "
            f"{'met' if row['met'] else 'missed'} |"
        )
    if doc := _load("commit"):
        for row in doc["rows"]:
            print(
                f"| commit ≥ 100,000 artifacts/s ({row['bundles']:,} bundles) | "
                f"{row['artifacts_per_second']:,.0f}/s | {row['load']} | "
                f"{'met' if row['met'] else 'missed'} |"
            )
    if doc := _load("content_id"):
        row = doc["rows"][0]
        print(
            f"| content ids ≥ 80% of raw xxh3_128 | {row['ratio']:.1%} | {row['load']} | "
            f"{'met' if row['met'] else 'missed'} |"
        )
    if doc := _load("memory"):
        for row in doc["rows"]:
            projected = row.get("projected_peak_mb_at_1m")
            print(
                f"| memory: {row['kind']} at N={row['n']:,} | peak {row['peak_mb']:.0f} MiB"
                + (f", projected {projected:,.0f} MiB at 10^6" if projected else "")
                + f" | {row['load']} | — |"
            )


def peers() -> None:
    """The peer comparison, one line per tool and phase."""
    doc = _load("peers")
    if doc is None:
        return
    print(
        "\n| group | N | tool | phase | wall s (min-max) | ms/task | orch. CPU s | tree CPU s "
        "| peak RSS MiB | peer ÷ stemma (wall) |\n|---|---:|---|---|---:|---:|---:|---:|---:|---:|"
    )
    for row in doc["rows"]:
        if "error" in row:
            print(f"| {row['group']} | {row['n']:,} | {row['tool']} | failed: {row['error']} |")
            continue
        wall = row["wall_s"]
        tree = row.get("tree_cpu_s")
        ratio = row["wall_ratio_to_stemma"]
        print(
            f"| {row['group']} | {row['n']:,} | {row['tool']} | {row['phase']} | "
            f"{wall['median']:.2f} ({wall['min']:.2f}-{wall['max']:.2f}) | "
            f"{wall['median'] / row['n'] * 1000:.2f} | {_med(row['cpu_s']):.2f} | "
            f"{'—' if tree is None else f'{_med(tree):.2f}'} | {_med(row['peak_rss_mb']):.0f} | "
            f"{'—' if row['tool'].startswith('stemma') or ratio is None else f'{ratio:.2f}'} |"
        )
    print(f"\nload during the run: {doc['rows'][-1]['load']}; versions: {doc['versions']}")


if __name__ == "__main__":
    budgets()
    peers()
    print(f"\nresults in {pathlib.Path(RESULTS).name}/")
