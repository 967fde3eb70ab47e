"""The one line a failed request to a root's store becomes: the fix is chosen by the status.

A status is a number of its own in what the store said: the digits "404" inside a duration
("in 1.898404608s") once sent a dead endpoint's user to check the bucket's name.
"""

from __future__ import annotations

import pytest

from stemma.core.store.root_urls import ObjectRoot
from stemma.storage.object_roots import transport_failed, unreachable

ROOT = ObjectRoot(scheme="s3", bucket="any-bucket", prefix="r")


@pytest.mark.parametrize(
    ("said", "fix"),
    [
        (
            "Generic S3 error: Error performing list request: Error performing GET "
            "http://127.0.0.1:9/any-bucket?list-type=2 in 1.898404608s, after 10 retries",
            "check the endpoint and network",
        ),
        ("Error performing GET http://127.0.0.1:9404/b in 0.403s", "check the endpoint"),
        ("Server returned non-2xx status code: 404 Not Found: NoSuchBucket", "bucket's name"),
        ("Server returned non-2xx status code: 403 Forbidden: <?xml", "check the credentials"),
        ("Server returned non-2xx status code: 401 Unauthorized", "check the credentials"),
    ],
)
def test_the_fix_follows_the_status_the_store_gave(said: str, fix: str) -> None:
    message = str(unreachable(ROOT, Exception(said)))

    assert message.startswith("root 's3://any-bucket/r' cannot be reached in S3: ")
    assert fix in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("said", "unanswered"),
    [
        (  # an append's data file, the server killed (tests/.../test_server_outage.py)
            "Failed to parse parquet: External: Generic MicrosoftAzure error: Error performing "
            "PUT http://127.0.0.1:46585/devstoreaccount1/c/root/delta/artifacts/file_refs/"
            "part-0.zstd.parquet in 2.23s, after 10 retries, max_retries: 10, retry_timeout: "
            "180s  - HTTP error: error sending request",
            True,
        ),
        ("Generic S3 error: tcp connect error: Connection refused (os error 111)", True),
        ("Generic S3 error: operation timed out", True),
        ("Server returned non-2xx status code: 403 Forbidden: <?xml", False),
        (
            "Failed to read delta log object: No such file: _delta_log/00000000000000000003.json",
            False,
        ),
    ],
)
def test_a_store_that_did_not_answer_is_told_from_one_that_said_no(
    said: str, unanswered: bool
) -> None:
    # an append that meets the first becomes the one-line error above, naming the root
    assert transport_failed(Exception(said)) is unanswered
