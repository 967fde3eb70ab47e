"""A step's lease on a root in an object store: one runner builds a key, on any machine.

On a filesystem the lease is an ``flock`` the kernel drops when its holder dies. Runners on
different machines sharing only a bucket have no such lock, so the lease is an object,
``leases/{ab}/{fingerprint}.json``, taken and kept by conditional writes:

- **take**: create the object only if it does not exist (``If-None-Match``), with the holder
  and an expiry ``$STEMMA_LEASE_SECONDS`` ahead (default 60);
- **keep**: a heartbeat thread rewrites it every third of that, only if it is still the version
  this holder wrote (``If-Match`` its ETag), pushing the expiry on;
- **take over**: a runner finding a lease past its expiry replaces it, again only if it is the
  version it read: of several waiting runners one wins, the others keep waiting;
- **release**: delete it.

So a runner that dies loses its lease at its expiry, not never; one that stalls longer than
the expiry (a paused VM) may find its lease taken over: it logs that, and the two commits of the
same key are kept apart by the execution keys (nothing is recorded twice). Expiries are
compared with each machine's clock: keep them within seconds of each other (NTP).

A local ``flock`` is taken first, so runners on one machine wait on the kernel, not by polling
the bucket. It also tells a dead holder on this machine at once: a lease whose holder wrote it
from this host and this local half, found while this runner holds that same ``flock``, has a
holder that is gone (a live one would hold the ``flock``), so it is taken over without waiting
for its expiry: a run killed here and started again does not wait a minute.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from typing import Any

from stemma.core.file_lock import FileLock
from stemma.core.store.locations import RootLayout
from stemma.storage import object_roots

LEASE_SECONDS_ENV = "STEMMA_LEASE_SECONDS"
DEFAULT_LEASE_SECONDS = 60.0
_POLL_SECONDS = 0.25
log = logging.getLogger(__name__)


def lease_seconds() -> float:
    """How long a lease holds without a heartbeat (``$STEMMA_LEASE_SECONDS``, default 60).

    Raises:
        ValueError: the variable is not a positive number (named, with the fix).
    """
    raw = os.environ.get(LEASE_SECONDS_ENV)
    if not raw:
        return DEFAULT_LEASE_SECONDS
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise ValueError(f"${LEASE_SECONDS_ENV}={raw!r} is not a positive number of seconds")
    return seconds


class BucketLease:
    """The lease on one step key of a root in an object store (``acquire`` / ``release``)."""

    def __init__(self, layout: RootLayout, fingerprint: str) -> None:
        assert layout.store is not None
        self._root = layout.store
        self._store = object_roots.object_store(layout.store)
        self._key = f"leases/{fingerprint[:2]}/{fingerprint}.json"
        self._local = FileLock(layout.locks / fingerprint[:2] / f"{fingerprint}.step.lock")
        self._seconds = lease_seconds()
        self._holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._place = f"{socket.gethostname()}:{layout.locks}"
        """Where this runner's ``flock`` is: a lease written from the same place is a dead one's."""
        self._etag: str | None = None
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None
        self.lost = False
        """Whether the heartbeat found the lease taken over (the holder stalled past expiry)."""

    def acquire(self, timeout: float | None = None) -> bool:
        """Take the lease, waiting up to ``timeout`` seconds (forever when None)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if not self._local.acquire(timeout=timeout):
            return False
        try:
            while not self._take():
                if deadline is not None and time.monotonic() >= deadline:
                    self._local.release()
                    return False
                time.sleep(_POLL_SECONDS)
        except BaseException:
            self._local.release()
            raise
        self._stop.clear()
        self._beat = threading.Thread(target=self._heartbeat, name="stemma-lease", daemon=True)
        self._beat.start()
        return True

    def release(self) -> None:
        """Give the lease up (a no-op when not held)."""
        if self._beat is None:
            return
        self._stop.set()
        self._beat.join()
        self._beat = None
        if not self.lost:
            import obstore

            try:
                obstore.delete(self._store, self._key)
            except Exception as err:  # it expires by itself: a failed delete delays the next
                log.warning(
                    "could not give up the lease %s in %s: %s", self._key, self._root.url, err
                )
        self._etag = None
        self._local.release()

    def _take(self) -> bool:
        import obstore

        try:
            self._etag = self._put(mode="create")
            return True
        except _already_exists():
            pass
        try:
            found = obstore.get(self._store, self._key)
            held: dict[str, Any] = json.loads(bytes(found.bytes()))
        except FileNotFoundError:  # released since: try again at once
            return False
        ours = held.get("place") == self._place  # we hold its flock: its holder is gone
        if not ours and float(held.get("expires_at", 0)) > time.time():
            return False
        try:  # expired: take it over, only from the version read
            self._etag = self._put(mode={"e_tag": found.meta["e_tag"]})
        except _precondition_failed():
            return False
        why = "its holder on this machine is gone" if ours else "expired"
        log.info("took over the lease %s of %s (%s)", self._key, held.get("holder"), why)
        return True

    def _heartbeat(self) -> None:
        while not self._stop.wait(self._seconds / 3):
            try:
                self._etag = self._put(mode={"e_tag": self._etag})
            except _precondition_failed():
                self.lost = True
                log.warning(
                    "the lease %s in %s was taken over: this runner stalled past its expiry",
                    self._key,
                    self._root.url,
                )
                return
            except Exception as err:  # a blip: the next beat tries again before the expiry
                log.warning("could not renew the lease %s: %s", self._key, err)

    def _put(self, *, mode: Any) -> str | None:
        import obstore

        body = {
            "holder": self._holder,
            "place": self._place,
            "expires_at": time.time() + self._seconds,
        }
        done = obstore.put(self._store, self._key, json.dumps(body).encode(), mode=mode)
        return done["e_tag"]


def _precondition_failed() -> type[Exception]:
    from obstore.exceptions import PreconditionError

    return PreconditionError


def _already_exists() -> tuple[type[Exception], ...]:
    from obstore.exceptions import AlreadyExistsError  # pyright: ignore[reportDeprecated]

    # (obstore raises its own class for a create that found the object; FileExistsError too,
    # should a later version do as its deprecation says)
    return (AlreadyExistsError, FileExistsError)  # pyright: ignore[reportDeprecated]
