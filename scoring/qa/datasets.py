"""QA datasets (spec 001): the column mapping, and reading a JSON Lines or
CSV dataset of open-ended or multiple-choice questions."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, fields
from pathlib import Path

from scoring.csvrows import csv_rows, listed_names, repeated_columns
from scoring.logfile import (
    ErrorCollector,
    LineError,
    encoding_problem,
    iter_lines,
    parse_object,
    question_id_problem,
)
from scoring.qa.prompts import FORMATS, MIN_OPTIONS, OPTION_LETTERS, TASKS, option_letter

MAX_LISTED_ERRORS = 200


class DatasetError(ValueError):
    """A dataset or run log that cannot be read at all: one sentence saying why."""


# --- Datasets ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Columns:
    """The dataset's column names for each field. ``options`` is one column
    holding a list (a JSON list in JSON Lines, a JSON list as text in CSV) or
    several columns holding one option each, in order. ``id`` None numbers
    the questions by their line; ``stratum`` None reports no strata."""

    question: str = "question"
    reference: str = "reference"
    options: tuple[str, ...] = ("options",)
    correct: str = "correct"
    id: str | None = "id"
    stratum: str | None = None

    def needed(self, *, task: str) -> list[tuple[str, str]]:
        """(field, column) for every column the task reads, in dataset order."""
        needed = [("id", self.id)] if self.id else []
        needed.append(("question", self.question))
        if task == "open":
            needed.append(("reference", self.reference))
        else:
            needed += [("options", column) for column in self.options]
            needed.append(("correct", self.correct))
        if self.stratum:
            needed.append(("stratum", self.stratum))
        return needed


COLUMN_KEYS = tuple(column.name for column in fields(Columns))


def parse_columns(text: str) -> Columns:
    """Columns from ``question=q,reference=ref,options=a+b+c,correct=answer,id=qid,stratum=topic``:
    any of the keys, the rest left at their defaults; several option columns
    joined by "+", and ``id=`` (empty) to number the questions by their line.

    Refuses (ValueError) an unknown key, a key given twice, a part without
    "=", and an empty column name other than id's.
    """
    given: dict[str, object] = {}
    for part in filter(None, (part.strip() for part in text.split(","))):
        key, equals, name = part.partition("=")
        key, name = key.strip(), name.strip()
        if not equals:
            raise ValueError(f'"{part}" is not key=column (keys: {", ".join(COLUMN_KEYS)})')
        if key not in COLUMN_KEYS:
            raise ValueError(f'"{key}" is not a column key; the keys are {", ".join(COLUMN_KEYS)}')
        if key in given:
            raise ValueError(f'the column key "{key}" is given twice')
        if key == "options":
            names = tuple(option.strip() for option in name.split("+"))
            if not all(names):
                raise ValueError(f'options=… names one column, or several joined by "+", not "{name}"')
            given[key] = names
        elif key == "id":
            given[key] = name or None
        elif not name:
            raise ValueError(f'the column key "{key}" needs a column name after "="')
        else:
            given[key] = name
    return Columns(**given)


@dataclass(frozen=True)
class Question:
    """One question of a dataset. ``correct`` is the correct option's
    position counted from 0; ``line`` is where the question starts in its file."""

    id: str
    line: int
    text: str
    reference: str | None = None
    options: tuple[str, ...] = ()
    correct: int | None = None
    stratum: str | None = None

    @property
    def correct_letter(self) -> str | None:
        return None if self.correct is None else option_letter(self.correct)


def read_dataset(
    path: str | Path,
    *,
    task: str,
    columns: Columns | None = None,
    correct_from: int = 0,
    file_format: str | None = None,
    max_errors: int = MAX_LISTED_ERRORS,
) -> list[Question]:
    """Every question of a dataset for ``task`` ("open" or "mc"), in file order.

    ``file_format`` is "jsonl" or "csv" (None: from the file's suffix, .jsonl,
    .ndjson or .csv). ``correct_from`` says whether the dataset counts option
    positions from 0 (the default) or from 1.

    Raises DatasetError for a file that is missing, not UTF-8 or of an
    unknown format, and LogFileError listing every bad line (the first
    ``max_errors``), each naming its line and column: a configured column
    missing (on the header line for CSV), an empty question, reference or
    stratum, an id given twice, fewer than 2 or more than 26 options, an
    empty option, and a correct position that is not a whole number within
    the options. ``columns`` None takes Columns' defaults. Refuses
    (ValueError) an unknown task, format or correct_from.
    """
    _check_task(task)
    columns = columns or Columns()
    if correct_from not in (0, 1):
        raise ValueError(
            f"correct_from is 0 or 1 (option positions counted from 0 or from 1), not {correct_from}"
        )
    path = Path(path)
    file_format = file_format or _format_from_suffix(path)
    if file_format not in FORMATS:
        raise ValueError(f'the format is "jsonl" or "csv", not {file_format!r}')
    collector = ErrorCollector(max_errors)
    rows = (
        _jsonl_rows(path, collector) if file_format == "jsonl" else _csv_rows(path, columns, task, collector)
    )
    questions: list[Question] = []
    first_line: dict[str, int] = {}
    for line, row in rows:
        question, errors = _question(line, row, task=task, columns=columns, correct_from=correct_from)
        if question is not None:
            if question.id in first_line:
                errors.append(
                    LineError(
                        line,
                        columns.id,
                        f"{question.id!r} is already the id on line {first_line[question.id]}",
                    )
                )
            else:
                first_line[question.id] = line
                questions.append(question)
        collector.add(errors)
    if not questions and not collector.total:
        collector.add([LineError(1, None, "the file holds no questions")])
    collector.raise_if_any()
    return questions


def _check_task(task: str) -> None:
    if task not in TASKS:
        raise ValueError(f'the task is "open" (open-ended) or "mc" (multiple choice), not {task!r}')


def _format_from_suffix(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix == ".csv":
        return "csv"
    raise DatasetError(f"{path}: the format cannot be told from the name: give it, jsonl or csv")


def _read_bytes(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except OSError as error:
        raise DatasetError(f"{path}: cannot be read ({error.strerror or error})") from None
    if problem := encoding_problem(data[:4096]):
        raise DatasetError(f"{path}: {problem}")
    return data


def _jsonl_rows(path: Path, collector: ErrorCollector) -> Iterator[tuple[int, dict]]:
    data = _read_bytes(path)
    for number, text, _, _ in iter_lines(io.BytesIO(data)):
        record, error = parse_object(number, text)
        if error:
            collector.add([error])
        else:
            yield number, record


def _csv_rows(
    path: Path, columns: Columns, task: str, collector: ErrorCollector
) -> Iterator[tuple[int, dict]]:
    data = _read_bytes(path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise DatasetError(f"{path}: line {line} is not UTF-8 text; save the file as UTF-8") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
    except csv.Error as error:
        raise DatasetError(f"{path}: line 1 is not CSV ({error})") from None
    if header is None:
        return
    header = [name.strip() for name in header]
    problems = repeated_columns(header)
    problems += [
        LineError(
            1, column, f"missing: the {role} column {column!r} is not in the header ({listed_names(header)})"
        )
        for role, column in columns.needed(task=task)
        if column not in header
    ]
    if problems:
        # Every row would repeat the header's problem: the header is the one
        # line to fix.
        collector.add(problems)
        return
    yield from csv_rows(reader, header, collector)


_MISSING = object()


def _question(
    line: int, row: dict, *, task: str, columns: Columns, correct_from: int
) -> tuple[Question | None, list[LineError]]:
    errors: list[LineError] = []

    def text_of(role: str, column: str, *, numbers: bool) -> str | None:
        value = row.get(column, _MISSING)
        if value is _MISSING:
            errors.append(
                LineError(line, column, f"missing: the {role} column {column!r} is not on this line")
            )
            return None
        shown = _as_text(value, numbers=numbers)
        if shown is None:
            kinds = "a text or a number" if numbers else "a text"
            errors.append(
                LineError(line, column, f"the {role} must be {kinds}, not {json.dumps(value)[:60]}")
            )
            return None
        if not shown.strip():
            errors.append(LineError(line, column, f"the {role} is empty"))
            return None
        return shown

    if columns.id:
        question_id = text_of("id", columns.id, numbers=True)
        if question_id is not None and (problem := question_id_problem(question_id)):
            errors.append(LineError(line, columns.id, problem))
    else:
        question_id = str(line)
    text = text_of("question", columns.question, numbers=False)
    reference = options = correct = None
    if task == "open":
        reference = text_of("reference", columns.reference, numbers=True)
    else:
        options = _options(line, row, columns.options, errors)
        correct = _correct(line, row, columns.correct, options, correct_from, errors)
    stratum = text_of("stratum", columns.stratum, numbers=True) if columns.stratum else None
    if errors:
        return None, errors
    return (
        Question(
            id=question_id,
            line=line,
            text=text,
            reference=reference,
            options=options or (),
            correct=correct,
            stratum=stratum,
        ),
        errors,
    )


def _as_text(value, *, numbers: bool) -> str | None:
    if isinstance(value, str):
        return value
    if numbers and isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def _options(line: int, row: dict, names: tuple[str, ...], errors: list[LineError]) -> tuple[str, ...] | None:
    if len(names) == 1:
        column = names[0]
        value = row.get(column, _MISSING)
        if value is _MISSING:
            errors.append(
                LineError(line, column, f"missing: the options column {column!r} is not on this line")
            )
            return None
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                errors.append(
                    LineError(line, column, 'the options must be a JSON list such as ["Lyon", "Paris"]')
                )
                return None
        if not isinstance(value, list):
            errors.append(
                LineError(line, column, f"the options must be a list, not {json.dumps(value)[:60]}")
            )
            return None
        options = []
        for position, option in enumerate(value, start=1):
            shown = _as_text(option, numbers=True)
            if shown is None or not shown.strip():
                errors.append(LineError(line, column, f"option {position} is empty or not a text"))
                return None
            options.append(shown)
    else:
        options = []
        blank_at = None
        for column in names:
            value = row.get(column, _MISSING)
            if value is _MISSING:
                errors.append(
                    LineError(line, column, f"missing: the options column {column!r} is not on this line")
                )
                return None
            shown = "" if value is None else _as_text(value, numbers=True)
            if shown is None:
                errors.append(
                    LineError(line, column, f"an option must be a text, not {json.dumps(value)[:60]}")
                )
                return None
            if not shown.strip():
                # Questions may have fewer options than there are columns:
                # the columns after the last option stay empty.
                blank_at = blank_at or column
                continue
            if blank_at:
                errors.append(
                    LineError(
                        line,
                        blank_at,
                        f"the option in {blank_at!r} is empty but {column!r} after it is not; "
                        "options fill the columns in order, empty ones only at the end",
                    )
                )
                return None
            options.append(shown)
        column = names[0]
    if len(options) < MIN_OPTIONS:
        errors.append(
            LineError(
                line, column, f"a multiple choice question needs at least 2 options, not {len(options)}"
            )
        )
        return None
    if len(options) > len(OPTION_LETTERS):
        errors.append(
            LineError(line, column, f"{len(options)} options are more than the 26 letters A to Z can label")
        )
        return None
    return tuple(options)


def _correct(
    line: int,
    row: dict,
    column: str,
    options: tuple[str, ...] | None,
    correct_from: int,
    errors: list[LineError],
) -> int | None:
    value = row.get(column, _MISSING)
    if value is _MISSING:
        errors.append(LineError(line, column, f"missing: the correct column {column!r} is not on this line"))
        return None
    if isinstance(value, str) and value.strip().isdigit() and value.strip().isascii():
        value = int(value.strip())
    if not isinstance(value, int) or isinstance(value, bool):
        errors.append(
            LineError(
                line,
                column,
                f"the correct option is given by its position, a whole number, not {json.dumps(value)[:60]}",
            )
        )
        return None
    if options is None:
        return None
    last = correct_from + len(options) - 1
    if not correct_from <= value <= last:
        other = 1 - correct_from
        errors.append(
            LineError(
                line,
                column,
                f"the correct position {value} is not one of the {len(options)} options' positions "
                f"{correct_from} to {last} (counting from {correct_from}; "
                f"say so if the file counts from {other})",
            )
        )
        return None
    return value - correct_from
