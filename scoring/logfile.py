"""Reading and validating run logs and question sets (JSON Lines), streaming.

A run log (spec 000, recipe 4.1) is one JSON object per line. Its first line
may be a header naming the versions: {"assistant_version": ..., "set_version": ...}.
A question set is the same, with a {"set_version": ...} header.

Readers never stop at the first problem: they report every bad line with its
number, the field and the reason, so a file can be fixed in one pass.

What a file may hold (each rule a line error naming the line and the field):

- a version label (assistant_version, set_version): 1 to 100 characters, ASCII
  letters, digits, ".", "_", "-" and "+", starting with a letter or a digit, so
  that it is safe in a URL and a file name; a question set's name the same,
  with spaces allowed inside;
- a question id: 1 to 200 printable characters (no control characters, tabs
  or line breaks), not only spaces;
- a language: a short code such as en, fr or pt-BR: two or three letters, then
  optional subtags of letters and digits after "-" or "_", 20 characters at most;
- a question's series and unit at most 200 characters, its period and stratum
  at most 100, the stratum printable;
- no string anywhere holding the NUL character (JSON "\u0000"): PostgreSQL
  cannot store it;
- no line longer than the limit the caller gives (the app passes
  REVIEWAPP_MAX_ANSWER_KB, 100 KB by default).

A file must be UTF-8 text: ``encoding_problem`` names a compressed, UTF-16 or
UTF-32 file from its first bytes.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson

ANSWER_FIELDS = {
    "question_id": str,
    "language": str,
    "retrieved_ids": list,
    "retrieved_values": list,
    "answer": str,
    "cited_ids": list,
    "declined": bool,
}

QUESTION_FIELDS = {
    "question_id": str,
    "language": str,
    "expected_behaviour": str,
    "expected_values": list,
}

# Optional question fields and the types they may hold (None is always allowed).
QUESTION_OPTIONAL = {
    "question": str,
    "expected_series": str,
    "expected_period": str,
    "expected_unit": str,
    "expected_caveats": list,
    "stratum": str,
    "split": str,
}

# Fields that mark a log in the spec's combined form, which carries the
# judgement (expected behaviour and values) beside each answer.
COMBINED_FIELDS = ("expected_behaviour", "expected_values")

BEHAVIOURS = ("answer", "decline")
SPLITS = ("tuning", "sealed")

RUN_FILE_NAME = re.compile(r"^answers_run_(?P<assistant_version>.+)_set-(?P<set_version>[^/]+)\.jsonl$")
SET_FILE_NAME = re.compile(r"^questions_set-(?P<set_version>[^/]+)\.jsonl$")

_TYPE_NAMES = {str: "a string", list: "a list", bool: "true or false", dict: "an object"}

LABEL_MAX_LENGTH = 100
SET_NAME_MAX_LENGTH = 100
QUESTION_ID_MAX_LENGTH = 200
LANGUAGE_MAX_LENGTH = 20
# The widest text each optional question field may hold, as the tables that
# keep them allow.
QUESTION_TEXT_LIMITS = {"expected_series": 200, "expected_unit": 200, "expected_period": 100, "stratum": 100}

_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+\-]*")
_LABEL_CHARACTER = re.compile(r"[A-Za-z0-9._+\-]")
_SET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._+\-]*")
_LANGUAGE = re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*")
_LABEL_RULE = "ASCII letters, digits, '.', '_', '-' and '+', starting with a letter or a digit"


def _shown(value: str) -> str:
    """A value quoted for a message, control characters escaped, cut short."""
    return json.dumps(value[:40], ensure_ascii=False) + ("…" if len(value) > 40 else "")


def _character(character: str) -> str:
    if character == "\x00":
        return "the NUL character (\\u0000)"
    if character == " ":
        return "a space"
    if not character.isprintable():
        return f"the control character U+{ord(character):04X}"
    return repr(character)


def _length_problem(value: str, limit: int) -> str | None:
    if not value:
        return "empty"
    if len(value) > limit:
        return f"{len(value)} characters long, more than the {limit} allowed"
    return None


def label_problem(value: str) -> str | None:
    """Why ``value`` cannot be a version label (None when it can): a label
    holds 1 to 100 ASCII letters, digits, '.', '_', '-' and '+', and starts
    with a letter or a digit."""
    if problem := _length_problem(value, LABEL_MAX_LENGTH):
        return problem
    if _LABEL.fullmatch(value):
        return None
    if not _LABEL_CHARACTER.match(value[0]) or value[0] in "._+-":
        return f"{_shown(value)} starts with {_character(value[0])}; a label starts with a letter or a digit"
    bad = next(c for c in value if not _LABEL_CHARACTER.match(c))
    return f"{_shown(value)} holds {_character(bad)}; a label holds only {_LABEL_RULE}"


def set_name_problem(value: str) -> str | None:
    """Why ``value`` cannot name a question set (None when it can): the rule
    of version labels, with spaces allowed inside."""
    if problem := _length_problem(value, SET_NAME_MAX_LENGTH):
        return problem
    if _SET_NAME.fullmatch(value) and not value.endswith(" "):
        return None
    bad = next((c for c in value if c != " " and not _LABEL_CHARACTER.match(c)), None)
    if bad is None:
        return (
            f"{_shown(value)} starts or ends with a space or a punctuation mark; "
            f"a set name holds {_LABEL_RULE}"
        )
    return f"{_shown(value)} holds {_character(bad)}; a set name holds only {_LABEL_RULE}, and spaces inside"


def question_id_problem(value: str) -> str | None:
    """Why ``value`` cannot be a question id (None when it can): 1 to 200
    printable characters, not only spaces."""
    if not value.strip():
        return "empty"
    if problem := _length_problem(value, QUESTION_ID_MAX_LENGTH):
        return problem
    if not value.isprintable():
        bad = next(c for c in value if not c.isprintable())
        return f"{_shown(value)} holds {_character(bad)}; an id holds only printable characters"
    return None


def language_problem(value: str) -> str | None:
    """Why ``value`` cannot be a language (None when it can): a short code
    such as en, fr or pt-BR, at most 20 characters."""
    if not value.strip():
        return "empty"
    if len(value) <= LANGUAGE_MAX_LENGTH and _LANGUAGE.fullmatch(value):
        return None
    return (
        f"{_shown(value)} is not a language code such as en, fr or pt-BR "
        f"(at most {LANGUAGE_MAX_LENGTH} characters)"
    )


# A run holds a handful of languages, each checked once.
_language_problem_cached = functools.lru_cache(maxsize=1024)(language_problem)

_NUL_ESCAPE = "\\u0000"


def holds_nul(value) -> bool:
    """True when a string anywhere in ``value`` (keys included) holds NUL."""
    if type(value) is str:
        return "\x00" in value
    if type(value) is dict:
        return any("\x00" in key or holds_nul(item) for key, item in value.items())
    if type(value) is list:
        return any(holds_nul(item) for item in value)
    return False


def _nul_error(number: int, record: dict) -> LineError | None:
    for name, value in record.items():
        if "\x00" in name or holds_nul(value):
            field = None if "\x00" in name else name
            return LineError(
                number, field, "holds the NUL character (\\u0000), which cannot be stored: remove it"
            )
    return None


def line_too_long(number: int, size: int, limit: int) -> LineError:
    """The error for a line of ``size`` bytes over the limit of ``limit``."""
    return LineError(
        number,
        None,
        f"the line is {_kilobytes(size)}, longer than the limit of {_kilobytes(limit)} a line "
        "(REVIEWAPP_MAX_ANSWER_KB)",
    )


def _kilobytes(size: int) -> str:
    return f"{size / 1024:,.0f} KB" if size >= 10 * 1024 else f"{size / 1024:,.1f} KB"


# First bytes of files that are not UTF-8 text, and what to do about them.
_COMPRESSED = (
    (b"\x1f\x8b", "gzip-compressed", "gunzip"),
    (b"PK\x03\x04", "a zip archive", "unzip"),
    (b"BZh", "bzip2-compressed", "bunzip2"),
    (b"\xfd7zXZ\x00", "xz-compressed", "unxz"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed", "unzstd"),
)


def encoding_problem(head: bytes) -> str | None:
    """Why a file whose first bytes are ``head`` is not UTF-8 JSON Lines
    (None when nothing says so): compressed, UTF-16 or UTF-32."""
    for magic, what, tool in _COMPRESSED:
        if head.startswith(magic):
            return f"this file is {what}: decompress it ({tool}) and upload the .jsonl inside"
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "this file is UTF-32: save it as UTF-8"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "this file is UTF-16: save it as UTF-8"
    # UTF-16 without a byte-order mark: ASCII text with a zero byte beside
    # each character. A stray NUL elsewhere is left to the line it is on.
    if b"\x00" in head and max(head[0::2].count(0), head[1::2].count(0)) > len(head) * 0.2:
        return "this file is UTF-16: save it as UTF-8"
    return None


@dataclass(frozen=True, slots=True)
class LineError:
    line: int
    field: str | None
    message: str

    def __str__(self) -> str:
        where = f"line {self.line}" + (f", field {self.field}" if self.field else "")
        return f"{where}: {self.message}"

    def as_dict(self) -> dict:
        return {"line": self.line, "field": self.field, "message": self.message}


class LogFileError(Exception):
    """A file that cannot be used; ``errors`` lists every problem found."""

    def __init__(self, errors: list[LineError], *, total: int | None = None):
        self.errors = errors
        self.total = len(errors) if total is None else total
        super().__init__("\n".join(str(error) for error in errors))


def _is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _type_error(field: str, expected: type, value) -> str:
    return f"{field} must be {_TYPE_NAMES[expected]}, not {json.dumps(value)[:60]}"


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


def is_header(record: dict) -> bool:
    """A header names versions and is not itself an answer or a question."""
    return "question_id" not in record and bool({"assistant_version", "set_version"} & record.keys())


_NUMBER_TYPES = frozenset({int, float})
_STRING_TYPE = frozenset({str})


def _all_numbers(values: list) -> bool:
    # map(type) runs in C: this is on the path of every line of every run.
    return set(map(type, values)) <= _NUMBER_TYPES


def _all_strings(values: list) -> bool:
    return set(map(type, values)) <= _STRING_TYPE


def answer_errors(number: int, record: dict) -> list[LineError]:
    """Everything wrong with one answer line (empty when it is valid)."""
    errors = []
    for name, expected in ANSWER_FIELDS.items():
        value = record.get(name, _MISSING)
        if value is _MISSING:
            errors.append(LineError(number, name, "missing"))
        elif type(value) is not expected:
            errors.append(LineError(number, name, _type_error(name, expected, value)))
    if errors:
        return errors
    # The usual id is short and printable: only an unusual one pays for the
    # full check, on this path of every line of every run.
    question_id = record["question_id"]
    if not (len(question_id) <= QUESTION_ID_MAX_LENGTH and question_id.isprintable() and question_id.strip()):
        errors.append(LineError(number, "question_id", question_id_problem(question_id)))
    if problem := _language_problem_cached(record["language"]):
        errors.append(LineError(number, "language", problem))
    for name in ("retrieved_ids", "cited_ids"):
        if not _all_strings(record[name]):
            errors.append(LineError(number, name, "must be a list of strings"))
    if not _all_numbers(record["retrieved_values"]):
        errors.append(LineError(number, "retrieved_values", "must be a list of numbers"))
    if "retrieved_records" in record:
        errors.extend(_record_errors(number, record["retrieved_records"]))
    return errors


_MISSING = object()


def _record_errors(number: int, records) -> list[LineError]:
    name = "retrieved_records"
    if type(records) is not list:
        return [LineError(number, name, _type_error(name, list, records))]
    errors = []
    for index, record in enumerate(records):
        where = f"{name}[{index}]"
        if type(record) is not dict:
            errors.append(LineError(number, where, "must be an object"))
            continue
        if type(record.get("id")) is not str:
            errors.append(LineError(number, f"{where}.id", "missing or not a string"))
        values = record.get("values", [])
        if type(values) is not list or not _all_numbers(values):
            errors.append(LineError(number, f"{where}.values", "must be a list of numbers"))
        caveats = record.get("caveats", [])
        if type(caveats) is not list or not _all_strings(caveats):
            errors.append(LineError(number, f"{where}.caveats", "must be a list of strings"))
        for text_field in ("label", "period", "unit"):
            value = record.get(text_field)
            if value is not None and type(value) is not str:
                errors.append(LineError(number, f"{where}.{text_field}", "must be a string"))
    return errors


def check_answer_line(
    number: int, raw: bytes, seen: dict[str, int] | None = None
) -> tuple[dict | None, list[LineError]]:
    """Parse and validate one line of a run log: (answer, []) or (None, errors).

    ``seen`` maps each question id of the set to the line that answered it
    (0 for none yet); with it, an unknown id or one answered twice is an
    error, and the line is recorded.
    """
    try:
        # orjson reads bytes and refuses bad UTF-8; parse_object then says
        # which of the two went wrong.
        record = orjson.loads(raw)
    except orjson.JSONDecodeError:
        record = None
    if type(record) is not dict:
        # Not JSON, not an object, not UTF-8, or a byte-order mark: the slow
        # path tells which.
        record, error = parse_object(number, _decode(raw))
        if error:
            return None, [error]
    # A plain search first: the walk is for the rare line that may hold one.
    if b"\\u0000" in raw and (error := _nul_error(number, record)):
        return None, [error]
    errors = answer_errors(number, record)
    if errors or seen is None:
        return (None, errors) if errors else (record, errors)
    question_id = record["question_id"]
    line = seen.get(question_id)
    if line is None:
        return None, [LineError(number, "question_id", f"{question_id!r} is not in the question set")]
    if line:
        return None, [LineError(number, "question_id", f"{question_id!r} already answered on line {line}")]
    seen[question_id] = number
    return record, errors


def _decode(raw: bytes) -> str | None:
    try:
        return raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return None


def question_errors(number: int, record: dict) -> list[LineError]:
    """Everything wrong with one question line (empty when it is valid)."""
    errors = []
    for name, expected in QUESTION_FIELDS.items():
        if name not in record:
            errors.append(LineError(number, name, "missing"))
        elif not isinstance(record[name], expected):
            errors.append(LineError(number, name, _type_error(name, expected, record[name])))
    for name, expected in QUESTION_OPTIONAL.items():
        value = record.get(name)
        if value is not None and not isinstance(value, expected):
            errors.append(LineError(number, name, _type_error(name, expected, value)))
    if errors:
        return errors
    if problem := question_id_problem(record["question_id"]):
        errors.append(LineError(number, "question_id", problem))
    if problem := language_problem(record["language"]):
        errors.append(LineError(number, "language", problem))
    for name, limit in QUESTION_TEXT_LIMITS.items():
        value = record.get(name)
        if value and len(value) > limit:
            errors.append(LineError(number, name, _length_problem(value, limit)))
    stratum = record.get("stratum")
    if stratum is not None and not stratum.isprintable():
        bad = next(c for c in stratum if not c.isprintable())
        errors.append(LineError(number, "stratum", f"holds {_character(bad)}; a stratum is printable text"))
    if record["expected_behaviour"] not in BEHAVIOURS:
        errors.append(LineError(number, "expected_behaviour", 'must be "answer" or "decline"'))
    if not all(_is_number(v) for v in record["expected_values"]):
        errors.append(LineError(number, "expected_values", "must be a list of numbers"))
    if record.get("split") is not None and record["split"] not in SPLITS:
        errors.append(LineError(number, "split", 'must be "tuning" or "sealed"'))
    caveats = record.get("expected_caveats") or []
    if not all(isinstance(c, str) for c in caveats):
        errors.append(LineError(number, "expected_caveats", "must be a list of strings"))
    return errors


def normalise_question(record: dict) -> dict:
    """The question with every optional field present (None or [] when absent)."""
    question = {name: record[name] for name in QUESTION_FIELDS}
    question["expected_values"] = [float(v) for v in record["expected_values"]]
    for name in QUESTION_OPTIONAL:
        question[name] = record.get(name)
    question["expected_caveats"] = list(record.get("expected_caveats") or [])
    question["question"] = record.get("question") or ""
    question["split"] = record.get("split") or "tuning"
    return question


class ErrorCollector:
    """Keeps the first ``limit`` errors and counts them all."""

    def __init__(self, limit: int):
        self.limit = limit
        self.errors: list[LineError] = []
        self.total = 0

    def add(self, errors: Iterable[LineError]) -> None:
        for error in errors:
            self.total += 1
            if len(self.errors) < self.limit:
                self.errors.append(error)

    def raise_if_any(self) -> None:
        if self.total:
            raise LogFileError(self.errors, total=self.total)


# A header line is short; a longer first line is an answer or a mistake.
HEADER_MAX_BYTES = 64 * 1024


def read_header(path: Path) -> dict:
    """The header of a file ({} when its first line is not a header)."""
    with open(path, "rb") as stream:
        for number, text, _, _ in iter_lines(stream, max_line_bytes=HEADER_MAX_BYTES):
            record, _ = parse_object(number, text)
            return record if record is not None and is_header(record) else {}
    return {}


def read_answers(
    path: Path,
    *,
    question_ids: set[str] | None = None,
    max_errors: int = 200,
    progress: ProgressCallback | None = None,
    max_line_bytes: int | None = None,
) -> Iterator[LoggedLine]:
    """Yield every answer of a run log, after validating the whole file;
    raise LogFileError listing the bad lines (the first ``max_errors``).

    ``question_ids``, when given, are the ids the set version holds; any
    other id is an error, as is an id that appears twice. ``progress`` hears
    the share done, from 0 to 1, over both passes. A line longer than
    ``max_line_bytes`` is an error.
    """
    # Validate in one streaming pass first, so that nothing is yielded from a
    # file that turns out to be bad further down.
    collector = ErrorCollector(max_errors)
    first_seen: dict[str, int] = {}
    answers = 0
    first_pass = (lambda share: progress(share / 2)) if progress else None
    for logged in _records(path, collector, first_pass, max_line_bytes=max_line_bytes):
        number, record = logged.line, logged.record
        errors = answer_errors(number, record)
        if not errors:
            question_id = record["question_id"]
            if question_ids is not None and question_id not in question_ids:
                errors.append(LineError(number, "question_id", f"{question_id!r} is not in the question set"))
            if question_id in first_seen:
                errors.append(
                    LineError(
                        number,
                        "question_id",
                        f"{question_id!r} already answered on line {first_seen[question_id]}",
                    )
                )
            else:
                first_seen[question_id] = number
        collector.add(errors)
        answers += 1
    if not answers and not collector.total:
        collector.add([LineError(1, None, "the file holds no answers")])
    collector.raise_if_any()
    second_pass = (lambda share: progress(0.5 + share / 2)) if progress else None
    yield from _records(path, collector, second_pass, max_line_bytes=max_line_bytes)


def iter_questions(
    path: Path, collector: ErrorCollector, *, max_line_bytes: int | None = None
) -> Iterator[dict]:
    """Yield every valid question of a question-set file, normalised; bad
    lines, lines over ``max_line_bytes`` and repeated ids go to ``collector``."""
    first_seen: dict[str, int] = {}
    for logged in _records(path, collector, max_line_bytes=max_line_bytes):
        number, record = logged.line, logged.record
        errors = question_errors(number, record)
        if not errors:
            question_id = record["question_id"]
            if question_id in first_seen:
                errors.append(
                    LineError(
                        number,
                        "question_id",
                        f"{question_id!r} already on line {first_seen[question_id]}",
                    )
                )
            first_seen.setdefault(question_id, number)
        collector.add(errors)
        if not errors:
            yield normalise_question(record)
    if not first_seen and not collector.total:
        collector.add([LineError(1, None, "the file holds no questions")])


def validate_questions(path: Path, *, max_errors: int = 200, max_line_bytes: int | None = None) -> int:
    """The number of questions in a question-set file; raise LogFileError
    listing the bad lines. Reads the file without keeping it."""
    collector = ErrorCollector(max_errors)
    count = sum(1 for _ in iter_questions(path, collector, max_line_bytes=max_line_bytes))
    collector.raise_if_any()
    return count


def read_questions(path: Path, *, max_errors: int = 200, max_line_bytes: int | None = None) -> list[dict]:
    """Every question of a question-set file, normalised; raise LogFileError
    listing the bad lines."""
    collector = ErrorCollector(max_errors)
    questions = list(iter_questions(path, collector, max_line_bytes=max_line_bytes))
    collector.raise_if_any()
    return questions


def questions_from_combined(
    path: Path, *, max_errors: int = 200, max_line_bytes: int | None = None
) -> list[dict]:
    """Questions taken from a log in the combined form, whose answers carry
    expected_behaviour and expected_values (and optionally question text).
    Each holds only the fields the log states."""
    collector = ErrorCollector(max_errors)
    questions: dict[str, dict] = {}
    for logged in _records(path, collector, max_line_bytes=max_line_bytes):
        errors = question_errors(logged.line, logged.record)
        collector.add(errors)
        record = logged.record
        if not errors:
            given = normalise_question(record)
            # Only what the log states: a revision keeps the rest (question
            # text, series, caveats) from the version it revises.
            questions.setdefault(
                record["question_id"],
                {name: value for name, value in given.items() if name in QUESTION_FIELDS or name in record},
            )
    collector.raise_if_any()
    return list(questions.values())


def is_combined_form(path: Path, *, max_line_bytes: int | None = None) -> bool:
    """True when the log's first answer carries expected values (spec's combined form)."""
    with open(path, "rb") as stream:
        for number, text, _, _ in iter_lines(stream, max_line_bytes=max_line_bytes):
            record, _ = parse_object(number, text)
            if record is None or is_header(record):
                continue
            return any(name in record for name in COMBINED_FIELDS)
    return False


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
