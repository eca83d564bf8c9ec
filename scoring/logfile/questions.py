"""Question lines: each line's checks, and reading a question set or the
questions of a log in the combined form."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from scoring.logfile.errors import ErrorCollector, LineError
from scoring.logfile.fields import (
    _MISSING,
    BEHAVIOURS,
    COMBINED_FIELDS,
    QUESTION_FIELDS,
    QUESTION_ID_MAX_LENGTH,
    QUESTION_OPTIONAL,
    QUESTION_TEXT_LIMITS,
    SPLITS,
    _all_numbers,
    _all_strings,
    _character,
    _is_number,
    _language_problem_cached,
    _length_problem,
    _type_error,
    language_problem,
    question_id_problem,
)
from scoring.logfile.followups import follow_up_declaration_problems
from scoring.logfile.header import _header_line
from scoring.logfile.lines import _records, is_header, iter_lines, parse_object

_REQUIRED_NAMES, _REQUIRED_TYPES = tuple(QUESTION_FIELDS), tuple(QUESTION_FIELDS.values())
_OPTIONAL_TEXTS = tuple(name for name, kind in QUESTION_OPTIONAL.items() if kind is str)
_TEXT_OR_NONE = frozenset({str, type(None)})
_LIMITED_TEXTS = tuple(QUESTION_TEXT_LIMITS.items())


def _usual_question(record: dict) -> bool:
    """True for a valid question line without a follow-up, looked at in as
    few steps as can be: a set of a million questions is read on every
    scoring. Anything else goes through every rule of question_errors,
    which names each problem (tests/scoring/test_typed_lines.py holds the
    two to the same verdict)."""
    if (
        tuple(map(type, map(record.get, _REQUIRED_NAMES))) != _REQUIRED_TYPES
        or not set(map(type, map(record.get, _OPTIONAL_TEXTS))) <= _TEXT_OR_NONE
        or record.get("follow_up") is not None
        or record["expected_behaviour"] not in BEHAVIOURS
        or not _all_numbers(record["expected_values"])
        or record.get("split") not in _SPLIT_OR_NONE
    ):
        return False
    caveats = record.get("expected_caveats")
    if caveats is not None and not (type(caveats) is list and _all_strings(caveats)):
        return False
    question_id = record["question_id"]
    if not (len(question_id) <= QUESTION_ID_MAX_LENGTH and question_id.isprintable() and question_id.strip()):
        return False
    if _language_problem_cached(record["language"]):
        return False
    for name, limit in _LIMITED_TEXTS:
        value = record.get(name)
        if value and len(value) > limit:
            return False
    return all(map(str.isprintable, filter(None, (record.get("stratum"), record.get("cluster")))))


_SPLIT_OR_NONE = (None, *SPLITS)


def question_errors(number: int, record: dict, *, answer_checked: bool = False) -> list[LineError]:
    """Everything wrong with one question line (empty when it is valid).
    ``answer_checked`` says the line is an answer of the combined form that
    answer_errors found valid: its id and language need no second look."""
    if not answer_checked and _usual_question(record):
        return []
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
    errors.extend(
        LineError(number, field, problem)
        for field, problem in follow_up_declaration_problems(record.get("follow_up"))
    )
    if not answer_checked:
        if problem := question_id_problem(record["question_id"]):
            errors.append(LineError(number, "question_id", problem))
        if problem := language_problem(record["language"]):
            errors.append(LineError(number, "language", problem))
    for name, limit in QUESTION_TEXT_LIMITS.items():
        value = record.get(name)
        if value and len(value) > limit:
            errors.append(LineError(number, name, _length_problem(value, limit)))
    for name in ("stratum", "cluster"):
        value = record.get(name)
        if value is not None and not value.isprintable():
            bad = next(c for c in value if not c.isprintable())
            errors.append(LineError(number, name, f"holds {_character(bad)}; a {name} is printable text"))
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


def header_follow_up(path: Path, collector: ErrorCollector) -> dict | None:
    """The follow-up a question set's header declares for every question,
    its problems to ``collector`` (then None)."""
    header_number, header = _header_line(path)
    set_follow_up = header.get("follow_up")
    if problems := follow_up_declaration_problems(set_follow_up):
        collector.add([LineError(header_number, field, problem) for field, problem in problems])
        return None
    return set_follow_up


def repeated_id_error(number: int, question_id: str, first_line: int) -> LineError:
    return LineError(number, "question_id", f"{question_id!r} already on line {first_line}")


def iter_questions(
    path: Path, collector: ErrorCollector, *, max_line_bytes: int | None = None, normalised: bool = True
) -> Iterator[dict]:
    """Yield every valid question of a question-set file, normalised; bad
    lines, lines over ``max_line_bytes`` and repeated ids go to ``collector``.
    A ``follow_up`` in the header is the set's: each question that declares
    none of its own is given it. Without ``normalised``, each valid line is
    yielded as it was read (scoring, which reads a few fields, spares the
    time)."""
    first_seen: dict[str, int] = {}
    set_follow_up = header_follow_up(path, collector)
    for logged in _records(path, collector, max_line_bytes=max_line_bytes):
        number, record = logged.line, logged.record
        errors = question_errors(number, record)
        if not errors:
            question_id = record["question_id"]
            if question_id in first_seen:
                errors.append(repeated_id_error(number, question_id, first_seen[question_id]))
            first_seen.setdefault(question_id, number)
        collector.add(errors)
        if not errors and not normalised:
            yield record
        elif not errors:
            question = normalise_question(record)
            if question["follow_up"] is None:
                question["follow_up"] = set_follow_up
            yield question
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
