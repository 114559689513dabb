"""An S3-compatible object store for the tests: moto's server, in a process of its own.

It speaks S3's REST API over HTTP (buckets, objects, listings, multipart uploads, presigned
addresses), so the app reaches it through boto3 exactly as it reaches a real store; it does not
check signatures or expiry, so tests check that an address is signed, not that the store refuses an
unsigned one.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from dataclasses import dataclass

ACCESS_KEY, SECRET_KEY, REGION = "yardstick-test", "yardstick-test-secret", "us-east-1"


@dataclass
class S3Server:
    endpoint: str
    process: subprocess.Popen

    def client(self):
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            region_name=REGION,
        )

    def new_bucket(self) -> str:
        name = f"yardstick-{uuid.uuid4().hex[:16]}"
        self.client().create_bucket(Bucket=name)
        return name

    def settings_for(self, bucket: str, **extra) -> dict[str, str]:
        """The environment of a process that keeps its files in `bucket` (as deploy/env/*.env)."""
        return {
            "YARDSTICK_S3_BUCKET": bucket,
            "YARDSTICK_S3_ENDPOINT_URL": self.endpoint,
            "YARDSTICK_S3_REGION": REGION,
            "YARDSTICK_S3_ACCESS_KEY_ID": ACCESS_KEY,
            "YARDSTICK_S3_SECRET_ACCESS_KEY": SECRET_KEY,
            **extra,
        }

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_s3_server() -> S3Server:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1).close()
            return S3Server(endpoint, process)
        except OSError:
            if process.poll() is not None:
                raise RuntimeError("moto's S3 server exited at start") from None
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("moto's S3 server did not answer within 30 s")
