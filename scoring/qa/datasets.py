"""QA datasets (spec 001): the column mapping, and reading a JSON Lines or
CSV dataset of open-ended or multiple-choice questions."""

from __future__ import annotations

import csv
import io
import itertools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, fields, replace
from pathlib import Path

from scoring.csvrows import csv_rows, header_of, listed_names, repeated_columns
from scoring.fieldpath import MISSING, find, kind, parse_container, root
from scoring.jsonarray import JsonArrayError, read_json_array
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
    """The dataset's column names for each field, each a key or a path into
    nested fields (``question.stem``, ``question.choices[].text``, see
    scoring.fieldpath). ``options`` is one column holding a list, a mapping
    letter -> text, or a list of {text, label} objects (in CSV as JSON or a
    Python literal), or several columns holding one option each, in order;
    empty, it is "options" when there is such a column, else the columns
    named A, B, C, ... in order (an MMLU file). ``id`` None numbers the
    questions by their line; ``stratum`` None reports no strata."""

    question: str = "question"
    reference: str = "reference"
    options: tuple[str, ...] = ()
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
            needed += [("options", column) for column in self.options or (DEFAULT_OPTIONS,)]
            needed.append(("correct", self.correct))
        if self.stratum:
            needed.append(("stratum", self.stratum))
        return needed


COLUMN_KEYS = tuple(column.name for column in fields(Columns))
DEFAULT_OPTIONS = "options"


def detected_options(names) -> tuple[str, ...]:
    """The option columns of a record or header that ``Columns.options``
    leaves to be found: "options" when it is there, else A, B, C, ... (at
    least two, in order, as MMLU names them); () when neither is."""
    present = set(names)
    if DEFAULT_OPTIONS in present:
        return (DEFAULT_OPTIONS,)
    letters = tuple(itertools.takewhile(present.__contains__, OPTION_LETTERS))
    return letters if len(letters) >= MIN_OPTIONS else ()


def parse_columns(text: str) -> Columns:
    """Columns from ``question=q,reference=ref,options=a+b+c,correct=answer,id=qid,stratum=topic``:
    any of the keys, the rest left at their defaults; several option columns
    joined by "+" or by commas (``options=A,B,C,D``), and ``id=`` (empty) to
    number the questions by their line. A column may be a path into nested
    fields: ``question=question.stem``.

    Refuses (ValueError) an unknown key, a key given twice, a part without
    "=" (other than an option column after options=), and an empty column
    name other than id's.
    """
    given: dict[str, object] = {}
    for part in filter(None, (part.strip() for part in text.split(","))):
        key, equals, name = part.partition("=")
        key, name = key.strip(), name.strip()
        if not equals and isinstance(given.get("options"), tuple) and list(given)[-1] == "options":
            given["options"] += tuple(option.strip() for option in part.split("+"))
            continue
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

    ``file_format`` is "jsonl", "json" (one JSON array of objects, as Ragas'
    repository keeps its datasets; problems are named by item, counted from
    1) or "csv" (None: from the file's suffix, .jsonl, .ndjson, .json or
    .csv). ``correct_from`` says whether the dataset counts option positions
    from 0 (the default) or from 1. The correct option is its position, its
    letter (A to Z, any case; the file's own label when the options carry
    labels) or its text; a digit that is no position ("18" of four options)
    is read as the text.

    Raises DatasetError for a file that is missing, not UTF-8, of an unknown
    format, or a JSON array over scoring.jsonarray.MAX_JSON_ARRAY_BYTES (64 MB)
    or that is not one;
    and LogFileError listing every bad line (the first ``max_errors``), each
    naming its line and column: a configured column missing (on the header
    line for CSV, saying which part of a path is not there), a CSV whose
    first line seems to be data rather than a header, an empty question,
    reference or stratum, an id given twice, fewer than 2 or more than 26
    options, an empty option, a correct option that names none of the
    options, and a digit that is one option's position and another's text
    (options that are numbers: say it by letter or by --correct-from).
    ``columns`` None takes Columns' defaults. Refuses (ValueError) an
    unknown task, format or correct_from.
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
        raise ValueError(f'the format is "jsonl", "json" or "csv", not {file_format!r}')
    collector = ErrorCollector(max_errors)
    unit = "item" if file_format == "json" else "line"
    if file_format == "jsonl":
        rows = _jsonl_rows(path, collector)
    elif file_format == "json":
        rows = _json_array_rows(path, collector)
    else:
        rows = _csv_rows(path, columns, task, collector)
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
                        f"{question.id!r} is already the id on {unit} {first_line[question.id]}",
                    )
                )
            else:
                first_line[question.id] = line
                questions.append(question)
        collector.add(replace(error, unit=unit) for error in errors)
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
    if suffix in (".json", ".csv"):
        return suffix[1:]
    raise DatasetError(f"{path}: the format cannot be told from the name: give it, jsonl, json or csv")


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


