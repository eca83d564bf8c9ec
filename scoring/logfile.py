"""Reading and validating run logs and question sets (JSON Lines), streaming.

A run log (spec 000, recipe 4.1) is one JSON object per line. Its first line
may be a header naming the versions: {"assistant_version": ..., "set_version": ...}.
A question set is the same, with a {"set_version": ...} header.

Readers never stop at the first problem: they report every bad line with its
number, the field and the reason, so a file can be fixed in one pass.
"""

from __future__ import annotations

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


def iter_lines(stream) -> Iterator[tuple[int, str | None, int]]:
    """Yield (line number, text, bytes read so far) for each non-blank line of
    a binary stream. Text is None for a line that is not UTF-8; lines are
    numbered from 1."""
    position = 0
    for number, raw in enumerate(stream, start=1):
        position += len(raw)
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            yield number, None, position
            continue
        if text.strip():
            yield number, text.rstrip("\r\n"), position


def parse_object(number: int, text: str | None) -> tuple[dict | None, LineError | None]:
    if text is None:
        return None, LineError(number, None, "not UTF-8 text")
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as error:
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
    if not record["question_id"].strip():
        errors.append(LineError(number, "question_id", "empty"))
    if not record["language"].strip():
        errors.append(LineError(number, "language", "empty"))
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
    if not record["question_id"].strip():
        errors.append(LineError(number, "question_id", "empty"))
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


def read_header(path: Path) -> dict:
    """The header of a file ({} when its first line is not a header)."""
    with open(path, "rb") as stream:
        for number, text, _ in iter_lines(stream):
            record, _ = parse_object(number, text)
            return record if record is not None and is_header(record) else {}
    return {}


def read_answers(
    path: Path,
    *,
    question_ids: set[str] | None = None,
    max_errors: int = 200,
    progress: ProgressCallback | None = None,
) -> Iterator[LoggedLine]:
    """Yield every answer of a run log, after validating the whole file;
    raise LogFileError listing the bad lines (the first ``max_errors``).

    ``question_ids``, when given, are the ids the set version holds; any
    other id is an error, as is an id that appears twice. ``progress`` hears
    the share done, from 0 to 1, over both passes.
    """
    # Validate in one streaming pass first, so that nothing is yielded from a
    # file that turns out to be bad further down.
    collector = ErrorCollector(max_errors)
    first_seen: dict[str, int] = {}
    answers = 0
    first_pass = (lambda share: progress(share / 2)) if progress else None
    for logged in _records(path, collector, first_pass):
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
    yield from _records(path, collector, second_pass)


def iter_questions(path: Path, collector: ErrorCollector) -> Iterator[dict]:
    """Yield every valid question of a question-set file, normalised; bad
    lines and repeated ids go to ``collector``."""
    first_seen: dict[str, int] = {}
    for logged in _records(path, collector):
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


def validate_questions(path: Path, *, max_errors: int = 200) -> int:
    """The number of questions in a question-set file; raise LogFileError
    listing the bad lines. Reads the file without keeping it."""
    collector = ErrorCollector(max_errors)
    count = sum(1 for _ in iter_questions(path, collector))
    collector.raise_if_any()
    return count


def read_questions(path: Path, *, max_errors: int = 200) -> list[dict]:
    """Every question of a question-set file, normalised; raise LogFileError
    listing the bad lines."""
    collector = ErrorCollector(max_errors)
    questions = list(iter_questions(path, collector))
    collector.raise_if_any()
    return questions


def questions_from_combined(path: Path, *, max_errors: int = 200) -> list[dict]:
    """Questions taken from a log in the combined form, whose answers carry
    expected_behaviour and expected_values (and optionally question text).
    Each holds only the fields the log states."""
    collector = ErrorCollector(max_errors)
    questions: dict[str, dict] = {}
    for logged in _records(path, collector):
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


def is_combined_form(path: Path) -> bool:
    """True when the log's first answer carries expected values (spec's combined form)."""
    with open(path, "rb") as stream:
        for number, text, _ in iter_lines(stream):
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
    path: Path, collector: ErrorCollector, progress: ProgressCallback | None = None
) -> Iterator[LoggedLine]:
    """The objects of a file, skipping a header on its first line; lines that
    are not JSON objects go to the collector. ``progress`` hears the share of
    the file read, every few thousand lines."""
    size = max(path.stat().st_size, 1)
    with open(path, "rb") as stream:
        first = True
        for number, text, position in iter_lines(stream):
            if progress and number % 5000 == 0:
                progress(position / size)
            record, error = parse_object(number, text)
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
