"""Streaming uploaded files to storage, with their sha256 and a size limit."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings


class UploadRejected(Exception):
    """An upload that cannot be taken; ``errors`` say what is wrong and where."""

    def __init__(self, errors: list[str] | str, *, status: int = 400):
        self.errors = [errors] if isinstance(errors, str) else list(errors)
        self.status = status
        super().__init__("; ".join(self.errors))


@dataclass(frozen=True)
class StoredFile:
    path: Path
    name: str
    sha256: str
    size: int


def limit_text() -> str:
    return f"{settings.MAX_UPLOAD_BYTES / 1024 / 1024:,.0f} MB"


def store_upload(upload, *, folder: str) -> StoredFile:
    """Copy an uploaded file into the data folder chunk by chunk, hashing as it
    goes; refuse it once it passes the size limit. The caller renames or
    removes the returned temporary file."""
    target = Path(settings.DATA_DIR) / folder
    target.mkdir(parents=True, exist_ok=True)
    path = target / f"incoming-{uuid.uuid4().hex}.part"
    digest = hashlib.sha256()
    size = 0
    try:
        with open(path, "wb") as out:
            for chunk in upload.chunks():
                size += len(chunk)
                if size > settings.MAX_UPLOAD_BYTES:
                    raise UploadRejected(
                        f"{upload.name}: the file is larger than the limit of {limit_text()}",
                        status=413,
                    )
                digest.update(chunk)
                out.write(chunk)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    if size == 0:
        path.unlink(missing_ok=True)
        raise UploadRejected(f"{upload.name}: the file is empty")
    return StoredFile(path=path, name=Path(upload.name).name, sha256=digest.hexdigest(), size=size)


def resolve_version(what: str, key: str, *, given: str, header: dict, name_match, file_name: str) -> str:
    """The version named by the form, the file's header line and its name:
    refused when none names it or two disagree."""
    sources = {
        "the form": given.strip(),
        "the header line": str(header.get(key) or ""),
        "the file name": name_match[key] if name_match else "",
    }
    named = {source: value for source, value in sources.items() if value}
    values = set(named.values())
    if len(values) > 1:
        said = ", ".join(f"{source} says {value!r}" for source, value in named.items())
        raise UploadRejected(f"{file_name}: the {what} disagrees: {said}")
    if not values:
        raise UploadRejected(f"{file_name}: no {what}: give it in a header line, the file name or the form")
    return values.pop()
