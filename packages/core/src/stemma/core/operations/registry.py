"""The registry of operations by name."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from stemma.core.errors import UnknownOperationError
from stemma.core.operations.declaration_checks import refuse

if TYPE_CHECKING:
    from stemma.core.operations.definition import OperationDefinition

_REGISTRY: dict[str, type[OperationDefinition]] = {}


def register(cls: type[OperationDefinition]) -> None:
    """Register ``cls`` under its name; a reloaded module's same class replaces itself."""
    # The same class defined again (a reloaded module) replaces itself; another class may not.
    name = cast(str, cls.name)
    old = _REGISTRY.get(name)
    if old is not None and (old.__module__, old.__qualname__) != (cls.__module__, cls.__qualname__):
        refuse(
            cls,
            f"name {name!r} is already registered by "
            f"{old.__module__}.{old.__qualname__}; give one of them another name",
        )
    _REGISTRY[name] = cls


def get_operation(name: str) -> type[OperationDefinition]:
    """Return the operation registered as ``name``.

    Raises:
        UnknownOperationError: none is; the message lists the registered names.
    """
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "(none)"
        raise UnknownOperationError(
            f"no operation named {name!r}; registered: {known} (is its module imported?)"
        ) from None


def registered_operations() -> dict[str, type[OperationDefinition]]:
    """Every registered operation by name, sorted by name."""
    return dict(sorted(_REGISTRY.items()))
