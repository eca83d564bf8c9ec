"""Stored files: uploaded run logs and pending imports, in Django's "data"
storage (settings.STORAGES).

By default that is the data folder (DataFolderStorage), which web and
workers then share; in production it may be any storage Django has a
backend for, S3's API among them (REVIEWAPP_STORAGE=s3), so that hosts
share no disk. Files are named by the storage's own names ("runs/<sha256>.jsonl"),
never by a host's paths.

A file is checked on the host that received it, in that host's data
folder, then put in the storage; a host that reads one takes a local copy
for as long as it reads (``local_copy``). On the data folder both are a
rename and the file itself, at no cost. On a store of its own, an upload
is sent to it part by part while it arrives (``Staged``), so that putting
it afterwards only finishes what was sent.

Errors of the storage come out as two kinds: ``StoreUnreachable`` (the
store did not answer or failed on its side: try again later; work.is_transient
counts it) and ``StoredFileMissing`` (the store answered that the file is
not there: trying again will not help).
"""

from __future__ import annotations

import logging
import os
import queue
import shutil
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.core.files.base import ContentFile
from django.core.files.storage import FileSystemStorage, storages

logger = logging.getLogger(__name__)

STORAGE = "data"
# Where a host keeps its local copies of stored files while it reads them.
COPIES = "copies"


class DataFolderStorage(FileSystemStorage):
    """The data folder as a storage, following settings.DATA_DIR as it is
    now (the tests give each test its own)."""

    @property
    def base_location(self):
        return str(settings.DATA_DIR)

    @property
    def location(self):
        return os.path.abspath(self.base_location)


class StoreUnreachable(Exception):
    """The file store could not be reached or failed on its side."""


class StoredFileMissing(Exception):
    """The file store holds no file of that name."""


def storage():
    return storages[STORAGE]


def _is_folder(store) -> bool:
    return isinstance(store, FileSystemStorage)


def is_data_folder() -> bool:
    """Whether the file store is this host's data folder itself."""
    return _is_folder(storage())


@contextmanager
def _translated(name: str) -> Iterator[None]:
    """The storage's own errors as StoreUnreachable or StoredFileMissing."""
    try:
        yield
    except FileNotFoundError as error:
        raise StoredFileMissing(f"{name} is not in the file store") from error
    except (StoreUnreachable, StoredFileMissing):
        raise
    except Exception as error:
        if _is_missing(error):
            raise StoredFileMissing(f"{name} is not in the file store") from error
        if _is_store_error(error):
            raise StoreUnreachable(f"the file store could not be reached ({type(error).__name__})") from error
        raise


def _is_missing(error: Exception) -> bool:
    response = getattr(error, "response", None)
    if not isinstance(response, dict):
        return False
    code = str(response.get("Error", {}).get("Code", ""))
    return code in {"404", "NoSuchKey", "NotFound"}


def _is_store_error(error: Exception) -> bool:
    """An error from the S3 client (botocore's), on the way or in the
    store: connection refused or cut, timeouts, 5xx and throttling. Told by
    module, so that botocore is imported only where it is used."""
    module = type(error).__module__ or ""
    if module.startswith(("botocore", "urllib3", "boto3", "s3transfer")):
        return True
    return isinstance(error, ConnectionError | TimeoutError)


def put(name: str, local: Path, staged: Staged | None = None) -> None:
    """Store the local file ``local`` under ``name``, replacing any file of
    that name (a log's name is its content's sha256); ``local`` is gone
    afterwards. On the data folder this is a rename. ``staged``, the same
    file sent to the store while it was received, is finished instead of
    sending it again."""
    store = storage()
    with _translated(name):
        if staged is not None and staged.started:
            staged.finish_as(name)
            local.unlink(missing_ok=True)
            return
        if _is_folder(store):
            target = Path(store.path(name))
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(local, target)
            return
        with open(local, "rb") as stream:
            saved = store.save(name, File(stream, name=name))
        if saved != name:  # a backend that renames rather than replaces
            raise RuntimeError(f"the file store kept {name} as {saved}")
    local.unlink(missing_ok=True)


