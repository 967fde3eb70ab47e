"""Why a step reruns: a field-level diff of its config against the last run of the same name."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from stemma.core.execution_records import StepEvent
from stemma.core.graph.file_diff import file_change, file_list_changes, is_file_entry, is_file_list
from stemma.core.records import StepRecord

DEFAULT_LIMIT = 12
_WIDTH = 60


def config_diff(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    *,
    limit: int = DEFAULT_LIMIT,
    deps_by_name: bool = False,
) -> list[str]:
    """Readable lines, one per changed field (``inputs.lr: 0.1 → 0.2``), capped at ``limit``.

    Nested dicts are walked; lists of equal length are compared item by item; a dependency
    shows as its name and short fingerprint. An input file shows as one line naming it, with
    its old and new short content hashes (``params.files data_3.csv: content 1a2b3c4d →
    9f8e7d6c``), and a list of named files is compared by name, so adding one names it.

    With ``deps_by_name``, a dependency on the same step in both is no change here, whatever its
    key: the caller says what changed in it (as ``stemma explain`` does, under ``upstream``).
    """
    lines: list[str] = []
    _walk(old, new, "", lines, deps_by_name=deps_by_name)
    if len(lines) > limit:
        hidden = len(lines) - limit
        lines = [*lines[:limit], f"… and {hidden} more change{'s' if hidden > 1 else ''}"]
    return lines


def _walk(old: Any, new: Any, path: str, out: list[str], *, deps_by_name: bool) -> None:
    if old == new:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        before = cast(dict[str, Any], old)
        after = cast(dict[str, Any], new)
        if _is_dep(before) and _is_dep(after):
            if not deps_by_name or before["$step"] != after["$step"]:
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
                _walk(before[key], after[key], where, out, deps_by_name=deps_by_name)
        return
    before_files, after_files = cast(object, old), cast(object, new)
    if is_file_list(before_files) and is_file_list(after_files):
        out.extend(file_list_changes(path, before_files, after_files))
        return
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):  # pyright: ignore[reportUnknownArgumentType]
        for index, (left, right) in enumerate(zip(old, new, strict=True)):  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
            _walk(left, right, f"{path}[{index}]", out, deps_by_name=deps_by_name)
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


def step_names(events: Iterable[StepEvent]) -> dict[str, str]:
    """Each recorded step key's step name (to name an upstream step by)."""
    return {e.step_spec_id: e.step_name for e in events}


def upstream_keys(fingerprints: Iterable[str], names: Mapping[str, str]) -> dict[str, str]:
    """The upstream keys by the name of the step they are of (see :func:`step_names`).

    Two attempts of a step are compared upstream by upstream through these: by name, never by
    step number (numbers differ between runs) or key (the key is what changed). Two upstream
    steps of one name are told apart by their order (``name (2)``); a key no event records is
    named by itself (``step 4ab6b8d1``).
    """
    keyed: dict[str, str] = {}
    for fingerprint in fingerprints:
        name = names.get(fingerprint, f"step {fingerprint[:8]}")
        said, seen = name, 1
        while said in keyed:
            seen += 1
            said = f"{name} ({seen})"
        keyed[said] = fingerprint
    return keyed


def key_components(event: StepEvent, names: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What a step's recorded key covers, as :func:`component_changes` compares it.

    ``stemma explain`` and ``stemma plan`` both diff these, so a change reads the same in both.
    Upstream keys are named by their step's name, from ``names`` (see :func:`step_names`).
    """
    return {
        "operation": event.operation,
        "version": event.version,
        "params": dict(event.params),
        "upstream": upstream_keys(event.dep_fingerprints, names or {}),
    }


@dataclass(frozen=True)
class UpstreamChange:
    """An upstream step, matched by name, whose key differs between two attempts."""

    name: str
    before: str | None
    """Its key in the older attempt (None: the older attempt had no upstream of this name)."""
    after: str | None
    """Its key in the newer attempt (None: the newer attempt has none of this name)."""

    @property
    def line(self) -> str:
        """``upstream NAME changed (key 4ab6b8d1 → 9f8e7d6c)``, or added, or removed."""
        if self.before is None:
            return f"upstream {self.name}: added (key {(self.after or '')[:8]})"
        if self.after is None:
            return f"upstream {self.name}: removed (was key {self.before[:8]})"
        return f"upstream {self.name} changed (key {self.before[:8]} → {self.after[:8]})"


def upstream_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[UpstreamChange]:
    """The upstream steps whose key differs between two :func:`key_components`, by name."""
    before: Mapping[str, str] = old.get("upstream", {})
    after: Mapping[str, str] = new.get("upstream", {})
    return [
        UpstreamChange(name, before.get(name), after.get(name))
        for name in sorted(before.keys() | after.keys())
        if before.get(name) != after.get(name)
    ]


def field_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """:func:`config_diff` of two :func:`key_components` but their upstream keys.

    A dependency inside the params is said only when it names another step: a change of its
    key is the upstream's (:func:`upstream_changes`).
    """

    def own(components: Mapping[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in components.items() if key != "upstream"}

    return config_diff(own(old), own(new), deps_by_name=True)


def component_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Every change between two :func:`key_components`: the fields, then the upstream steps."""
    return [*field_changes(old, new), *(change.line for change in upstream_changes(old, new))]


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
