"""Streaming uploaded files to storage, with their sha256 and a size limit;
validating a stored run file's lines a part at a time in another process."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import uuid
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from scoring import logfile
from scoring.runner import gc_paused


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


GZIP_MAGIC = b"\x1f\x8b"
# Enough of a file's start to tell UTF-16 or binary from UTF-8 text.
SNIFF_BYTES = 4096


def store_upload(upload, *, folder: str, text: bool = True) -> StoredFile:
    """Copy an uploaded file into the data folder chunk by chunk, hashing as it
    goes; a gzip-compressed file is decompressed on the way, never held whole.
    The caller renames or removes the returned temporary file.

    Refuses (UploadRejected) a file past the size limit (counted
    uncompressed), an empty one, a gzip file that cannot be read, and one
    that is UTF-16, UTF-32 or compressed another way (logfile.encoding_problem),
    unless ``text`` is False (an import, whose reader judges its own format:
    an Inspect log is a zip).
    """
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
                    raise UploadRejected(
                        f"{name}: the file is larger{' uncompressed' if compressed else ''} "
                        f"than the limit of {limit_text()}",
                        status=413,
                    )
                digest.update(chunk)
                out.write(chunk)
        if size == 0:
            raise UploadRejected(f"{name}: the file is empty")
        if text:
            with open(path, "rb") as stored:
                if problem := logfile.encoding_problem(stored.read(SNIFF_BYTES)):
                    raise UploadRejected(f"{name}: {problem}")
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return StoredFile(path=path, name=name, sha256=digest.hexdigest(), size=size)


def _gunzipped(upload, name: str) -> Iterator[bytes]:
    upload.seek(0)
    try:
        with gzip.GzipFile(fileobj=upload, mode="rb") as unzipped:
            while chunk := unzipped.read(256 * 1024):
                yield chunk
    except (OSError, EOFError, zlib.error) as error:
        raise UploadRejected(f"{name}: this file is gzip-compressed but cannot be read: {error}") from error


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
        raise UploadRejected(problems)
    values = set(named.values())
    if len(values) > 1:
        said = ", ".join(f"{source} says {value!r}" for source, value in named.items())
        raise UploadRejected(f"{file_name}: the {what} disagrees: {said}")
    if not values:
        raise UploadRejected(f"{file_name}: no {what}: give it in a header line, the file name or the form")
    return values.pop()


def validate_run_part(
    *,
    path: str,
    start: int,
    end: int,
    repetitions: int,
    max_line_bytes: int,
    run_id: int,
    rows_path: str,
    book_path: str,
    summary_path: str,
    parent: int | None = None,
) -> None:
    """Validate the whole lines of a stored run file between bytes ``start``
    and ``end``, as run_ingest validates every line, in a process of its own
    (Django is not set up here). Each valid answer goes to ``rows_path`` as
    a line of COPY's text format for the answers table, and its line,
    attempt and question id to ``book_path``, as they are made, so that the
    ingest can take them up while this goes on. ``summary_path`` receives
    {"clean": true, "answers": n} at the end, or {"clean": false} at the
    first problem: the ingest then validates the file itself, which names
    every problem as usual. It stops when ``parent``, the worker that
    started it, is gone: nobody would take its rows up."""
    clean, answers = True, 0
    with (
        gc_paused(),
        open(path, "rb") as stream,
        open(rows_path, "wb", buffering=1 << 20) as rows,
        open(book_path, "w", encoding="utf-8", buffering=1 << 20) as book_lines,
    ):
        first_line = _lines_before(stream, start) + 1
        stream.seek(start)
        # Attempts given twice within the part; the ingest checks the rest.
        book = logfile.AttemptBook(repetitions=repetitions)
        length = end - start
        for offset, raw, position, oversize in logfile.iter_raw_lines(stream, max_line_bytes=max_line_bytes):
            number = first_line + offset - 1
            if offset % 10000 == 0 and parent is not None and os.getppid() != parent:
                clean = False
                break
            if oversize:
                clean = False
                break
            if not raw.isspace():
                record, errors = logfile.check_answer_line(number, raw, book)
                if errors:
                    clean = False
                    break
                rows.write(answer_copy_line(run_id, number, record, raw))
                book_lines.write(f"{number}\t{record['attempt']}\t{record['question_id']}\n")
                answers += 1
            if position >= length:
                break
    partial = summary_path + ".part"
    with open(partial, "w", encoding="utf-8") as summary:
        json.dump({"clean": clean, "answers": answers}, summary)
    os.replace(partial, summary_path)


def _lines_before(stream, offset: int) -> int:
    counted = 0
    while offset > 0:
        block = stream.read(min(offset, 16 << 20))
        if not block:
            break
        counted += block.count(b"\n")
        offset -= len(block)
    return counted


_BYTE_ORDER_MARK = "\ufeff".encode()
_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def answer_copy_line(run_id: int, number: int, record: dict, raw: bytes) -> bytes:
    """A line of COPY's text format for the answers table (the columns of
    runs.ANSWER_COLUMNS), holding what run_ingest stores for this answer:
    the line as logged, without a byte-order mark or its line end. Its bytes
    are escaped, not decoded: validation found them UTF-8."""
    if raw.startswith(_BYTE_ORDER_MARK):
        raw = raw[len(_BYTE_ORDER_MARK) :]
    raw = raw.rstrip(b"\r\n").replace(b"\\", b"\\\\")
    if b"\t" in raw or b"\r" in raw or b"\n" in raw:
        raw = raw.replace(b"\t", b"\\t").replace(b"\r", b"\\r").replace(b"\n", b"\\n")
    declined = "t" if record.get("declined") is True else "f"
    question_id, status, language = (
        str(record[name]).translate(_COPY_ESCAPES) for name in ("question_id", "status", "language")
    )
    fields = f"{run_id}\t{number}\t{question_id}\t{record['attempt']}\t{status}\t{language}\t{declined}\t"
    return fields.encode() + raw + b"\n"
