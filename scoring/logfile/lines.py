"""A file's lines, read as a stream: raw and decoded lines, each parsed as one
JSON object, the header told apart, and a file's objects with their numbers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson

from scoring.logfile.errors import ErrorCollector, LineError, line_too_long
from scoring.logfile.fields import _NUL_ESCAPE, _nul_error


def iter_raw_lines(stream, *, max_line_bytes: int | None = None) -> Iterator[tuple[int, bytes, int, int]]:
    """Yield (line number, bytes, bytes read so far, oversize) for each line
    of a binary stream, numbered from 1, line ends kept.

    With ``max_line_bytes``, a line whose text (its line end aside) is longer
    is never held whole: its bytes are only its start, and ``oversize`` is its
    length; otherwise ``oversize`` is 0.
    """
    if max_line_bytes is None:
        position = 0
        for number, raw in enumerate(stream, start=1):
            position += len(raw)
            yield number, raw, position, 0
        return
    # Room for the text, a "\r\n" and one byte more, which tells a line cut
    # short by the bound from one that ended.
    bound = max_line_bytes + 3
    readline = stream.readline
    number = position = 0
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


def iter_lines(stream, *, max_line_bytes: int | None = None) -> Iterator[tuple[int, str | None, int, int]]:
    """Yield (line number, text, bytes read so far, oversize) for each
    non-blank line of a binary stream. Text is None for a line that is not
    UTF-8 and for one over ``max_line_bytes`` (whose length is ``oversize``,
    see iter_raw_lines); lines are numbered from 1."""
    for number, raw, position, oversize in iter_raw_lines(stream, max_line_bytes=max_line_bytes):
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
        first = True
        for number, text, position, oversize in iter_lines(stream, max_line_bytes=max_line_bytes):
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
