"""Answer lines of a run log: each line's checks (fields, attempt, status,
timing, retrieved records), and reading a whole run log."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import orjson

from scoring.logfile.attempts import AttemptBook
from scoring.logfile.errors import ErrorCollector, LineError
from scoring.logfile.fields import (
    _ANSWER_NAMES,
    _ANSWER_TYPES,
    _MISSING,
    ANSWER_CONTENT_FIELDS,
    ANSWER_FIELDS,
    DEFAULT_REPETITIONS,
    QUESTION_ID_MAX_LENGTH,
    _all_numbers,
    _all_strings,
    _language_problem_cached,
    _nul_error,
    _type_error,
    question_id_problem,
)
from scoring.logfile.followups import follow_up_errors
from scoring.logfile.header import read_plan
from scoring.logfile.lines import LoggedLine, ProgressCallback, _decode, _records, parse_object
from scoring.logfile.typed import Absent, usual_line, usual_struct
from scoring.timing import timing_errors


def answer_errors(
    number: int,
    record: dict,
    *,
    repetitions: int = DEFAULT_REPETITIONS,
    repeats_a_run: bool = False,
    moments: dict | None = None,
) -> list[LineError]:
    """Everything wrong with one answer line (empty when it is valid), for a
    run whose header declares ``repetitions``.

    A line whose status is not "ok" (an error, timeout, cancellation or quota
    refusal) needs only question_id and language; the answer's own fields,
    when it gives them, still have their types. Timing and tool-call fields
    are checked by scoring.timing.timing_errors, which keeps the timestamps
    it parses in ``moments`` when given. ``repeats_attempt`` is refused
    unless ``repeats_a_run`` (the header names the run repeated)."""
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
    repeated = record.get("repeats_attempt")
    # A re-run has its own run ID (spec 004), its header's "repeats" naming
    # the run; the line names which attempt of that run it repeats, so the
    # failed attempt keeps its receipt there instead of being replaced.
    if repeated is not None and not (type(repeated) is int and repeated >= 1):
        errors.append(
            LineError(
                number,
                "repeats_attempt",
                "must be a whole number from 1, the attempt of the repeated run this line repeats, "
                f"not {json.dumps(repeated)[:60]}",
            )
        )
    elif repeated is not None and not repeats_a_run:
        errors.append(
            LineError(
                number,
                "repeats_attempt",
                "names an attempt of the run this one repeats, but the header names none: "
                'add "repeats" to it',
            )
        )
    reason = record.get("status_reason")
    if reason is not None and type(reason) is not str:
        errors.append(LineError(number, "status_reason", _type_error("status_reason", str, reason)))
    errors.extend(LineError(number, field, message) for field, message in timing_errors(record, moments))
    if "turns" in record or "follow_ups" in record:
        errors.extend(LineError(number, field, message) for field, message in follow_up_errors(record))
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
    repeats_a_run: bool = False,
    moments: dict | None = None,
) -> tuple[dict | None, list[LineError]]:
    """Parse and validate one line of a run log: (answer, []) or (None, errors).
    The answer is normalised (see normalise_answer): it always holds an int
    ``attempt`` and a ``status``.

    ``repetitions`` is the header's (see read_plan), and ``repeats_a_run``
    whether it names a run repeated (see answer_errors). ``seen``, when given,
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
    # The usual line is checked in C as it is converted to typed structs
    # (scoring.logfile.typed); any other goes through every rule below,
    # which names its problems.
    if (
        type(record) is dict
        and b"\\u0000" not in raw
        and (usual := usual_line(record, repetitions)) is not None
    ):
        normalise_answer(record)
        if moments is not None:
            moments.update(usual)
        if seen is not None and (error := seen.add(number, record["question_id"], record["attempt"])):
            return None, [error]
        return record, []
    if type(record) is not dict:
        # Not JSON, not an object, not UTF-8, or a byte-order mark: the slow
        # path tells which.
        record, error = parse_object(number, _decode(raw))
        if error:
            return None, [error]
    # A plain search first: the walk is for the rare line that may hold one.
    if b"\\u0000" in raw and (error := _nul_error(number, record)):
        return None, [error]
    errors = answer_errors(
        number, record, repetitions=repetitions, repeats_a_run=repeats_a_run, moments=moments
    )
    if errors:
        return None, errors
    normalise_answer(record)
    if seen is not None and (error := seen.add(number, record["question_id"], record["attempt"])):
        return None, [error]
    return record, errors


class StoredFields(NamedTuple):
    """What storing a run keeps of a valid answer line beside its text."""

    question_id: str
    attempt: int
    status: str
    language: str
    declined: bool
    repeats_attempt: object  # None unless the line repeats an attempt of another run
    record: dict | None  # the decoded line, to label its follow-ups; None for the usual line, which has none


def stored_fields(
    number: int, raw: bytes, seen: AttemptBook, *, repeats_a_run: bool = False
) -> tuple[StoredFields | None, list[LineError]]:
    """check_answer_line's verdict on line ``number`` of a run being stored,
    with the fields storing keeps: the usual line is decoded straight into
    its struct (typed.usual_struct), with no dict made, the rest checked by
    check_answer_line. The two agree on every line (tests/scoring/test_typed_lines.py)."""
    line = usual_struct(raw, seen.repetitions)
    if line is not None:
        attempt = 1 if type(line.attempt) is Absent else line.attempt
        if error := seen.add(number, line.question_id, attempt):
            return None, [error]
        return StoredFields(line.question_id, attempt, "ok", line.language, line.declined, None, None), []
    record, errors = check_answer_line(number, raw, seen, repeats_a_run=repeats_a_run)
    if errors:
        return None, errors
    return (
        StoredFields(
            record["question_id"],
            record["attempt"],
            record["status"],
            record["language"],
            # An attempt without an answer may leave declined out.
            record.get("declined") is True,
            record.get("repeats_attempt"),
            record,
        ),
        [],
    )


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
        errors = answer_errors(
            number, record, repetitions=plan.repetitions, repeats_a_run=plan.repeats is not None
        )
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
