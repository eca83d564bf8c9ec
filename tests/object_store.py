"""An S3 API on 127.0.0.1 for the tests: moto's server, in a thread of the
test's process, reached over HTTP by the app's S3 client as a real store
would be (no patching of boto3)."""

from __future__ import annotations

import boto3
from moto.server import ThreadedMotoServer

BUCKET = "reviewapp-test"
KEYS = {"REVIEWAPP_S3_ACCESS_KEY": "test-key", "REVIEWAPP_S3_SECRET_KEY": "test-secret"}


class ObjectStore:
    def __init__(self):
        self.server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self.server.start()
        host, port = self.server.get_host_and_port()
        self.url = f"http://{host}:{port}"
        self.env = {
            "REVIEWAPP_STORAGE": "s3",
            "REVIEWAPP_S3_BUCKET": BUCKET,
            "REVIEWAPP_S3_ENDPOINT_URL": self.url,
            "REVIEWAPP_S3_REGION": "us-east-1",
            **KEYS,
        }
        self.client = boto3.client(
            "s3",
            endpoint_url=self.url,
            region_name="us-east-1",
            aws_access_key_id=KEYS["REVIEWAPP_S3_ACCESS_KEY"],
            aws_secret_access_key=KEYS["REVIEWAPP_S3_SECRET_KEY"],
        )
        self.client.create_bucket(Bucket=BUCKET)

    def storage(self, **changes) -> dict:
        """The "data" storage setting for this store (``changes`` to its environment)."""
        from reviewapp.settings import s3_storage

        return s3_storage({**self.env, **changes})

    def names(self, prefix: str = "") -> list[str]:
        listed = self.client.list_objects_v2(Bucket=BUCKET, Prefix=prefix)
        return sorted(item["Key"] for item in listed.get("Contents", []))

    def read(self, name: str) -> bytes:
        return self.client.get_object(Bucket=BUCKET, Key=name)["Body"].read()

    def close(self) -> None:
        self.server.stop()
