"""Streaming uploaded files to storage, with their sha256 and a size limit."""

from __future__ import annotations

import gzip
import hashlib
import tempfile
import time
import uuid
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from reviewapp.core.errors import ApplicationError
from scoring import logfile


@dataclass(frozen=True)
class StoredFile:
    path: Path
    name: str
    sha256: str
    size: int


def limit_text() -> str:
    return f"{settings.MAX_UPLOAD_BYTES / 1024 / 1024:,.0f} MB"


GZIP_MAGIC = b"\x1f\x8b"
# Enough of a file's start to tell UTF-16 or binary from UTF-8 text.
SNIFF_BYTES = 4096


def store_upload(upload, *, folder: str, text: bool = True, refuse_other_tools: bool = False) -> StoredFile:
    """Copy an uploaded file into the data folder chunk by chunk, hashing as it
    goes; a gzip-compressed file is decompressed on the way, never held whole.
    The caller renames or removes the returned temporary file.

    Refuses (ApplicationError) a file past the size limit (counted
    uncompressed), an empty one, a gzip file that cannot be read, and one
    that is UTF-16, UTF-32 or compressed another way (logfile.encoding_problem),
    unless ``text`` is False (an import, whose reader judges its own format:
    an Inspect log is a zip). With ``refuse_other_tools`` (a run log) it also
    refuses another tool's file, naming it and the Import page that reads it
    (ApplicationError with ``field`` "import").
    """
    _remove_leftovers_now_and_then()
    name = clean_file_name(upload.name)
    upload.seek(0)
    compressed = upload.read(len(GZIP_MAGIC)) == GZIP_MAGIC
    if compressed:
        name = name.removesuffix(".gz")
    target = Path(settings.DATA_DIR) / folder
    target.mkdir(parents=True, exist_ok=True)
    path = target / f"incoming-{uuid.uuid4().hex}.part"
    digest = hashlib.sha256()
    size = 0
    try:
        with open(path, "wb") as out:
            for chunk in _gunzipped(upload, name) if compressed else upload.chunks():
                size += len(chunk)
                if size > settings.MAX_UPLOAD_BYTES:
                    raise ApplicationError(
                        f"{name}: the file is larger{' uncompressed' if compressed else ''} "
                        f"than the limit of {limit_text()}",
                        status=413,
                    )
                digest.update(chunk)
                out.write(chunk)
        if size == 0:
            raise ApplicationError(f"{name}: the file is empty")
        if refuse_other_tools and (what := _other_tool(path, name)):
            raise ApplicationError(
                f"{name}: this is {what}, not a run log in this app's form: import it on the Import page "
                "(or POST /api/imports), which reads it as its tool writes it",
                field="import",
            )
        if text:
            with open(path, "rb") as stored:
                if problem := logfile.encoding_problem(stored.read(SNIFF_BYTES)):
                    raise ApplicationError(f"{name}: {problem}")
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return StoredFile(path=path, name=name, sha256=digest.hexdigest(), size=size)


# An upload older than this that no process finished is one a killed process
# left (the slowest honest upload, 1 GB over a slow link, takes far less).
LEFTOVER_SECONDS = 6 * 3600
_LEFTOVERS_CHECKED = {"at": 0.0}


def remove_leftovers(max_age_s: float = LEFTOVER_SECONDS) -> int:
    """Remove what killed processes left of uploads on this host: our own
    partial copies (``incoming-*.part`` in the data folder) and Django's
    temporary upload files (``tmp*.upload*`` in FILE_UPLOAD_TEMP_DIR or the
    system's temporary folder), once older than ``max_age_s``. The count."""
    cutoff = time.time() - max_age_s
    temporary = Path(settings.FILE_UPLOAD_TEMP_DIR or tempfile.gettempdir())
    removed = 0
    for pattern, folder in (("*/incoming-*.part", Path(settings.DATA_DIR)), ("tmp*.upload*", temporary)):
        for path in folder.glob(pattern):
            try:
                if path.is_file() and path.stat().st_mtime < cutoff:
                    path.unlink()
                    removed += 1
            except OSError:  # gone meanwhile, or another user's file
                continue
    return removed


def _remove_leftovers_now_and_then() -> None:
    """On a web host, where no sweep runs: at most every ten minutes, on an upload."""
    if time.monotonic() - _LEFTOVERS_CHECKED["at"] < 600:
        return
    _LEFTOVERS_CHECKED["at"] = time.monotonic()
    remove_leftovers()


def _other_tool(path: Path, name: str) -> str | None:
    from scoring.imports.sniff import other_tool  # the importer's package, loaded when needed

    return other_tool(path, name)


def _gunzipped(upload, name: str) -> Iterator[bytes]:
    upload.seek(0)
    try:
        with gzip.GzipFile(fileobj=upload, mode="rb") as unzipped:
            while chunk := unzipped.read(256 * 1024):
                yield chunk
    except (OSError, EOFError, zlib.error) as error:
        raise ApplicationError(f"{name}: this file is gzip-compressed but cannot be read: {error}") from error


def clean_file_name(name: str | None) -> str:
    """The last part of an uploaded file's name, control characters made "_"
    and cut to 200 characters (the tables keep 255)."""
    name = Path(name or "").name
    name = "".join(character if character.isprintable() else "_" for character in name)
    if len(name) > 200:
        stem, dot, suffix = name.rpartition(".")
        name = f"{stem[: 190 - len(suffix)]}{dot}{suffix}" if dot and len(suffix) < 10 else name[:200]
    return name or "upload.jsonl"


def resolve_version(
    what: str, key: str, *, given: str, header: dict, name_match, file_name: str, form_field: str = ""
) -> str:
    """The version named by the form, the file's header line and its name.

    Refused when none names it, when two disagree, or when one is not a
    valid label (logfile.label_problem: letters, digits, '.', '_', '-', '+',
    up to 100 characters); the error names the form field (``form_field``,
    by default ``key``) or the header line's field.
    """
    header_value = header.get(key)
    sources = {
        "the form": given.strip(),
        "the header line": "" if header_value in (None, "") else str(header_value),
        "the file name": name_match[key] if name_match else "",
    }
    named = {source: value for source, value in sources.items() if value}
    places = {
        "the form": form_field or key,
        "the header line": f"{file_name}: line 1, field {key}",
        "the file name": f"{file_name}: the {what} in the file name",
    }
    problems = [
        f"{places[source]}: {problem}"
        for source, value in named.items()
        if (problem := logfile.label_problem(value))
    ]
    if problems:
        raise ApplicationError(problems)
    values = set(named.values())
    if len(values) > 1:
        said = ", ".join(f"{source} says {value!r}" for source, value in named.items())
        raise ApplicationError(f"{file_name}: the {what} disagrees: {said}")
    if not values:
        raise ApplicationError(f"{file_name}: no {what}: give it in a header line, the file name or the form")
    return values.pop()
