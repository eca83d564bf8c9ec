"""A run log's answers, as the QA scorer reads them: each question's
attempts in order, with their status."""

from __future__ import annotations

import io
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from scoring.logfile import (
    ErrorCollector,
    LineError,
    is_header,
    iter_lines,
    parse_object,
    question_id_problem,
)
from scoring.qa.datasets import MAX_LISTED_ERRORS, _read_bytes

# Statuses of a graded trial besides a run log's own (error, timeout, ...).
OK = "ok"
NOT_ANSWERED = "not_answered"
VERDICT_ERROR = "verdict_error"


# --- Run logs ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoggedAnswer:
    """One attempt at a question, as a run log gives it. ``answer`` is None
    when the attempt ended without one (``status`` other than "ok")."""

    question_id: str
    attempt: int = 1
    status: str = OK
    answer: str | None = None
    reason: str | None = None
    line: int | None = None


def read_run_answers(
    path: str | Path, *, question_ids: Iterable[str] | None = None, max_errors: int = MAX_LISTED_ERRORS
) -> dict[str, list[LoggedAnswer]]:
    """Each question id's attempts in a run log (JSON Lines; a header on the
    first line is skipped), attempts in order.

    A line needs ``question_id`` and, unless its ``status`` says the attempt
    ended without one, ``answer``; ``attempt`` (from 1) and ``status`` ("ok")
    may be left out; other fields are ignored.

    Raises DatasetError for a file that is missing or not UTF-8, and
    LogFileError listing every bad line (the first ``max_errors``): not a JSON
    object, a field missing or of the wrong kind, an attempt given twice, and
    with ``question_ids`` an id the dataset does not hold.
    """
    path = Path(path)
    data = _read_bytes(path)
    known = None if question_ids is None else set(question_ids)
    collector = ErrorCollector(max_errors)
    by_question: dict[str, list[LoggedAnswer]] = {}
    seen: dict[tuple[str, int], int] = {}
    first = True
    for number, text, _, _ in iter_lines(io.BytesIO(data)):
        record, error = parse_object(number, text)
        if error:
            collector.add([error])
            first = False
            continue
        if first and is_header(record):
            first = False
            continue
        first = False
        answer, errors = _logged_answer(number, record)
        if answer is not None:
            key = (answer.question_id, answer.attempt)
            if known is not None and answer.question_id not in known:
                errors.append(
                    LineError(number, "question_id", f"{answer.question_id!r} is not in the dataset")
                )
            elif key in seen:
                errors.append(
                    LineError(
                        number,
                        "attempt",
                        f"attempt {answer.attempt} of {answer.question_id!r} is already on line {seen[key]}",
                    )
                )
            else:
                seen[key] = number
                by_question.setdefault(answer.question_id, []).append(answer)
        collector.add(errors)
    if not seen and not collector.total:
        collector.add([LineError(1, None, "the file holds no answers")])
    collector.raise_if_any()
    return {
        question_id: sorted(answers, key=lambda a: a.attempt) for question_id, answers in by_question.items()
    }


def _logged_answer(number: int, record: dict) -> tuple[LoggedAnswer | None, list[LineError]]:
    errors = []
    question_id = record.get("question_id")
    if not isinstance(question_id, str):
        errors.append(LineError(number, "question_id", _missing_or_kind(question_id, "a text")))
    elif problem := question_id_problem(question_id):
        errors.append(LineError(number, "question_id", problem))
    attempt = record.get("attempt", 1)
    if not isinstance(attempt, int) or isinstance(attempt, bool) or attempt < 1:
        errors.append(
            LineError(number, "attempt", f"must be a whole number from 1, not {json.dumps(attempt)[:60]}")
        )
    status = record.get("status")
    if status is None:
        status = OK
    elif not isinstance(status, str) or not status.strip():
        errors.append(
            LineError(
                number, "status", f"must be a text such as ok or timeout, not {json.dumps(status)[:60]}"
            )
        )
    answer = record.get("answer")
    # An attempt that ended without an answer may leave the answer out.
    if not isinstance(answer, str) and (status == OK or answer is not None):
        errors.append(LineError(number, "answer", _missing_or_kind(answer, "a text")))
    reason = record.get("status_reason")
    if errors:
        return None, errors
    return (
        LoggedAnswer(
            question_id=question_id,
            attempt=attempt,
            status=status,
            answer=answer,
            reason=reason if isinstance(reason, str) else None,
            line=number,
        ),
        errors,
    )


def _missing_or_kind(value, kind: str) -> str:
    return "missing" if value is None else f"must be {kind}, not {json.dumps(value)[:60]}"
