"""Large contents kept as files beside the tables, one per artifact, named by its id.

A content of at least :data:`LARGE_CONTENT_BYTES` (a 1 MB or a 100 MB data artifact) is not put
in its content table's Parquet: read back from there it costs zstd's decoding and two copies
(Arrow's buffer, then the ``bytes`` a unit gets), about 3-4x reading the same bytes from a
file. Such a content is written to ``{root}/contents/{id[0:2]}/{id[2:4]}/{id}`` (a root in a
bucket: the object of that key under the root) by the worker that made it, before its unit is
staged; its row keeps every column but ``content``, which is null with the size recorded. A
read of contents (:func:`stemma.storage.pipeline_queries.load_artifacts`) reads the table as
ever, then the file of each row with no content and a large size (:func:`read_kept`); a large
row an older stemma wrote has its content in the table and no file.

The file is written whole before the row that refers to it is staged (under a temporary name,
fsynced, renamed into place), so a committed row never names a missing or partial file. An
artifact's id is the hash of its content, so two writers of one id write the same bytes and
either rename wins; a crash after the file and before the commit leaves a file no row refers
to, reused by the next attempt (same id, same bytes). Keys are unchanged: the id is computed
from the content before it is kept here.
"""

from __future__ import annotations

import dataclasses
import os
import uuid
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from stemma.core.crash_points import crash_point
from stemma.core.operations.drafts import FinalizedArtifact
from stemma.core.store.locations import RootLayout
from stemma.core.store.staging.writing import fsync_directory
from stemma.storage import object_roots
from stemma.storage.artifact_tables import table_for_type
from stemma.storage.schemas import METRICS, TableSpec
from stemma.storage.whole_reads import copy_whole, read_whole

if TYPE_CHECKING:
    from stemma.core.execution_records import ExecutionRecord

LARGE_CONTENT_BYTES = 512 * 1024
"""Contents of at least this many bytes are kept in their own file. Measured cold on one worker
(benchmarks/README.md, "a fairer `cat`, and 1 MB inputs in files"): a 1 MB input read from its
file costs a unit 0.9 ms against 3.7 ms from Parquet, and making 128 of them 2.2 s against 4.0 s
(zstd's encoding); at 256 KiB the two reads cost about the same (2.4 and 2.6 ms), so smaller
contents stay in their table, one file for many. Lowering it keeps older rows readable (their
content is in their table); raising it would leave newer rows' files unread."""
FOLDER = "contents"
"""The folder under the root (the prefix under a bucket root) the files are kept in."""


def kept_apart(spec: TableSpec, content: bytes | None) -> bool:
    """Whether a content of table ``spec`` goes to its own file (binary and large)."""
    return content is not None and len(content) >= LARGE_CONTENT_BYTES and may_keep_apart(spec)


def may_keep_apart(spec: TableSpec) -> bool:
    """Whether some contents of table ``spec`` may be kept in files (binary content tables)."""
    return spec is not METRICS and "content" in spec.columns


def key(artifact_id: str) -> str:
    """The file's path under the root: ``contents/{ab}/{cd}/{id}``."""
    return f"{FOLDER}/{artifact_id[0:2]}/{artifact_id[2:4]}/{artifact_id}"


def keep_large_contents(
    layout: RootLayout, records: Sequence[ExecutionRecord]
) -> list[ExecutionRecord]:
    """Write each large content of ``records`` to its file; the records without those contents.

    Called by staging before a bundle is written: the rows staged for these artifacts carry
    their size and no content.

    Raises:
        OSError: a file cannot be written (the unit fails; nothing refers to a partial file).
        RootURLError: a put to the root's bucket failed.
    """
    kept: list[ExecutionRecord] = []
    for record in records:
        artifacts = [_kept(layout, artifact) for artifact in record.artifacts]
        if all(new is old for new, old in zip(artifacts, record.artifacts, strict=True)):
            kept.append(record)
        else:
            kept.append(dataclasses.replace(record, artifacts=tuple(artifacts)))
    return kept


def _kept(layout: RootLayout, artifact: FinalizedArtifact) -> FinalizedArtifact:
    if not kept_apart(table_for_type(artifact.artifact_type), artifact.content):
        return artifact
    assert artifact.content is not None
    write_content(layout, artifact.artifact_id, artifact.content)
    return dataclasses.replace(artifact, content=None, size=len(artifact.content))


def write_content(layout: RootLayout, artifact_id: str, content: bytes) -> None:
    """Keep ``content`` as artifact ``artifact_id``'s file, whole before this returns."""
    root = layout.store
    if root is not None:
        import obstore

        try:  # one put: whole or not there (object stores have no partial objects)
            obstore.put(object_roots.object_store(root), key(artifact_id), content)
        except Exception as err:
            raise object_roots.unreachable(root, err) from err
        crash_point("content.kept")
        return
    final = layout.root / key(artifact_id)
    if final.is_file() and final.stat().st_size == len(content):
        return  # the same id is the same bytes: written by an earlier attempt or another unit
    final.parent.mkdir(parents=True, exist_ok=True)
    partial = final.with_name(f".{artifact_id}.{os.getpid()}.{uuid.uuid4().hex[:8]}")
    with partial.open("wb") as stream:
        stream.write(content)
        stream.flush()
        os.fsync(stream.fileno())
    os.replace(partial, final)
    fsync_directory(final.parent)
    crash_point("content.kept")


def read_kept(layout: RootLayout, artifact_ids: Iterable[str]) -> dict[str, bytes]:
    """The contents of ``artifact_ids`` kept in files, read whole; an id with no file is left out.

    Raises:
        RootURLError: the root's bucket did not answer (other than the object being absent).
    """
    root = layout.store
    found: dict[str, bytes] = {}
    for artifact_id in artifact_ids:
        try:
            if root is None:
                found[artifact_id] = read_whole(layout.root / key(artifact_id))
            else:
                import obstore

                reply = obstore.get(object_roots.object_store(root), key(artifact_id))
                found[artifact_id] = copy_whole(memoryview(reply.bytes()))
        except FileNotFoundError:  # (obstore's not-found is this too): in its table, or lost
            continue
        except Exception as err:
            if root is None:
                raise
            raise object_roots.unreachable(root, err) from err
    return found


def missing_content(layout: RootLayout, spec: TableSpec, artifact_id: str) -> Exception:
    """The error for a row of ``spec`` with no content in its table and no file."""
    from stemma.storage.errors import DamagedTableError

    where = f"{layout.store.url}/" if layout.store is not None else f"{layout.root}{os.sep}"
    cause = f"artifact {artifact_id}'s content file {where}{key(artifact_id)} is missing"
    return DamagedTableError(spec.name, layout.root, cause)
