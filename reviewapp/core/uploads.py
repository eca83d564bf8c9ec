"""Uploaded files taken in as they arrive: unpacked, hashed, held to a size
limit and written to the data folder in one pass, then checked."""

from __future__ import annotations

import hashlib
import tempfile
import time
import uuid
import weakref
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.core.files.uploadhandler import FileUploadHandler

from reviewapp.core.errors import ApplicationError
from scoring import logfile


@dataclass(frozen=True)
class StoredFile:
    """An upload received and checked, in this host's data folder at ``path``,
    until the caller puts it in the store (files.put) or drops it (``discard``)."""

    path: Path
    name: str
    sha256: str
    size: int
    # What received it, kept alive with it: a receiver gone removes its file.
    receiver: Receiver | None = field(default=None, repr=False, compare=False)

    def discard(self) -> None:
        """Remove this host's copy; what was put in the store stays."""
        self.path.unlink(missing_ok=True)


def limit_text() -> str:
    return f"{settings.MAX_UPLOAD_BYTES / 1024 / 1024:,.0f} MB"


# This host's folder, in the data folder, for uploads as they arrive.
INCOMING = "incoming"
GZIP_MAGIC = b"\x1f\x8b"
# Enough of a file's start to tell UTF-16 or binary from UTF-8 text.
SNIFF_BYTES = 4096
# The most one piece of a gzip file may unpack to at once: memory stays
# bounded however well it compresses.
UNPACKED_PIECE = 1024 * 1024


class _Gunzip:
    """A gzip file unpacked piece by piece as its bytes arrive, member after
    member (as gzip.GzipFile reads concatenated files), the trailer's CRC and
    length checked by zlib."""

    def __init__(self):
        self._member = zlib.decompressobj(wbits=31)
        self._after = b""  # bytes after a member's end: the next member's start

    def feed(self, data: bytes) -> Iterator[bytes]:
        while data:
            if self._member.eof:
                # Zero bytes may pad a member, as gzip's own reader allows.
                self._after = (self._after + data).lstrip(b"\0")
                if len(self._after) < len(GZIP_MAGIC):
                    return
                if not self._after.startswith(GZIP_MAGIC):
                    raise zlib.error("not a gzip file after a member's end")
                self._member, data, self._after = zlib.decompressobj(wbits=31), self._after, b""
            piece = self._member.decompress(data, UNPACKED_PIECE)
            if piece:
                yield piece
            data = self._member.unconsumed_tail or self._member.unused_data

    def close(self) -> None:
        if not self._member.eof or self._after:
            raise EOFError("Compressed file ended before the end-of-stream marker was reached")  # gzip's


class Receiver:
    """One uploaded file taken in as its bytes arrive: unpacked when it is
    gzip-compressed, hashed, held to the size limit (counted unpacked) and
    written to this host's data folder, all in one pass. A refusal is kept
    in ``problem`` and the rest of the file is dropped, for store_upload to
    raise."""

    def __init__(self, file_name: str | None):
        self.name = clean_file_name(file_name)
        folder = Path(settings.DATA_DIR) / INCOMING
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"incoming-{uuid.uuid4().hex}.part"
        self._out = open(self.path, "wb")  # noqa: SIM115 (open across feed calls, closed by finish)
        # Whatever is still at this path once the receiver is gone is left over:
        # an upload its client cut off (Django tells no handler of that), or
        # one no caller put away. Stored files were moved from here already.
        weakref.finalize(self, self.path.unlink, missing_ok=True)
        self._digest = hashlib.sha256()
        self._head: bytes | None = b""
        self._gunzip: _Gunzip | None = None
        self.raw_size = 0
        self.size = 0
        self.problem: ApplicationError | None = None

    def feed(self, data: bytes) -> None:
        self.raw_size += len(data)
        if self.problem is not None:
            return
        if self._head is not None:  # the kind of file not known yet
            self._head += data
            if len(self._head) < len(GZIP_MAGIC):
                return
            data, self._head = self._head, None
            if data.startswith(GZIP_MAGIC):
                self._gunzip = _Gunzip()
                self.name = self.name.removesuffix(".gz")
        if self._gunzip is None:
            self._write(data)
            return
        try:
            for piece in self._gunzip.feed(data):
                self._write(piece)
                if self.problem is not None:
                    return
        except zlib.error as error:
            self._refuse(self._unreadable(error))

    def _write(self, piece: bytes) -> None:
        self.size += len(piece)
        if self.size > settings.MAX_UPLOAD_BYTES:
            compressed = " uncompressed" if self._gunzip is not None else ""
            self._refuse(
                ApplicationError(
                    f"{self.name}: the file is larger{compressed} than the limit of {limit_text()}",
                    status=413,
                )
            )
            return
        self._digest.update(piece)
        self._out.write(piece)

    def _unreadable(self, error) -> ApplicationError:
        return ApplicationError(f"{self.name}: this file is gzip-compressed but cannot be read: {error}")

    def _refuse(self, problem: ApplicationError) -> None:
        self.problem = problem
        self._out.close()
        self.path.unlink(missing_ok=True)

    def finish(self) -> None:
        if self._head and self.problem is None:  # a file of one byte
            data, self._head = self._head, None
            self._write(data)
        if self._gunzip is not None and self.problem is None:
            try:
                self._gunzip.close()
            except EOFError as error:
                self._refuse(self._unreadable(error))
        self._out.close()
        if self.problem is None and self.size == 0:
            self._refuse(ApplicationError(f"{self.name}: the file is empty"))

    @property
    def sha256(self) -> str:
        return self._digest.hexdigest()

    def discard(self) -> None:
        self._out.close()
        self.path.unlink(missing_ok=True)


