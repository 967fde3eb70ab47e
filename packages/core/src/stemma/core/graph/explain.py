"""Why a step reruns: a field-level diff of its config against the last run of the same name."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

from stemma.core.execution_records import StepEvent
from stemma.core.graph.file_diff import file_change, file_list_changes, is_file_entry, is_file_list
from stemma.core.records import StepRecord

DEFAULT_LIMIT = 12
_WIDTH = 60


def config_diff(
    old: Mapping[str, Any], new: Mapping[str, Any], *, limit: int = DEFAULT_LIMIT
) -> list[str]:
    """Readable lines, one per changed field (``inputs.lr: 0.1 → 0.2``), capped at ``limit``.

    Nested dicts are walked; lists of equal length are compared item by item; a dependency
    shows as its name and short fingerprint. An input file shows as one line naming it, with
    its old and new short content hashes (``params.files data_3.csv: content 1a2b3c4d →
    9f8e7d6c``), and a list of named files is compared by name, so adding one names it.
    """
    lines: list[str] = []
    _walk(old, new, "", lines)
    if len(lines) > limit:
        hidden = len(lines) - limit
        lines = [*lines[:limit], f"… and {hidden} more change{'s' if hidden > 1 else ''}"]
    return lines


def _walk(old: Any, new: Any, path: str, out: list[str]) -> None:
    if old == new:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        before = cast(dict[str, Any], old)
        after = cast(dict[str, Any], new)
        if _is_dep(before) and _is_dep(after):
            out.append(f"{path}: {_show(old)} → {_show(new)}")
            return
        if is_file_entry(before) and is_file_entry(after):
            out.append(file_change(path, before, after))
            return
        for key in sorted(before.keys() | after.keys()):
            where = f"{path}.{key}" if path else key
            if key not in after:
                out.append(f"{where}: removed (was {_show(before[key])})")
            elif key not in before:
                out.append(f"{where}: added {_show(after[key])}")
            else:
                _walk(before[key], after[key], where, out)
        return
    before_files, after_files = cast(object, old), cast(object, new)
    if is_file_list(before_files) and is_file_list(after_files):
        out.extend(file_list_changes(path, before_files, after_files))
        return
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):  # pyright: ignore[reportUnknownArgumentType]
        for index, (left, right) in enumerate(zip(old, new, strict=True)):  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
            _walk(left, right, f"{path}[{index}]", out)
        return
    out.append(f"{path}: {_show(old)} → {_show(new)}")


def _is_dep(value: dict[str, Any]) -> bool:
    return "$step" in value and "fingerprint" in value


def _show(value: Any) -> str:
    if isinstance(value, dict):
        mapping = cast(dict[str, Any], value)
        if _is_dep(mapping):
            return f"step {mapping['$step']}@{str(mapping['fingerprint'])[:8]}"
    text = repr(cast(object, value))
    return text if len(text) <= _WIDTH else text[: _WIDTH - 1] + "…"


def step_labels(events: Iterable[StepEvent]) -> dict[str, str]:
    """Each recorded step key's step, said as ``step 0 ingest_data`` (to name an upstream)."""
    return {e.step_spec_id: f"step {e.step_number} {e.step_name}" for e in events}


def upstream_components(fingerprints: Iterable[str], labels: Mapping[str, str]) -> dict[str, str]:
    """The upstream keys by the step they are of (its short key when it is not recorded)."""
    return {labels.get(fp, f"step {fp[:8]}"): fp[:8] for fp in fingerprints}


def key_components(event: StepEvent, labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What a Pipeline step's recorded key covers, as :func:`config_diff` compares it.

    ``stemma explain`` and ``stemma plan`` both diff these, so a change reads the same in both.
    Upstream keys are named by their step, from ``labels`` (see :func:`step_labels`).
    """
    return {
        "operation": event.operation,
        "version": event.version,
        "params": dict(event.params),
        "upstream": upstream_components(event.dep_fingerprints, labels or {}),
    }


def said_upstream(line: str) -> str:
    """A diff line of an upstream key as a person reads it: ``upstream step 0 ingest_data: …``."""
    return "upstream " + line.removeprefix("upstream.") if line.startswith("upstream.") else line


def miss_reason(
    name: str, fingerprint: str, config: Mapping[str, Any], previous: StepRecord | None
) -> str:
    """Say why a non-mutable step must run, given the last completed run of its name."""
    if previous is None:
        return f"new: no completed run of {name!r} yet"
    if previous.fingerprint == fingerprint:
        return "output missing: the recorded output directory is gone"
    diff = config_diff(previous.config, config)
    changes = "; ".join(diff) if diff else "identical config, different dependencies"
    when = f"{previous.timestamp:%Y-%m-%d %H:%M:%S}"
    return f"changed since {when} ({previous.fingerprint[:8]}): {changes}"
