"""The one canonical encoder: every key and id in stemma is a hash of what this module produces.

Canonical means: the same value gives the same bytes in every process, on every machine, in
every Python version we support. So dict keys are sorted, separators are compact, floats use
``repr`` (shortest round-trip), and anything the encoder does not understand is refused with an
:class:`UnfingerprintableError` naming where the value sits in the config. Nothing falls back to
``repr``: a default repr embeds a memory address and would silently change every key.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import math
from collections.abc import Callable, Mapping
from pathlib import PurePath
from typing import Any

import xxhash
from pydantic import BaseModel

from stemma.core.errors import UnfingerprintableError

_HINT = (
    "use plain data (str, int, float, bool, None, list, tuple, dict with str keys), a Path, "
    "an Enum, a datetime, a frozen dataclass or a pydantic model of those; pass code by "
    "versioning the step, not as a config value"
)


def to_canonical(value: Any, path: str = "config") -> Any:
    """Return ``value`` as plain JSON data, refusing what cannot be encoded reliably.

    Args:
        value: the value to encode.
        path: where the value sits in the config, used in error messages.

    Raises:
        UnfingerprintableError: the value (or something inside it) cannot be encoded.
    """
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise UnfingerprintableError(
                f"{path}: the float {value!r} has no canonical JSON form; "
                "encode it as a string or use None"
            )
        return value
    if isinstance(value, enum.Enum):
        return {"$enum": f"{type(value).__qualname__}.{value.name}"}
    if isinstance(value, Mapping):
        return _mapping(value, path)  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(value, list | tuple):
        items: list[Any] | tuple[Any, ...] = value  # pyright: ignore[reportUnknownVariableType]
        return [to_canonical(item, f"{path}[{i}]") for i, item in enumerate(items)]
    if isinstance(value, set | frozenset):
        members: set[Any] | frozenset[Any] = value  # pyright: ignore[reportUnknownVariableType]
        encoded = [to_canonical(item, f"{path}{{…}}") for item in members]
        return {"$set": sorted(encoded, key=canonical_json)}
    return _structured(value, path)


def as_plain_data(value: Any) -> Any:
    """``value`` with every numpy scalar made a Python scalar and every array a nested list.

    For what a step *returns*, before it is encoded: an analysis step often returns
    ``np.int64(3)`` or an ``ndarray``, which have no canonical form of their own. Lists, tuples,
    dicts and sets are walked (and rebuilt only where something changed); everything else is
    left as it is, for :func:`to_canonical` to accept or refuse. Never used for a step's inputs:
    their encoding, and so every key, is exactly :func:`to_canonical`'s. numpy is recognised by
    its objects' module, never imported.
    """
    if value is None or isinstance(value, bool | int | float | str):
        return value  # (numpy's float64 and str_ subclass float and str: they encode as is)
    if _is_numpy(value):
        converted = value.tolist() if hasattr(value, "tolist") else value.item()
        return as_plain_data(converted)  # an object array's items may be numpy objects too
    if isinstance(value, list | tuple):
        items: list[Any] | tuple[Any, ...] = value  # pyright: ignore[reportUnknownVariableType]
        plain = [as_plain_data(item) for item in items]
        if all(new is old for new, old in zip(plain, items, strict=True)):
            return items
        return plain if isinstance(items, list) else tuple(plain)
    if isinstance(value, dict):
        mapping: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        plain_items = {key: as_plain_data(item) for key, item in mapping.items()}
        if all(plain_items[key] is item for key, item in mapping.items()):
            return mapping
        return plain_items
    if isinstance(value, set | frozenset):
        members: set[Any] | frozenset[Any] = value  # pyright: ignore[reportUnknownVariableType]
        plain_members = [as_plain_data(item) for item in members]
        if all(new is old for new, old in zip(plain_members, members, strict=True)):
            return members
        return frozenset(plain_members)
    return value


def _is_numpy(value: Any) -> bool:
    """A numpy scalar or array (``np.int64``, ``np.bool_``, ``ndarray``, a masked array)."""
    module = type(value).__module__
    return (module == "numpy" or module.startswith("numpy.")) and (
        hasattr(value, "tolist") or hasattr(value, "item")
    )


def without_config_advice(message: str) -> str:
    """An :class:`UnfingerprintableError`'s message without its advice for configs.

    For a value that is not a config (what a step returned), whose caller gives advice of its
    own; what is wrong, and where, stays.
    """
    for advice in (f". To fix it, {_HINT}", f" Otherwise {_HINT}"):
        message = message.removesuffix(advice)
    return message.rstrip(".")


def escape_key(key: str) -> str:
    """Double a leading ``$`` so user data can never forge a type tag such as ``{"$path": …}``."""
    return "$" + key if key.startswith("$") else key


def _mapping(value: Mapping[Any, Any], path: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in value.items():
        if not isinstance(key, str):
            raise UnfingerprintableError(
                f"{path}: dict key {key!r} is of type {type(key).__name__}; "
                "canonical configs use str keys only (convert the key with str())"
            )
        out[escape_key(key)] = to_canonical(item, f"{path}[{key!r}]")
    return out


def _structured(value: Any, path: str) -> Any:
    if isinstance(value, PurePath):
        return {"$path": value.as_posix()}
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return {"$time": value.isoformat()}
    if isinstance(value, bytes | bytearray):
        # identity.content_id, spelled out: identity builds on this module, not the reverse
        return {"$bytes": xxhash.xxh3_128_hexdigest(bytes(value))}
    if isinstance(value, BaseModel):
        # Python mode keeps sets as sets, so they are sorted below; JSON mode would turn them
        # into lists in hash-seed order and change the key from one process to the next.
        dumped = value.model_dump(mode="python")
        return {"$model": type(value).__qualname__, "fields": to_canonical(dumped, path)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return {"$dataclass": type(value).__qualname__, "fields": _mapping(fields, path)}
    kind = type(value).__qualname__
    if callable(value):
        raise UnfingerprintableError(
            f"{path}: {kind} {getattr(value, '__qualname__', '')!s} is callable; code cannot be "
            f"fingerprinted by value. Make it a step's fn and bump the step's version when it "
            f"changes, or pass its name as a string. Otherwise {_HINT}"
        )
    raise UnfingerprintableError(
        f"{path}: cannot fingerprint a value of type {kind} (its identity would depend on the "
        f"process). To fix it, {_HINT}"
    )


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
# The string encoder ``_ENCODER`` itself uses (ensure_ascii=False): the C one where it exists.
_encode_string: Callable[[str], str] = json.encoder.encode_basestring  # pyright: ignore[reportUnknownMemberType]


def canonical_json(value: Any, path: str = "config") -> str:
    """Encode ``value`` canonically: sorted keys, compact separators, refusing the unknown."""
    return _ENCODER.encode(to_canonical(value, path))


def dumps_plain(value: Any) -> str:
    """Encode data that is already canonical (the output of :func:`to_canonical`), fast."""
    if type(value) is dict and not value:  # a unit's rows hold several: json's call costs µs
        return "{}"
    return _ENCODER.encode(value)


def json_string(text: str) -> str:
    """One string exactly as :func:`dumps_plain` writes it, quotes included.

    For keys built by hand from a constant part and a few strings, a million times a step:
    json's encoder costs several microseconds per call however small the value, this a tenth.
    """
    return _encode_string(text)
