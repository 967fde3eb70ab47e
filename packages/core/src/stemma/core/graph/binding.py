"""Binding a step's keyword inputs to its function's signature, fast.

``inspect.Signature.bind`` costs tens of microseconds, which dominates building a graph of
100,000 handles. ``apply`` only ever passes keywords, so for the common signature (named
parameters, maybe ``*args``-free, ``**kwargs``-free) a precomputed plan does the same checks in
a dict comprehension; anything unusual falls back to ``inspect``.

An argument the function does not take is named first, with the closest one it does take (a typo
``xx=`` for ``x=`` would otherwise read as ``x`` missing); a function with ``**kwargs`` takes
any name.
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

_EMPTY = inspect.Parameter.empty
_KEYWORD_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_NAMED_KINDS = (inspect.Parameter.POSITIONAL_ONLY, *_KEYWORD_KINDS)


@dataclass(frozen=True)
class _Plan:
    signature: inspect.Signature
    names: tuple[str, ...] | None
    """Parameter names in order, or None when the signature needs ``inspect`` to bind."""
    known: frozenset[str]
    """The named parameters (neither ``*args`` nor ``**kwargs``)."""
    keywords: tuple[str, ...]
    """The parameters an argument can name, in order."""
    takes_any: bool
    """Whether ``fn`` has ``**kwargs``, so that every name fits."""
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
        known=frozenset(p.name for p in parameters if p.kind in _NAMED_KINDS),
        keywords=tuple(p.name for p in parameters if p.kind in _KEYWORD_KINDS),
        takes_any=any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters),
        defaults={p.name: p.default for p in parameters if p.default is not _EMPTY},
        required=frozenset(p.name for p in parameters if p.default is _EMPTY),
    )


def bind_inputs(fn: Callable[..., Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Every argument ``fn`` will receive, in signature order, defaults applied.

    Raises:
        TypeError: the inputs do not fit the signature. An argument ``fn`` does not take is
            named first, with the closest one it takes (``f() got an unexpected argument 'xx'
            (did you mean 'x'?)``); else the message is ``inspect``'s, after ``fn``'s signature.
    """
    plan = _plan(fn)
    if plan.names is not None and plan.required <= inputs.keys() and inputs.keys() <= plan.known:
        defaults = plan.defaults
        return {name: inputs[name] if name in inputs else defaults[name] for name in plan.names}
    if not plan.takes_any:
        unexpected = [name for name in inputs if name not in plan.known]
        if unexpected:
            raise TypeError(_unexpected(fn, plan, inputs, unexpected))
    try:
        bound_arguments = plan.signature.bind(**inputs)
    except TypeError as err:
        raise TypeError(f"arguments do not match {describe(fn)}: {err}") from None
    bound_arguments.apply_defaults()
    return dict(bound_arguments.arguments)


def takes_argument(fn: Callable[..., Any], name: str) -> bool:
    """Whether ``fn`` has a parameter called ``name`` (``**kwargs`` alone does not count)."""
    try:
        return name in _plan(fn).known
    except (TypeError, ValueError):  # no signature to read
        return False


def _unexpected(
    fn: Callable[..., Any], plan: _Plan, inputs: Mapping[str, Any], unexpected: list[str]
) -> str:
    """``f() got an unexpected argument 'xx' (did you mean 'x'?); it takes x, out_path``."""
    open_names = [name for name in plan.keywords if name not in inputs]
    named: list[str] = []
    for name in unexpected:
        close = difflib.get_close_matches(name, open_names, n=1)
        if close:
            open_names.remove(close[0])  # two typos are not both meant for one name
            named.append(f"{name!r} (did you mean {close[0]!r}?)")
        else:
            named.append(repr(name))
    what = "an unexpected argument" if len(named) == 1 else "unexpected arguments"
    takes = ", ".join(plan.keywords) if plan.keywords else "no named arguments"
    return f"{_qualname(fn)}() got {what} {', '.join(named)}; it takes {takes}"


def _qualname(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__qualname__", type(fn).__qualname__)


def describe(fn: Callable[..., Any]) -> str:
    """``qualname(signature)`` for error messages."""
    qualname = _qualname(fn)
    try:
        return f"{qualname}{_plan(fn).signature}"
    except (TypeError, ValueError):
        return qualname
