"""Reading and validating run logs and question sets (JSON Lines), streaming.

A run log (spec 000, recipe 4.1) is one JSON object per line. Its first line
may be a header naming the versions: {"assistant_version": ..., "set_version": ...}.
A question set is the same, with a {"set_version": ...} header.

A run log's header may also say how the run was made (spec 004, see RunPlan):
``repetitions``, how many times each question was asked (1 unless stated; each
line then says which ``attempt`` it is, from 1), ``timeout_s``, the limit an
attempt ran under (600 unless stated), and ``repeats``, the run it repeats.
An attempt that ended without an answer says so with ``status`` (error,
timeout, cancelled, refused_quota; ok unless stated), ``status_reason`` and
``stopped_at``; it is a result, and needs none of an answer's own fields.
Timestamps, latency_ms and tool_calls are checked by scoring.timing.

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
  REVIEWAPP_MAX_ANSWER_KB, 100 KB by default);
- an attempt from 1 to the header's repetitions, stated on every line when
  there are several; each attempt of a question once, and a question's
  attempts without gaps (1 and 3 without 2 is refused; 1 and 2 of 3 are not:
  the third was not run).

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

from scoring.timing import timing_errors

ANSWER_FIELDS = {
    "question_id": str,
    "language": str,
    "retrieved_ids": list,
    "retrieved_values": list,
    "answer": str,
    "cited_ids": list,
    "declined": bool,
}

_ANSWER_NAMES, _ANSWER_TYPES = tuple(ANSWER_FIELDS), tuple(ANSWER_FIELDS.values())

# An answer's own fields: a line whose status is not "ok" has no answer, and
# may leave them out (or give them empty or null).
ANSWER_CONTENT_FIELDS = frozenset({"retrieved_ids", "retrieved_values", "answer", "cited_ids", "declined"})

DEFAULT_REPETITIONS = 1
DEFAULT_TIMEOUT_S = 600
# Bounds that catch a slip (600 repetitions for a 600 s timeout) while leaving
# room for any real plan.
MAX_REPETITIONS = 100
MAX_TIMEOUT_S = 24 * 60 * 60
REPEATS_MAX_LENGTH = 200

QUESTION_FIELDS = {
    "question_id": str,
    "language": str,
    "expected_behaviour": str,
    "expected_values": list,
}

# Optional question fields and the types they may hold (None is always allowed).
QUESTION_OPTIONAL = {
    "question": str,
    # A reference answer in words, for the model graders that compare with one.
    "reference": str,
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
    # What ``line`` counts: a line of a text file, or, for a file that has no
    # lines to speak of (an Inspect log), its "sample" or "row".
    unit: str = "line"

    def __str__(self) -> str:
        # A problem of the whole file (unit "file") has no number to give.
        where = "the file" if self.unit == "file" else f"{self.unit} {self.line}"
        where += f", field {self.field}" if self.field else ""
        return f"{where}: {self.message}"

    def as_dict(self) -> dict:
        found = {"line": self.line, "field": self.field, "message": self.message}
        if self.unit != "line":
            found["unit"] = self.unit
        return found


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


HEADER_FIELDS = frozenset({"assistant_version", "set_version", "repetitions", "timeout_s", "repeats"})


def is_header(record: dict) -> bool:
    """A header names versions or the run's plan, and is not itself an answer
    or a question."""
    return "question_id" not in record and not HEADER_FIELDS.isdisjoint(record)


_NUMBER_TYPES = frozenset({int, float})
_STRING_TYPE = frozenset({str})


def _all_numbers(values: list) -> bool:
    # map(type) runs in C: this is on the path of every line of every run.
    return set(map(type, values)) <= _NUMBER_TYPES


def _all_strings(values: list) -> bool:
    return set(map(type, values)) <= _STRING_TYPE


def answer_errors(
    number: int, record: dict, *, repetitions: int = DEFAULT_REPETITIONS, moments: dict | None = None
) -> list[LineError]:
    """Everything wrong with one answer line (empty when it is valid), for a
    run whose header declares ``repetitions``.

    A line whose status is not "ok" (an error, timeout, cancellation or quota
    refusal) needs only question_id and language; the answer's own fields,
    when it gives them, still have their types. Timing and tool-call fields
    are checked by scoring.timing.timing_errors, which keeps the timestamps
    it parses in ``moments`` when given."""
    errors = []
    status = record.get("status")
    # An unknown status is timing_errors' to name; the line is not held to
    # an answer's fields on top of it.
    answered = status is None or status == "ok"
    # The usual line has every field with its type: one look in C says so.
    if not answered or tuple(map(type, map(record.get, _ANSWER_NAMES))) != _ANSWER_TYPES:
        for name, expected in ANSWER_FIELDS.items():
            value = record.get(name, _MISSING)
            if value is _MISSING or (value is None and not answered):
                if answered or name not in ANSWER_CONTENT_FIELDS:
                    errors.append(LineError(number, name, "missing"))
            elif type(value) is not expected:
                errors.append(LineError(number, name, _type_error(name, expected, value)))
    if attempt_error := _attempt_error(number, record.get("attempt", _MISSING), repetitions):
        errors.append(attempt_error)
    reason = record.get("status_reason")
    if reason is not None and type(reason) is not str:
        errors.append(LineError(number, "status_reason", _type_error("status_reason", str, reason)))
    errors.extend(LineError(number, field, message) for field, message in timing_errors(record, moments))
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
        if not _all_strings(record.get(name) or ()):
            errors.append(LineError(number, name, "must be a list of strings"))
    if not _all_numbers(record.get("retrieved_values") or ()):
        errors.append(LineError(number, "retrieved_values", "must be a list of numbers"))
    if "retrieved_records" in record:
        errors.extend(_record_errors(number, record["retrieved_records"]))
    return errors


def _attempt_error(number: int, attempt, repetitions: int) -> LineError | None:
    if attempt is _MISSING:
        if repetitions == 1:
            return None
        return LineError(
            number,
            "attempt",
            f"missing: the header declares {repetitions} repetitions, so every line says "
            f"which attempt it is, from 1 to {repetitions}",
        )
    if type(attempt) is int and 1 <= attempt <= repetitions:
        return None
    if repetitions == 1:
        wanted = (
            'must be 1: the header declares no repetitions (add "repetitions" to it to log more attempts)'
        )
    else:
        wanted = f"must be a whole number from 1 to {repetitions}, the header's repetitions"
    return LineError(number, "attempt", f"{wanted}, not {json.dumps(attempt)[:60]}")


def normalise_answer(record: dict) -> dict:
    """The valid answer line ``record``, given in place the fields later code
    relies on: ``attempt`` (1 when the line leaves it out) and ``status``
    ("ok" when it is left out or null). The answer's own fields are left as
    logged: a line whose status is not "ok" may lack them."""
    record.setdefault("attempt", 1)
    if record.get("status") is None:
        record["status"] = "ok"
    return record


_MISSING = object()


_TEXT_OR_NONE = frozenset({str, type(None)})
_RECORD_TEXTS = ("label", "period", "unit")


def _usual_record(record) -> bool:
    """True for a valid retrieved record, looked at in as few steps as can be."""
    if type(record) is not dict or type(record.get("id")) is not str:
        return False
    values, caveats = record.get("values", _NO_ITEMS), record.get("caveats", _NO_ITEMS)
    return (
        type(values) is list
        and type(caveats) is list
        and _all_numbers(values)
        and _all_strings(caveats)
        and set(map(type, map(record.get, _RECORD_TEXTS))) <= _TEXT_OR_NONE
    )


_NO_ITEMS: list = []


def _record_errors(number: int, records) -> list[LineError]:
    name = "retrieved_records"
    if type(records) is not list:
        return [LineError(number, name, _type_error(name, list, records))]
    if all(map(_usual_record, records)):
        return []
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
    number: int,
    raw: bytes,
    seen: AttemptBook | None = None,
    *,
    repetitions: int = DEFAULT_REPETITIONS,
    moments: dict | None = None,
) -> tuple[dict | None, list[LineError]]:
    """Parse and validate one line of a run log: (answer, []) or (None, errors).
    The answer is normalised (see normalise_answer): it always holds an int
    ``attempt`` and a ``status``.

    ``repetitions`` is the header's (see read_plan). ``seen``, when given,
    takes the place of ``repetitions`` with its own and records the line:
    an id outside its question set or an attempt answered twice is an error.
    ``moments`` receives the timestamps parsed (see timing.timing_errors).
    """
    if seen is not None:
        repetitions = seen.repetitions
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
    errors = answer_errors(number, record, repetitions=repetitions, moments=moments)
    if errors:
        return None, errors
    normalise_answer(record)
    if seen is not None and (error := seen.add(number, record["question_id"], record["attempt"])):
        return None, [error]
    return record, errors


class AttemptBook:
    """The line that gave each attempt of each question of a run log, and
    what only the whole file can tell: an attempt given twice, an id outside
    the question set (when ``question_ids`` are given) and a gap in a
    question's attempts.

    Attempts 1 are kept by question id alone, as many as a run has questions;
    later attempts, only in runs with repetitions, by (id, attempt)."""

    def __init__(self, *, repetitions: int = DEFAULT_REPETITIONS, question_ids: Iterable[str] | None = None):
        self.repetitions = repetitions
        self._checks_ids = question_ids is not None
        # 0 until the question's first attempt is seen.
        self._first: dict[str, int] = dict.fromkeys(question_ids or (), 0)
        self._later: dict[tuple[str, int], int] = {}

    def add(self, number: int, question_id: str, attempt: int) -> LineError | None:
        """Record that line ``number`` gives ``attempt`` of ``question_id``;
        the error, and nothing recorded, when it cannot."""
        line = self._first.get(question_id)
        if line is None and self._checks_ids:
            return LineError(number, "question_id", f"{question_id!r} is not in the question set")
        if attempt != 1:
            line = self._later.get((question_id, attempt))
        if line:
            if self.repetitions == 1:
                return LineError(number, "question_id", f"{question_id!r} already answered on line {line}")
            return LineError(
                number, "attempt", f"attempt {attempt} of {question_id!r} already given on line {line}"
            )
        if attempt == 1:
            self._first[question_id] = number
        else:
            self._later[(question_id, attempt)] = number
        return None

    def attempts(self, question_id: str) -> int:
        """How many attempts of ``question_id`` the file gives (after
        gap_errors found none, they are attempts 1 to this)."""
        later = sum((question_id, attempt) in self._later for attempt in range(2, self.repetitions + 1))
        return int(bool(self._first.get(question_id))) + later

    def gap_errors(self) -> list[LineError]:
        """One error for each question missing an attempt below one it has,
        on the line of the first attempt after the gap, naming the missing
        attempts and the lines of those given; in line order."""
        by_question: dict[str, dict[int, int]] = {}
        for (question_id, attempt), line in self._later.items():
            by_question.setdefault(question_id, {})[attempt] = line
        errors = []
        for question_id, given in by_question.items():
            if first := self._first.get(question_id):
                given[1] = first
            if len(given) == max(given):
                continue
            missing = [attempt for attempt in range(1, max(given)) if attempt not in given]
            after_gap = min(attempt for attempt in given if attempt > missing[0])
            lines = ", ".join(f"attempt {attempt} on line {given[attempt]}" for attempt in sorted(given))
            errors.append(
                LineError(
                    given[after_gap],
                    "attempt",
                    f"{question_id!r} has no attempt {_listed(missing)} ({lines}): "
                    "a question's attempts are numbered from 1 without gaps",
                )
            )
        return sorted(errors, key=lambda error: error.line)


def _listed(numbers: list[int]) -> str:
    if len(numbers) == 1:
        return str(numbers[0])
    return ", ".join(map(str, numbers[:-1])) + f" or {numbers[-1]}"


def _decode(raw: bytes) -> str | None:
    try:
        return raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return None


def question_errors(number: int, record: dict, *, answer_checked: bool = False) -> list[LineError]:
    """Everything wrong with one question line (empty when it is valid).
    ``answer_checked`` says the line is an answer of the combined form that
    answer_errors found valid: its id and language need no second look."""
    if answer_checked and QUESTION_OPTIONAL.keys().isdisjoint(record):
        # The usual line of the combined form: only the expected fields to look at.
        behaviour, values = record.get("expected_behaviour"), record.get("expected_values")
        usual = type(behaviour) is str and behaviour in BEHAVIOURS and type(values) is list
        if usual and _all_numbers(values):
            return []
    errors = []
    for name, expected in QUESTION_FIELDS.items():
        value = record.get(name, _MISSING)
        if value is _MISSING:
            errors.append(LineError(number, name, "missing"))
        elif type(value) is not expected and not isinstance(value, expected):
            errors.append(LineError(number, name, _type_error(name, expected, value)))
    for name, expected in QUESTION_OPTIONAL.items():
        value = record.get(name)
        if value is not None and type(value) is not expected and not isinstance(value, expected):
            errors.append(LineError(number, name, _type_error(name, expected, value)))
    if errors:
        return errors
    if not answer_checked:
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
    expected_values = record["expected_values"]
    if not _all_numbers(expected_values) and not all(_is_number(v) for v in expected_values):
        errors.append(LineError(number, "expected_values", "must be a list of numbers"))
    if record.get("split") is not None and record["split"] not in SPLITS:
        errors.append(LineError(number, "split", 'must be "tuning" or "sealed"'))
    caveats = record.get("expected_caveats") or []
    if not _all_strings(caveats) and not all(isinstance(c, str) for c in caveats):
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
    return _header_line(path)[1]


def _header_line(path: Path) -> tuple[int, dict]:
    with open(path, "rb") as stream:
        for number, text, _, _ in iter_lines(stream, max_line_bytes=HEADER_MAX_BYTES):
            record, _ = parse_object(number, text)
            return number, (record if record is not None and is_header(record) else {})
    return 1, {}


@dataclass(frozen=True, slots=True)
class RunPlan:
    """How a run was made, as its header declares (spec 004): each question
    asked ``repetitions`` times, each attempt stopped after ``timeout_s``
    seconds, and ``repeats``, the id of an earlier run this one repeats
    (a number or a text, as the header gives it; None when it repeats none)."""

    repetitions: int = DEFAULT_REPETITIONS
    timeout_s: int = DEFAULT_TIMEOUT_S
    repeats: int | str | None = None


def plan_from_header(header: dict, *, line: int = 1) -> tuple[RunPlan, list[LineError]]:
    """The plan a header (from read_header) declares, and the errors of its
    line ``line``. A field that is left out, null or wrong takes its default,
    so that the rest of the file can still be checked against it.

    Refuses repetitions other than a whole number from 1 to 100, timeout_s
    other than a whole number of seconds from 1 to 86400 (600.0 is taken as
    600), and repeats other than a positive whole number or a printable text
    of up to 200 characters."""
    errors = []
    repetitions = header.get("repetitions")
    if repetitions is None:
        repetitions = DEFAULT_REPETITIONS
    elif type(repetitions) is not int or not 1 <= repetitions <= MAX_REPETITIONS:
        errors.append(
            LineError(
                line,
                "repetitions",
                f"must be a whole number from 1 to {MAX_REPETITIONS}, not {json.dumps(repetitions)[:60]}",
            )
        )
        repetitions = DEFAULT_REPETITIONS
    timeout_s = header.get("timeout_s")
    if timeout_s is None:
        timeout_s = DEFAULT_TIMEOUT_S
    elif type(timeout_s) is float and timeout_s.is_integer():
        timeout_s = int(timeout_s)
    if type(timeout_s) is not int or not 1 <= timeout_s <= MAX_TIMEOUT_S:
        errors.append(
            LineError(
                line,
                "timeout_s",
                f"must be a whole number of seconds from 1 to {MAX_TIMEOUT_S}, "
                f"not {json.dumps(header['timeout_s'])[:60]}",
            )
        )
        timeout_s = DEFAULT_TIMEOUT_S
    repeats = header.get("repeats")
    if repeats is not None and (problem := _repeats_problem(repeats)):
        errors.append(LineError(line, "repeats", problem))
        repeats = None
    return RunPlan(repetitions=repetitions, timeout_s=timeout_s, repeats=repeats), errors


def _repeats_problem(repeats) -> str | None:
    if type(repeats) is int:
        # As large as a database's integer key can be.
        if 1 <= repeats < 2**63:
            return None
        return f"a run id is a positive whole number or a text, not {json.dumps(repeats)[:60]}"
    if type(repeats) is not str:
        return f"must be the id of the run repeated, a number or a text, not {json.dumps(repeats)[:60]}"
    if problem := _length_problem(repeats.strip(), REPEATS_MAX_LENGTH):
        return problem
    if not repeats.isprintable():
        bad = next(c for c in repeats if not c.isprintable())
        return f"{_shown(repeats)} holds {_character(bad)}; a run id is printable text"
    return None


def read_plan(path: Path) -> tuple[RunPlan, list[LineError]]:
    """The plan a run log's header declares (the defaults when it has no
    header), and the errors of the header's line (see plan_from_header)."""
    line, header = _header_line(path)
    return plan_from_header(header, line=line)


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
    Each record yielded is normalised (see normalise_answer).

    ``question_ids``, when given, are the ids the set version holds; any
    other id is an error, as is an attempt that appears twice or a gap in a
    question's attempts, and a header that declares a bad plan (see
    read_plan). ``progress`` hears the share done, from 0 to 1, over both
    passes. A line longer than ``max_line_bytes`` is an error.
    """
    # Validate in one streaming pass first, so that nothing is yielded from a
    # file that turns out to be bad further down.
    collector = ErrorCollector(max_errors)
    plan, header_errors = read_plan(path)
    collector.add(header_errors)
    book = AttemptBook(repetitions=plan.repetitions, question_ids=question_ids)
    answers = 0
    first_pass = (lambda share: progress(share / 2)) if progress else None
    for logged in _records(path, collector, first_pass, max_line_bytes=max_line_bytes):
        number, record = logged.line, logged.record
        errors = answer_errors(number, record, repetitions=plan.repetitions)
        if not errors:
            normalise_answer(record)
            if error := book.add(number, record["question_id"], record["attempt"]):
                errors.append(error)
        collector.add(errors)
        answers += 1
    collector.add(book.gap_errors())
    if not answers and not collector.total:
        collector.add([LineError(1, None, "the file holds no answers")])
    collector.raise_if_any()
    second_pass = (lambda share: progress(0.5 + share / 2)) if progress else None
    for logged in _records(path, collector, second_pass, max_line_bytes=max_line_bytes):
        normalise_answer(logged.record)
        yield logged


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
