"""Binding a step's keyword inputs to its function's signature, fast.

``inspect.Signature.bind`` costs tens of microseconds, which dominates building a graph of
100,000 handles. ``apply`` only ever passes keywords, so for the common signature (named
parameters, maybe ``*args``-free, ``**kwargs``-free) a precomputed plan does the same checks in
a dict comprehension; anything unusual falls back to ``inspect``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

_EMPTY = inspect.Parameter.empty
_KEYWORD_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


@dataclass(frozen=True)
class _Plan:
    signature: inspect.Signature
    names: tuple[str, ...] | None
    """Parameter names in order, or None when the signature needs ``inspect`` to bind."""
    known: frozenset[str]
    defaults: Mapping[str, Any]
    required: frozenset[str]


@functools.lru_cache(maxsize=4096)
def _plan(fn: Callable[..., Any]) -> _Plan:
    signature = inspect.signature(fn)
    parameters = list(signature.parameters.values())
    simple = all(p.kind in _KEYWORD_KINDS for p in parameters)
    return _Plan(
        signature=signature,
        names=tuple(p.name for p in parameters) if simple else None,
        known=frozenset(p.name for p in parameters),
        defaults={p.name: p.default for p in parameters if p.default is not _EMPTY},
        required=frozenset(p.name for p in parameters if p.default is _EMPTY),
    )


def bind_inputs(fn: Callable[..., Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Every argument ``fn`` will receive, in signature order, defaults applied.

    Raises:
        TypeError: the inputs do not fit the signature (as ``inspect`` words it).
    """
    plan = _plan(fn)
    if plan.names is not None and plan.required <= inputs.keys() and inputs.keys() <= plan.known:
        defaults = plan.defaults
        return {name: inputs[name] if name in inputs else defaults[name] for name in plan.names}
    bound_arguments = plan.signature.bind(**inputs)  # raises the precise TypeError
    bound_arguments.apply_defaults()
    return dict(bound_arguments.arguments)


def describe(fn: Callable[..., Any]) -> str:
    """``qualname(signature)`` for error messages."""
    qualname = getattr(fn, "__qualname__", type(fn).__qualname__)
    try:
        return f"{qualname}{_plan(fn).signature}"
    except (TypeError, ValueError):
        return qualname