# Where uploads are sent while they arrive, until they are checked and named.
STAGING = "incoming"
# The size of each part sent while an upload arrives (S3 wants 5 MB or more
# but the last), how many are sent at once, and how many more may wait to
# be sent: what an upload holds in memory, (SENDERS + PARTS_WAITING) parts.
PART_BYTES = 16 * 1024 * 1024
SENDERS = 2
PARTS_WAITING = 2


class Staged:
    """An upload sent to a store of its own (not the data folder) while it
    arrives: an S3 multipart upload under ``incoming/``, its parts sent by
    SENDERS threads of their own so that receiving waits for the store only
    when PARTS_WAITING parts are already waiting.

    Nothing is sent until a whole part has arrived: a smaller file is put
    whole afterwards, as before. A store error stops the sending, not the
    receiving; it is raised, as StoreUnreachable, by ``finish_as``. What is
    neither finished nor discarded (a killed process) is removed by the
    sweep (``remove_stale_staged``) and by the bucket's own rule for
    incomplete multipart uploads, where one is set.
    """

    def __init__(self, store):
        self._store = store
        # Named by when it started (as the store's own dates may not say: moto's
        # do not), with the bucket's prefix.
        self.key = store._normalize_name(f"{STAGING}/{int(time.time())}-{uuid.uuid4().hex}")
        self._buffer = bytearray()
        self._queue: queue.Queue = queue.Queue(maxsize=PARTS_WAITING)
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._upload_id: str | None = None
        self._parts_queued = 0
        self._parts: list[dict] = []
        self._error: BaseException | None = None
        self._closed = False

    @classmethod
    def for_upload(cls) -> Staged | None:
        """A Staged for an upload about to arrive, or None on the data folder."""
        store = storage()
        return None if _is_folder(store) else cls(store)

    @property
    def started(self) -> bool:
        return bool(self._threads)

    def add(self, data: bytes) -> None:
        if self._error is not None or self._closed:
            return
        self._buffer += data
        while len(self._buffer) >= PART_BYTES:
            self._send(bytes(self._buffer[:PART_BYTES]))
            del self._buffer[:PART_BYTES]

    def _send(self, part: bytes) -> None:
        if not self._threads:
            self._client = self._store.connection.meta.client  # thread-safe, unlike the resource
            self._threads = [
                threading.Thread(target=self._sender, name="staged-upload", daemon=True)
                for _ in range(SENDERS)
            ]
            for thread in self._threads:
                thread.start()
        self._parts_queued += 1
        self._put((self._parts_queued, part))

    def _put(self, item) -> None:
        """Queue ``item`` for the senders, unless the sending has stopped."""
        while self._error is None and any(thread.is_alive() for thread in self._threads):
            try:
                self._queue.put(item, timeout=0.2)
                return
            except queue.Full:
                continue

    def _upload_id_now(self) -> str:
        with self._lock:
            if self._upload_id is None:
                self._upload_id = self._client.create_multipart_upload(
                    Bucket=self._store.bucket_name, Key=self.key
                )["UploadId"]
            return self._upload_id

    def _sender(self) -> None:
        while (item := self._queue.get()) is not None:
            if self._error is not None:
                continue  # the sending has stopped: drop the rest
            number, part = item
            try:
                answer = self._client.upload_part(
                    Bucket=self._store.bucket_name,
                    Key=self.key,
                    UploadId=self._upload_id_now(),
                    PartNumber=number,
                    Body=part,
                )
                self._parts.append({"PartNumber": number, "ETag": answer["ETag"]})
            except BaseException as error:  # kept for finish_as; the receiving goes on
                self._error = self._error or error

    def _join(self) -> None:
        """Send what is left and wait for every part to be in the store."""
        if self._closed:
            return
        self._closed = True
        if self._buffer and self._error is None:
            self._send(bytes(self._buffer))
        self._buffer = bytearray()
        for _ in self._threads:
            self._queue.put(None)  # the senders drop parts after an error, so there is room
        for thread in self._threads:
            thread.join()

    def finish_as(self, name: str) -> None:
        """Make the sent parts the stored file ``name``: complete the upload,
        then copy it to its name inside the store, which sends nothing."""
        self._join()
        if self._error is not None:
            raise StoreUnreachable(
                f"the file store could not be reached ({type(self._error).__name__})"
            ) from self._error
        client, bucket = self._client, self._store.bucket_name
        parts = sorted(self._parts, key=lambda part: part["PartNumber"])
        client.complete_multipart_upload(
            Bucket=bucket, Key=self.key, UploadId=self._upload_id, MultipartUpload={"Parts": parts}
        )
        self._upload_id = None
        from boto3.s3.transfer import TransferConfig

        # One request that copies inside the store, in parts only past S3's 5 GB limit for one.
        whole = TransferConfig(multipart_threshold=5 * 1024**3)
        client.copy(
            {"Bucket": bucket, "Key": self.key}, bucket, self._store._normalize_name(name), Config=whole
        )
        client.delete_object(Bucket=bucket, Key=self.key)

    def discard(self) -> None:
        """Drop what was sent: the upload was refused, or stored another way."""
        if not self._threads:
            return
        try:
            self._join()
            if self._upload_id is not None:
                self._client.abort_multipart_upload(
                    Bucket=self._store.bucket_name, Key=self.key, UploadId=self._upload_id
                )
                self._upload_id = None
        except Exception as error:  # the sweep removes it later
            logger.warning("could not drop the staged upload %s: %s", self.key, error)


