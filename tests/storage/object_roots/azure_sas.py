"""Shared access signatures for an Azurite container, signed with the well-known dev key.

A SAS is how an Azure user is given less than the account: ``rl`` (read and list) is what a
reader of someone else's results gets, ``racwdl`` what a runner needs. Made here as Azure's
service-SAS spec says (version 2020-12-06: the fields below, one a line, HMAC-SHA256 with the
account key, base64), so a test needs no Azure SDK.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import urllib.parse

from tests.storage.object_roots.conftest import AZURITE_ACCOUNT, AZURITE_KEY

SAS_VERSION = "2020-12-06"
READ_ONLY = "rl"
"""Read blobs and list the container: a reader's SAS."""
FULL = "racwdl"
"""Read, add, create, write, delete, list: what a run that builds steps needs."""


def container_sas(container: str, permissions: str, *, hours: float = 1.0) -> str:
    """A container SAS (``sr=c``) with ``permissions``, valid for ``hours``: a query string."""
    expiry = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%SZ")
    protocols = "http,https"  # (Azurite answers on plain HTTP)
    signed = "\n".join(
        [
            permissions,
            "",  # start: now
            expiry,
            f"/blob/{AZURITE_ACCOUNT}/{container}",
            "",  # stored access policy
            "",  # IP range
            protocols,
            SAS_VERSION,
            "c",  # the resource: a container
            "",  # snapshot time
            "",  # encryption scope
            "",  # rscc, rscd, rsce, rscl, rsct: response headers not overridden
            "",
            "",
            "",
            "",
        ]
    )
    key = base64.b64decode(AZURITE_KEY)
    signature = base64.b64encode(hmac.new(key, signed.encode(), hashlib.sha256).digest()).decode()
    return urllib.parse.urlencode(
        {
            "sv": SAS_VERSION,
            "se": expiry,
            "sr": "c",
            "sp": permissions,
            "spr": protocols,
            "sig": signature,
        }
    )