def _json_array_rows(path: Path, collector: ErrorCollector) -> Iterator[tuple[int, dict]]:
    try:
        items = read_json_array(path)
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except OSError as error:
        raise DatasetError(f"{path}: cannot be read ({error.strerror or error})") from None
    except JsonArrayError as error:
        raise DatasetError(f"{path}: {error}") from None
    for number, record in enumerate(items, start=1):
        if isinstance(record, dict):
            yield number, record
        else:
            collector.add([LineError(number, None, f"not a JSON object but {kind(record)}", unit="item")])


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
        first = next(reader, None)
    except csv.Error as error:
        raise DatasetError(f"{path}: line 1 is not CSV ({error})") from None
    if first is None:
        return
    if task == "mc" and not columns.options:
        found = detected_options(name.strip() for name in first)
        columns = replace(columns, options=found or (DEFAULT_OPTIONS,))
    roots = [(role, column, root(column)) for role, column in columns.needed(task=task)]
    header, data, problem = header_of(
        first, [name for _, _, name in roots], example=_positional_example(task, len(first))
    )
    if data:
        # No header: the mapping names the columns by position, and the
        # first line is a row like the others.
        yield 1, dict(zip(header, first, strict=True))
        yield from csv_rows(reader, header, collector)
        return
    problems = repeated_columns(header)
    if problem:
        problems.append(problem)
    else:
        problems += [
            LineError(
                1,
                column,
                f"missing: the {role} column {name!r} is not in the header ({listed_names(header)})",
            )
            for role, column, name in roots
            if name not in header
        ]
    if problems:
        # Every row would repeat the header's problem: the header is the one
        # line to fix.
        collector.add(problems)
        return
    yield from csv_rows(reader, header, collector)


def _positional_example(task: str, width: int) -> str:
    if task == "open" or width < 4:
        return "--columns id=,question=col1,reference=col2"
    options = "+".join(f"col{number}" for number in range(2, width))
    return f"--columns id=,question=col1,options={options},correct=col{width}"


def _question(
    line: int, row: dict, *, task: str, columns: Columns, correct_from: int
) -> tuple[Question | None, list[LineError]]:
    errors: list[LineError] = []

    def value_of(role: str, column: str):
        value, problem = find(row, column)
        if value is MISSING:
            if root(column) in row:
                errors.append(LineError(line, column, f"missing: {problem}"))
            else:
                errors.append(
                    LineError(line, column, f"missing: the {role} column {column!r} is not on this line")
                )
        return value

    def text_of(role: str, column: str, *, numbers: bool) -> str | None:
        value = value_of(role, column)
        if value is MISSING:
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
        names = columns.options or detected_options(row) or (DEFAULT_OPTIONS,)
        values = [value_of("options", name) for name in names]
        options, labels = (None, None) if MISSING in values else read_options(line, names, values, errors)
        correct_value = value_of("correct", columns.correct)
        if correct_value is not MISSING:
            correct = _correct(line, columns.correct, correct_value, options, labels, correct_from, errors)
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


# A letter as answer keys write it: "B", "b", "(B)", "B." or "B)".
_LETTER = re.compile(r"\(?([A-Za-z])[.)]?")

_OPTIONS_SHAPE = (
    'the options must be a list such as ["Lyon", "Paris"], an object such as {"A": "Lyon", "B": "Paris"} '
    'or a list of {"text": ..., "label": ...}'
)


def read_options(
    line: int, names: tuple[str, ...], values: list, errors: list[LineError]
) -> tuple[tuple[str, ...] | None, tuple[str, ...] | None]:
    """(the options' texts, their labels when the file gives its own) from
    the options columns' ``values``; (None, None) after an error."""
    column = names[0]
    labels = None
    if len(names) == 1:
        value = values[0]
        if isinstance(value, str):
            value = parse_container(value)
        if isinstance(value, dict) and isinstance(value.get("text"), list):
            # Hugging Face's choices: {"text": [...], "label": [...]}.
            given = value.get("label")
            labels = given if isinstance(given, list) and len(given) == len(value["text"]) else None
            value = value["text"]
        elif isinstance(value, dict):
            labels, value = list(value), list(value.values())
        elif isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
            if not all("text" in item for item in value):
                errors.append(LineError(line, column, f'{_OPTIONS_SHAPE}: an object has no "text"'))
                return None, None
            if all("label" in item for item in value):
                labels = [item["label"] for item in value]
            value = [item["text"] for item in value]
        if not isinstance(value, list):
            shown = json.dumps(value)[:60] if not isinstance(value, str) else json.dumps(value[:60])
            errors.append(LineError(line, column, f"{_OPTIONS_SHAPE}, not {shown}"))
            return None, None
        options = []
        for position, option in enumerate(value, start=1):
            shown = _as_text(option, numbers=True)
            if shown is None or not shown.strip():
                errors.append(LineError(line, column, f"option {position} is empty or not a text"))
                return None, None
            options.append(shown)
    else:
        options = []
        blank_at = None
        for name, value in zip(names, values, strict=True):
            shown = "" if value is None else _as_text(value, numbers=True)
            if shown is None:
                errors.append(
                    LineError(line, name, f"an option must be a text, not {json.dumps(value)[:60]}")
                )
                return None, None
            if not shown.strip():
                # Questions may have fewer options than there are columns:
                # the columns after the last option stay empty.
                blank_at = blank_at or name
                continue
            if blank_at:
                errors.append(
                    LineError(
                        line,
                        blank_at,
                        f"the option in {blank_at!r} is empty but {name!r} after it is not; "
                        "options fill the columns in order, empty ones only at the end",
                    )
                )
                return None, None
            options.append(shown)
    if len(options) < MIN_OPTIONS:
        errors.append(
            LineError(
                line, column, f"a multiple choice question needs at least 2 options, not {len(options)}"
            )
        )
        return None, None
    if len(options) > len(OPTION_LETTERS):
        errors.append(
            LineError(line, column, f"{len(options)} options are more than the 26 letters A to Z can label")
        )
        return None, None
    return tuple(options), (tuple(str(label).strip() for label in labels) if labels else None)