class ReceivedFile(UploadedFile):
    """What ReceivingHandler makes of an uploaded file: readable as any
    uploaded file (its content unpacked; ``size`` the bytes sent, as Django's
    form fields expect), with its Receiver's work done."""

    def __init__(self, receiver: Receiver, *, field_name, content_type, charset, content_type_extra):
        self.receiver = receiver
        super().__init__(
            open(receiver.path, "rb") if receiver.problem is None else BytesIO(b""),  # noqa: SIM115 (closed by close)
            receiver.name,
            content_type,
            receiver.raw_size,
            charset,
            content_type_extra,
        )

    def close(self):
        # At the request's end (Django closes its uploaded files): what no
        # one stored is dropped, as Django's temporary upload files are.
        try:
            return self.file.close()
        finally:
            self.receiver.discard()


class ReceivingHandler(FileUploadHandler):
    """Django's handler of every uploaded file (settings.FILE_UPLOAD_HANDLERS):
    each is unpacked, hashed and written to the data folder as it arrives
    (Receiver), instead of being written to a temporary file and then
    copied and hashed in a second pass."""

    # Bigger than Django's 64 KB: fewer, larger writes and hash updates.
    chunk_size = 1024 * 1024

    def new_file(self, *args, **kwargs):
        super().new_file(*args, **kwargs)
        self._receiver = Receiver(self.file_name)

    def receive_data_chunk(self, raw_data, start):
        self._receiver.feed(raw_data)

    def file_complete(self, file_size):
        self._receiver.finish()
        return ReceivedFile(
            self._receiver,
            field_name=self.field_name,
            content_type=self.content_type,
            charset=self.charset,
            content_type_extra=self.content_type_extra,
        )


def store_upload(upload, *, text: bool = True, refuse_other_tools: bool = False) -> StoredFile:
    """Check an uploaded file, received into the data folder as it arrived,
    or, when it came another way (a file made in code), taken in now the
    same way: gzip-compressed files are unpacked on the way, never held
    whole. The caller puts the returned file in the store or discards it.

    Refuses (ApplicationError) a file past the size limit (counted
    uncompressed), an empty one, a gzip file that cannot be read, and one
    that is UTF-16, UTF-32 or compressed another way (logfile.encoding_problem),
    unless ``text`` is False (an import, whose reader judges its own format:
    an Inspect log is a zip). With ``refuse_other_tools`` (a run log) it also
    refuses another tool's file, naming it and the Import page that reads it
    (ApplicationError with ``field`` "import").
    """
    _remove_leftovers_now_and_then()
    if isinstance(upload, ReceivedFile):
        receiver = upload.receiver
    else:
        receiver = Receiver(upload.name)
        try:
            for chunk in upload.chunks():
                receiver.feed(chunk)
        finally:
            receiver.finish()
    if receiver.problem is not None:
        raise receiver.problem
    stored = StoredFile(
        path=receiver.path,
        name=receiver.name,
        sha256=receiver.sha256,
        size=receiver.size,
        receiver=receiver,
    )
    try:
        if refuse_other_tools and (what := _other_tool(stored.path, stored.name)):
            raise ApplicationError(
                f"{stored.name}: this is {what}, not a run log in this app's form: import it on the "
                "Import page (or POST /api/imports), which reads it as its tool writes it",
                field="import",
            )
        if text:
            with open(stored.path, "rb") as readable:
                if problem := logfile.encoding_problem(readable.read(SNIFF_BYTES)):
                    raise ApplicationError(f"{stored.name}: {problem}")
    except BaseException:
        stored.discard()
        raise
    return stored


# An upload older than this that no process finished is one a killed process
# left (the slowest honest upload, 1 GB over a slow link, takes far less).
LEFTOVER_SECONDS = 6 * 3600
_LEFTOVERS_CHECKED = {"at": 0.0}


def remove_leftovers(max_age_s: float = LEFTOVER_SECONDS) -> int:
    """Remove what killed processes left of uploads on this host, once older
    than ``max_age_s``: our own partial copies (``incoming-*.part`` in the
    data folder) and Django's temporary upload files (``tmp*.upload*`` in
    FILE_UPLOAD_TEMP_DIR or the system's temporary folder, left by versions
    before ReceivingHandler). The count."""
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
