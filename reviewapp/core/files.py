"""Stored files: uploaded run logs and pending imports, in Django's "data"
storage (settings.STORAGES).

By default that is the data folder (DataFolderStorage), which web and
workers then share; in production it may be any storage Django has a
backend for, S3's API among them (REVIEWAPP_STORAGE=s3), so that hosts
share no disk. Files are named by the storage's own names ("runs/<sha256>.jsonl"),
never by a host's paths.

A file is checked on the host that received it, in that host's data
folder, then put in the storage whole; a host that reads one takes a local
copy for as long as it reads (``local_copy``). On the data folder both are
a rename and the file itself, at no cost.

Errors of the storage come out as two kinds: ``StoreUnreachable`` (the
store did not answer or failed on its side: try again later; work.is_transient
counts it) and ``StoredFileMissing`` (the store answered that the file is
not there: trying again will not help).
"""

from __future__ import annotations

import logging
import os
import shutil
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


def put(name: str, local: Path) -> None:
    """Store the local file ``local`` under ``name``, replacing any file of
    that name (a log's name is its content's sha256); ``local`` is gone
    afterwards. On the data folder this is a rename."""
    store = storage()
    with _translated(name):
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