def _correct(
    line: int,
    column: str,
    value,
    options: tuple[str, ...] | None,
    labels: tuple[str, ...] | None,
    correct_from: int,
    errors: list[LineError],
) -> int | None:
    """The correct option's index from its position, its letter (or the
    file's own label) or its text."""

    def refuse(message: str) -> None:
        errors.append(LineError(line, column, message))

    if isinstance(value, bool) or not isinstance(value, str | int):
        refuse(
            "the correct option is given by its letter, its position or its text, "
            f"not {json.dumps(value)[:60]}"
        )
        return None
    if options is None:
        return None
    text = value.strip() if isinstance(value, str) else str(value)
    if labels:
        matched = [index for index, label in enumerate(labels) if label.casefold() == text.casefold()]
        if matched:
            return matched[0]
    if isinstance(value, int) or (text.isdigit() and text.isascii()):
        return _correct_digit(int(text), text, options, correct_from, refuse)
    if written := _LETTER.fullmatch(text):
        text = written.group(1)
        if labels:
            matched = [index for index, label in enumerate(labels) if label.upper() == text.upper()]
            if matched:
                return matched[0]
            refuse(
                f"the correct option {text!r} names no option: the options are labelled {', '.join(labels)}"
            )
            return None
        index = OPTION_LETTERS.index(text.upper())
        if index >= len(options):
            refuse(
                f"the correct letter {text!r} names no option: this question's {len(options)} options are "
                f"A to {option_letter(len(options) - 1)}"
            )
            return None
        return index
    matched = [index for index, option in enumerate(options) if option.strip() == text]
    if not matched:
        matched = [
            index for index, option in enumerate(options) if option.strip().casefold() == text.casefold()
        ]
    if len(matched) == 1:
        return matched[0]
    if matched:
        letters = " and ".join(option_letter(index) for index in matched)
        refuse(
            f"the correct option {json.dumps(text)[:60]} is the text of options {letters}: give its letter"
        )
        return None
    last_letter = option_letter(len(options) - 1)
    refuse(
        f"the correct option {json.dumps(text)[:60]} is not a letter (A to {last_letter}), "
        "a position or the text of one of the options"
    )
    return None


def _correct_digit(
    position: int, text: str, options: tuple[str, ...], correct_from: int, refuse
) -> int | None:
    """The correct option's index from a digit, which options that are
    numbers make either a position or an option's text: the position, or
    the text where the digit is no position at all ("18" of four options);
    refused as ambiguous where the two readings name different options."""
    other = 1 - correct_from
    by_position = position - correct_from if correct_from <= position < correct_from + len(options) else None
    by_other_count = position - other if other <= position < other + len(options) else None
    by_text = [index for index, option in enumerate(options) if option.strip() == text]
    shown = json.dumps(text)
    if len(by_text) == 1 and by_position not in (None, by_text[0]):
        letters = sorted((option_letter(by_text[0]), option_letter(by_position)))
        switch = (
            f", or say the file counts positions from {other} (--correct-from {other})"
            if by_other_count == by_text[0]
            else ""
        )
        refuse(
            f"the correct option {shown} is ambiguous: counting positions from {correct_from} it is option "
            f"{option_letter(by_position)} ({json.dumps(options[by_position])[:60]}), and it is the text of "
            f"option {option_letter(by_text[0])}: give the letter ({' or '.join(letters)}){switch}"
        )
        return None
    if by_position is not None:
        return by_position
    if len(by_text) == 1 and by_other_count not in (None, by_text[0]):
        # Positions counted from 0 may be the default rather than what the
        # file says: a digit that only counting from 1 makes a position is
        # not taken as the text without asking.
        letters = sorted((option_letter(by_text[0]), option_letter(by_other_count)))
        refuse(
            f"the correct option {shown} is ambiguous: it is the text of option {option_letter(by_text[0])}, "
            f"and counting positions from {other} it is option {option_letter(by_other_count)} "
            f"({json.dumps(options[by_other_count])[:60]}): give the letter ({' or '.join(letters)})"
        )
        return None
    if len(by_text) == 1:
        return by_text[0]
    last = correct_from + len(options) - 1
    refuse(
        f"the correct position {position} is not one of the {len(options)} options' positions "
        f"{correct_from} to {last} (counting from {correct_from}; "
        f"say so if the file counts from {other})"
    )
    return None
