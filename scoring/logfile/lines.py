"""A file's lines, read as a stream: raw and decoded lines, each parsed as one
JSON object, the header told apart, and a file's objects with their numbers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson

from scoring.logfile.errors import ErrorCollector, LineError, line_too_long
from scoring.logfile.fields import _NUL_ESCAPE, _nul_error


def iter_raw_lines(
    stream, *, max_line_bytes: int | None = None, first_number: int = 1
) -> Iterator[tuple[int, bytes, int, int]]:
    """Yield (line number, bytes, bytes read so far, oversize) for each line
    of a binary stream, numbered from ``first_number``, line ends kept.

    With ``max_line_bytes``, a line whose text (its line end aside) is longer
    is never held whole: its bytes are only its start, and ``oversize`` is its
    length; otherwise ``oversize`` is 0.
    """
    if max_line_bytes is None:
        position = 0
        for number, raw in enumerate(stream, start=first_number):
            position += len(raw)
            yield number, raw, position, 0
        return
    # Room for the text, a "\r\n" and one byte more, which tells a line cut
    # short by the bound from one that ended.
    bound = max_line_bytes + 3
    readline = stream.readline
    number, position = first_number - 1, 0
    while raw := readline(bound):
        number += 1
        position += len(raw)
        if len(raw) < bound or raw.endswith(b"\n"):
            length = len(raw.rstrip(b"\r\n"))
            yield number, raw, position, (length if length > max_line_bytes else 0)
            continue
        length = len(raw)
        while True:
            more = readline(1 << 20)
            position += len(more)
            if not more or more.endswith(b"\n"):
                break
            length += len(more)
        yield number, raw, position, length + len(more.rstrip(b"\r\n"))


def range_bytes(stream, start: int, end: int) -> bytes:
    """The lines that start within [start, end) of a binary file, whole: a
    range reads from the first line start in it (or from ``start`` at 0) to
    the end of the line under ``end``, so that ranges next to each other
    read every line once."""
    if start:
        stream.seek(start - 1)
        data = stream.read(end - start + 1)
        cut = data.find(b"\n")
        if cut == -1:
            return b""  # inside one line, which an earlier range reads
        data = data[cut + 1 :]
    else:
        stream.seek(0)
        data = stream.read(end)
    if data and not data.endswith(b"\n"):
        data += stream.readline()
    return data


def iter_lines(
    stream, *, max_line_bytes: int | None = None, first_number: int = 1
) -> Iterator[tuple[int, str | None, int, int]]:
    """Yield (line number, text, bytes read so far, oversize) for each
    non-blank line of a binary stream. Text is None for a line that is not
    UTF-8 and for one over ``max_line_bytes`` (whose length is ``oversize``,
    see iter_raw_lines); lines are numbered from ``first_number``, and a
    byte-order mark is taken off the file's first line, number 1."""
    for number, raw, position, oversize in iter_raw_lines(
        stream, max_line_bytes=max_line_bytes, first_number=first_number
    ):
        if oversize:
            yield number, None, position, oversize
            continue
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            yield number, None, position, 0
            continue
        if text.strip():
            yield number, text.rstrip("\r\n"), position, 0


def parse_object(number: int, text: str | None) -> tuple[dict | None, LineError | None]:
    if text is None:
        return None, LineError(number, None, "not UTF-8 text")
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as error:
        if "\x00" in text:
            return None, LineError(number, None, "holds a NUL byte, which cannot be stored: remove it")
        return None, LineError(number, None, f"not JSON ({_json_reason(error)})")
    if not isinstance(value, dict):
        return None, LineError(number, None, f"not a JSON object but {type(value).__name__}")
    return value, None


def _json_reason(error: orjson.JSONDecodeError) -> str:
    # orjson says "unexpected character: line 1 column 2 (char 1)"; keep the
    # reason and the column, the line is ours.
    reason = str(error).split(":")[0]
    return f"{reason} at column {error.colno}"


HEADER_FIELDS = frozenset(
    {
        "assistant_version",
        "set_version",
        "repetitions",
        "timeout_s",
        "repeats",
        "clock_skew_ms",
        "clock_precision_ms",
        "reply_policy",
        "exclude_overhead",
    }
)


def is_header(record: dict) -> bool:
    """A header names versions or the run's plan, and is not itself an answer
    or a question."""
    return "question_id" not in record and not HEADER_FIELDS.isdisjoint(record)


def _decode(raw: bytes) -> str | None:
    try:
        return raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return None


@dataclass(frozen=True, slots=True)
class LoggedLine:
    """One object of a file: its line number, its text as written, and the object."""

    line: int
    text: str
    record: dict


ProgressCallback = Callable[[float], None]


def _records(
    path: Path,
    collector: ErrorCollector,
    progress: ProgressCallback | None = None,
    *,
    max_line_bytes: int | None = None,
) -> Iterator[LoggedLine]:
    """The objects of a file, skipping a header on its first line; lines that
    are not JSON objects, that hold NUL or that are longer than
    ``max_line_bytes`` go to the collector. ``progress`` hears the share of
    the file read, every few thousand lines."""
    size = max(path.stat().st_size, 1)
    with open(path, "rb") as stream:
        yield from records_in(stream, collector, progress, size=size, max_line_bytes=max_line_bytes)


def records_in(
    stream,
    collector: ErrorCollector,
    progress: ProgressCallback | None = None,
    *,
    size: int = 1,
    max_line_bytes: int | None = None,
    first_number: int = 1,
) -> Iterator[LoggedLine]:
    """As _records, over a binary stream of ``size`` bytes whose first line
    is the file's line ``first_number``: past the first, no line is a header
    (a part of a file read on its own, see scoring.question_table)."""
    first = first_number == 1
    for number, text, position, oversize in iter_lines(
        stream, max_line_bytes=max_line_bytes, first_number=first_number
    ):
        if progress and number % 5000 == 0:
            progress(position / size)
        if oversize:
            collector.add([line_too_long(number, oversize, max_line_bytes)])
            first = False
            continue
        record, error = parse_object(number, text)
        if error is None and _NUL_ESCAPE in text:
            error = _nul_error(number, record)
        if error:
            collector.add([error])
            first = False
            continue
        if first and is_header(record):
            first = False
            continue
        first = False
        yield LoggedLine(number, text, record)
    if progress:
        progress(1.0)