def remove_stale_staged(max_age_s: float) -> int:
    """Abort the staged uploads (``Staged``) that no process finished or
    dropped within ``max_age_s``: a killed web process's. The count."""
    store = storage()
    if _is_folder(store):
        return 0
    client, bucket = store.connection.meta.client, store.bucket_name
    prefix = store._normalize_name(f"{STAGING}/")
    cutoff = time.time() - max_age_s
    removed = 0
    with _translated(STAGING):
        pages = client.get_paginator("list_multipart_uploads").paginate(Bucket=bucket, Prefix=prefix)
        for page in pages:
            for upload in page.get("Uploads", []):
                started = upload["Key"].rpartition("/")[2].partition("-")[0]
                if started.isdigit() and int(started) < cutoff:
                    client.abort_multipart_upload(
                        Bucket=bucket, Key=upload["Key"], UploadId=upload["UploadId"]
                    )
                    removed += 1
    return removed + remove_older_than(STAGING, max_age_s=max_age_s)


def put_bytes(name: str, data: bytes) -> None:
    store = storage()
    with _translated(name):
        if _is_folder(store):
            target = Path(store.path(name))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            return
        store.save(name, ContentFile(data, name=name))


def read_bytes(name: str) -> bytes:
    with _translated(name), storage().open(name, "rb") as stream:
        return stream.read()


def exists(name: str) -> bool:
    with _translated(name):
        return storage().exists(name)


def delete(name: str) -> None:
    with _translated(name):
        storage().delete(name)


def open_for_reading(name: str):
    """A binary file of the stored file, to hand to a FileResponse."""
    with _translated(name):
        return storage().open(name, "rb")


@contextmanager
def local_copy(name: str) -> Iterator[Path]:
    """A path on this host holding the stored file, for as long as the block
    runs: the file itself on the data folder, else a copy in this host's
    data folder, read from the store in blocks and removed afterwards."""
    store = storage()
    if _is_folder(store):
        path = Path(store.path(name))
        if not path.exists():
            raise StoredFileMissing(f"{name} is not in the file store")
        yield path
        return
    folder = Path(settings.DATA_DIR) / COPIES
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / f"{uuid.uuid4().hex}-{Path(name).name}"
    try:
        with _translated(name), store.open(name, "rb") as source, open(copy, "wb") as out:
            shutil.copyfileobj(source, out, 1024 * 1024)
        yield copy
    finally:
        copy.unlink(missing_ok=True)


def remove_older_than(folder: str, *, max_age_s: float) -> int:
    """Remove the stored files under ``folder`` older than ``max_age_s``;
    the number removed."""
    store = storage()
    cutoff = time.time() - max_age_s
    removed = 0
    with _translated(folder):
        if _is_folder(store) and not store.exists(folder):
            return 0
        _, names = store.listdir(folder)
        for file_name in names:
            name = f"{folder}/{file_name}"
            if store.get_modified_time(name).timestamp() < cutoff:
                store.delete(name)
                removed += 1
    return removed
