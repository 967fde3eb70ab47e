"""A moto S3 server of a test's own that enforces IAM: a writer's keys and a reader's.

The shared server of ``scripts/object-stores.sh`` lets any key do anything, so it cannot say
what a reader's credentials may not do. This one is started on a free port, given a bucket and
two IAM users while it still lets everyone in (their policies: everything on S3 for the writer;
reading objects and listing the bucket for the reader), and then told to check every request
(moto's ``/moto-api/reset-auth``), as AWS does. The users are made with boto3 from moto's own
environment (``.venvs/object-stores``), where moto brings it: the tests' environment needs none.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[3]
VENV = CHECKOUT / ".venvs" / "object-stores"

READER_ACTIONS = ("s3:GetObject", "s3:ListBucket", "s3:ListObjectsV2")
"""A reader's policy. ``s3:ListBucket`` is AWS's name for listing; moto checks a v2 listing as
``s3:ListObjectsV2``, so the reader has both (neither lets it write)."""

_SETUP = """
import json, sys, boto3
endpoint, bucket, reader = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
given = dict(endpoint_url=endpoint, region_name="us-east-1",
             aws_access_key_id="setup", aws_secret_access_key="setup")
boto3.client("s3", **given).create_bucket(Bucket=bucket)
iam = boto3.client("iam", **given)
keys = {}
for user, actions in (("writer", ["s3:*"]), ("reader", reader)):
    iam.create_user(UserName=user)
    policy = {"Version": "2012-10-17",
              "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}]}
    iam.put_user_policy(UserName=user, PolicyName=user, PolicyDocument=json.dumps(policy))
    made = iam.create_access_key(UserName=user)["AccessKey"]
    keys[user] = [made["AccessKeyId"], made["SecretAccessKey"]]
print(json.dumps(keys))
"""


@dataclass(frozen=True)
class Keys:
    """One IAM user's access key."""

    key_id: str
    secret: str

    def env(self, endpoint: str) -> dict[str, str]:
        """What a user holding only these keys sets to reach ``endpoint``."""
        return {
            "AWS_ENDPOINT_URL": endpoint,
            "AWS_ACCESS_KEY_ID": self.key_id,
            "AWS_SECRET_ACCESS_KEY": self.secret,
            "AWS_REGION": "us-east-1",
            "AWS_ALLOW_HTTP": "true",
        }


class MotoWithIAM:
    """A moto server on a free port with one bucket, a writer and a reader; IAM enforced."""

    def __init__(self, bucket: str) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.bucket = bucket
        self.process: subprocess.Popen[bytes] | None = None
        self.writer = self.reader = Keys("", "")

    def start(self) -> None:
        server = VENV / "bin" / "moto_server"
        if not server.exists():
            pytest.fail(f"no moto server at {server}: run `bash scripts/object-stores.sh start`")
        self.process = subprocess.Popen(
            [str(server), "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self._wait_until_it_answers()
        made = subprocess.run(
            [
                str(VENV / "bin" / "python"),
                "-c",
                _SETUP,
                self.endpoint,
                self.bucket,
                json.dumps(READER_ACTIONS),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert made.returncode == 0, made.stderr[-3000:]
        keys = json.loads(made.stdout)
        self.writer, self.reader = Keys(*keys["writer"]), Keys(*keys["reader"])
        enforce = urllib.request.Request(
            f"{self.endpoint}/moto-api/reset-auth",
            data=b"0",  # no more requests let in unchecked
            headers={"Content-Type": "text/plain"},
            method="POST",
        )
        with urllib.request.urlopen(enforce, timeout=10) as reply:
            assert reply.status == 200, reply.status

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait()

    def _wait_until_it_answers(self) -> None:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=1)
                return
            except urllib.error.HTTPError:
                return  # an error status is an answer
            except OSError:
                assert time.monotonic() < deadline, "moto's server did not start"
                time.sleep(0.1)
