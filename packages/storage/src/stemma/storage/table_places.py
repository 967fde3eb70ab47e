"""Where one Delta table of a root is: a directory, or a prefix in an object store.

Everything that opens, creates or asks after a table goes through :func:`table_place`, so a
root on a filesystem and a root in a bucket differ here and nowhere else in the table code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from stemma.core.store.locations import RootLayout
from stemma.core.store.root_urls import ObjectRoot
from stemma.storage import object_roots

_EXISTING: set[str] = set()
"""Object-store tables seen to exist by this process: a table, once made, stays (one request
each saved on every later read)."""


@dataclass(frozen=True)
class TablePlace:
    """One table's location and what its readers and writers are given."""

    name: str
    """The table's name under ``delta/`` (``artifacts/metric``)."""
    uri: str
    """A local path, or the table's URL in the object store."""
    local: Path | None
    """The table's directory when it is on a filesystem."""
    root: ObjectRoot | None = None
    """The object-store root the table is under (``None`` on a filesystem)."""
    options: dict[str, str] | None = field(default=None, hash=False, compare=False)
    """The object store's options (``None`` on a filesystem)."""

    def exists(self) -> bool:
        """Whether the table has been created (one ``stat``, or one listing request)."""
        if self.root is None:
            return self.local is not None and (self.local / "_delta_log").is_dir()
        if self.uri in _EXISTING:
            return True
        import obstore

        store = object_roots.object_store(self.root)
        try:
            found = next(iter(obstore.list(store, f"delta/{self.name}/_delta_log/", chunk_size=1)))
        except StopIteration:
            return False
        except Exception as err:
            raise object_roots.unreachable(self.root, err) from err
        if found:
            _EXISTING.add(self.uri)
        return bool(found)

    def made(self) -> None:
        """Note that this process has made the table: :meth:`exists` asks the store no more."""
        if self.root is not None:
            _EXISTING.add(self.uri)


def table_place(layout: RootLayout, name: str) -> TablePlace:
    """Where table ``name`` of ``layout``'s root is (no I/O beyond the layout's marker)."""
    root = layout.store
    if root is None:
        path = layout.delta / name
        return TablePlace(name=name, uri=str(path), local=path)
    return TablePlace(
        name=name,
        uri=object_roots.table_uri(root, name),
        local=None,
        root=root,
        options=object_roots.storage_options(root),
    )
