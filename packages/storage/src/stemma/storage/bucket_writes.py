"""Whether this process may write its root's bucket: asked once, when a step must run.

A root in an object store can be reached with credentials that may read and list but not write
(a SAS with ``sp=rl``, an S3 policy with ``s3:GetObject`` and ``s3:ListBucket`` only, a
viewer's role). Such a reader can still get every step already built there: a rerun whose every
step is cached reads the tables and nothing else. A step that must run cannot: it writes its
lease, its outputs, its commit. So, as on a local root nobody may write
(:mod:`stemma.core.store.read_only_root`), the step is refused before it starts, with one line
naming the root and the permission to ask for, instead of an access-denied traceback from the
lease's first put.

How it is found: a **write probe**, a put of an empty object at
``{root}/_stemma/write-probe/{random}`` then its delete. A put refused as not permitted
(403, or 401 from a bucket that lets anyone read) means the credentials may not write; any other
failure is the store's existing one-line ``unreachable`` error.

When: **lazily**, the first time the store is asked (:meth:`BucketWrites.refuse`: by the step's
lease, or by a unit of a step that takes no lease being made), not when the store is opened. A
fully cached rerun then costs no probe (neither its two requests nor a write to a reader's
bucket), and the steps a run must build are still refused before their lease, their unit or
anything of them is written. The answer is kept for the store's life: one probe per run that
builds anything, never one per unit. The alternative, probing at open, would cost two requests
on every run and put an object in the bucket of every cached rerun.

The few writes a run makes without a step running (a cache hit's step event, recovery's commit
of what a crashed run staged) are tried as they are; only when one fails is the probe made, and
on a root it finds read-only they are skipped, as the read-only local root skips them
(:meth:`BucketWrites.unless_read_only`).
"""

from __future__ import annotations

import logging
import re
import threading
import uuid
from collections.abc import Callable
from typing import TypeVar

from stemma.core.errors import ReadOnlyRootError, RootURLError
from stemma.core.store.locations import RootLayout
from stemma.core.store.root_urls import OBJECT_SCHEMES, ObjectRoot
from stemma.storage.object_roots import object_store, unreachable

PROBE_PREFIX = "_stemma/write-probe"
"""Where, under the root, the write probe puts (and at once deletes) its object."""
_WRITE_HINTS = {
    "s3": "s3:PutObject and s3:DeleteObject on arn:aws:s3:::{bucket}/{prefix}*",
    "gs": "storage.objects.create and storage.objects.delete on gs://{bucket} "
    "(roles/storage.objectUser)",
    "az": "a SAS that may also add, create, write and delete (sp=racwdl, not only read and list), "
    "the account key, or the Storage Blob Data Contributor role on container {bucket!r}",
}
log = logging.getLogger(__name__)
T = TypeVar("T")


class BucketWrites:
    """Whether the credentials of this process may write ``layout``'s bucket (probed once)."""

    def __init__(self, layout: RootLayout) -> None:
        self._layout = layout
        self._lock = threading.Lock()
        self._probed = False
        self._denied: str | None = None

    def denied(self) -> str | None:
        """What the store said when a write was refused; None when it may be written.

        A root on a filesystem is never probed (its own check is ``RootLayout.unwritable``).

        Raises:
            RootURLError: the probe failed otherwise (the store cannot be reached): the
                store's one-line ``unreachable`` error; asked again, it probes again.
        """
        root = self._layout.store
        if root is None:
            return None
        with self._lock:
            if not self._probed:
                self._denied = probe_writes(root)
                self._probed = True
            return self._denied

    def refuse(self, what: str) -> None:
        """Raise before ``what`` (a step, a unit) starts if the bucket cannot be written.

        Raises:
            ReadOnlyRootError: the credentials may not write; the message names the root's
                URL and the permission to ask for.
            RootURLError: the probe could not reach the store.
        """
        denied = self.denied()
        root = self._layout.store
        if denied is not None and root is not None:
            raise read_only_bucket_error(root, self._layout, what, denied)

    def unless_read_only(self, write: Callable[[], T], what: str) -> T | None:
        """``write()``; should it fail on a root these credentials may not write, skip it.

        Nothing is asked before the write (a writable root pays nothing); a failure makes
        the probe, and is raised as it was unless the probe finds the root read-only.
        """
        try:
            return write()
        except Exception as err:
            if self._layout.store is None:
                raise
            try:
                denied = self.denied()
            except RootURLError:
                raise err from None
            if denied is None:
                raise
            log.debug("%s not written: %s may only be read (%s)", what, self._layout.shown, denied)
            return None


def probe_writes(root: ObjectRoot) -> str | None:
    """Put and delete one empty object under ``root``; what the store said if it refused.

    Raises:
        RootURLError: the put failed otherwise (the store's one-line ``unreachable`` error).
    """
    import obstore
    from obstore.exceptions import PermissionDeniedError, UnauthenticatedError

    store = object_store(root)
    key = f"{PROBE_PREFIX}/{uuid.uuid4().hex}"
    try:
        obstore.put(store, key, b"")
    except (PermissionDeniedError, UnauthenticatedError) as err:
        return _said(err)
    except Exception as err:  # obstore's errors are per store kind; each is worth one line
        raise unreachable(root, err) from err
    try:
        obstore.delete(store, key)
    except Exception as err:  # it can write: the run goes on, but its leases will linger
        log.warning(
            "root %s: the write probe %s could not be deleted (%s); these credentials may "
            "write but not delete, so a step's lease is given up only when it expires",
            root.url,
            key,
            _said(err),
        )
    return None


def read_only_bucket_error(
    root: ObjectRoot, layout: RootLayout, what: str, denied: str
) -> ReadOnlyRootError:
    """The one-line error for ``what`` on ``root``, whose store refused a write (``denied``)."""
    hint = _WRITE_HINTS[root.scheme].format(
        bucket=root.bucket, prefix=f"{root.prefix}/" if root.prefix else ""
    )
    return ReadOnlyRootError(
        f"root {root.url!r} cannot be written with these credentials "
        f"({OBJECT_SCHEMES[root.scheme]} refused a write under {PROBE_PREFIX}/: {denied}), "
        f"so {what} was not started; steps already built there are answered from it. To build "
        f"it, use credentials that may write: {hint}",
        root=layout.root,
        url=root.url,
    )


def _said(err: BaseException) -> str:
    """What a store's refusal said, in a few words: its HTTP status and error code."""
    text = str(err)
    status = re.search(r"\b([45]\d\d [A-Z][A-Za-z ]*?)(?::|$)", text, re.MULTILINE)
    code = re.search(r"<Code>([^<]+)</Code>", text)
    found = [m.group(1).strip() for m in (status, code) if m is not None]
    return ", ".join(found) or type(err).__name__
