"""Ragas-style JSON Lines and CSV with any column names, as this app's run log;
and spec 001's QA datasets as this app's question set.

A row becomes one run-log line in spec 000's combined form: question_id,
language, question, reference, expected_behaviour, expected_values,
retrieved_ids, retrieved_values, retrieved_contexts (when the row has them),
answer, cited_ids, declined, and stratum and attempt when given. Ragas'
SingleTurnSample fields that this app has no place for (reference_contexts,
multi_responses, rubrics, ...) ride along under the key ``ragas``, unscored.

Where each field comes from (``options.columns`` maps field -> column or
JSON key; what it leaves out is looked for under the field's own name, then
under Ragas' name, see DEFAULT_SOURCES):

- question_id: the column, else "row-1", "row-2", ... by the row's position;
- language: the column, else ``options.language``;
- expected_behaviour: the column ("answer" or "decline"), else "answer";
- expected_values: the column (a JSON list, one number, or several separated
  by ";"), else the reference's number when the reference is a number, a
  number with its unit or a short phrase around one number (a year that is
  the answer counts, the question's numbers are left out; see
  scoring.imports.expected); none for a question to decline;
- retrieved_values: the column, else the numbers in the retrieved contexts,
  years left out;
- declined: the column (true/false, yes/no, 1/0), else false;
- list cells (retrieved_contexts, retrieved_ids, cited_ids): a JSON array, a
  Python list as pandas writes one to CSV, or else one item.

A mapped column may be a path into nested fields (``doc.question``,
``resps[0][0]``, see scoring.fieldpath), in JSON Lines and in CSV cells that
hold a JSON or Python literal; a path whose line lacks a part of it is an
error saying which part. A Ragas file may also be one JSON array of objects
(as Ragas' repository keeps its datasets), read whole up to
scoring.jsonarray.MAX_JSON_ARRAY_BYTES, its problems named by item from 1.
A CSV whose first line holds data, not column names, is refused as having
no header, unless the mapping names its columns by position (col1, col2...).

Both readers stream: one row at a time, the converted lines spooled to a
temporary file so that ``out`` receives nothing from a file that turns out to
be bad, and a header that can declare the repetitions the rows show.

scoring.imports.tabular_rows makes each row a line, cell by cell.
"""

from __future__ import annotations

import csv
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO

import orjson

import scoring.imports.sniff as sniff
from scoring.csvrows import csv_reason, csv_rows, header_of, listed_names, repeated_columns
from scoring.fieldpath import kind, paths_in, root
from scoring.imports.common import TARGET_FIELDS, ImportOptions, Preview
from scoring.imports.expected import expected_values
from scoring.imports.tabular_rows import DEFAULT_SOURCES, NUL_MESSAGE, convert_row
from scoring.imports.tabular_rows import parse_list_cell as parse_list_cell  # this module's name too
from scoring.jsonarray import JsonArrayError, read_json_array
from scoring.logfile import (
    ErrorCollector,
    LineError,
    LogFileError,
    holds_nul,
    iter_lines,
    label_problem,
    language_problem,
    parse_object,
    question_errors,
)

TABULAR_FORMATS = ("ragas", "csv")

# What a field is when no column gives it, as the preview and the CLI say.
DERIVED = {
    "question_id": 'the row\'s position: "row-1", "row-2", ...',
    "question": "none",
    "language": "the language option",
    "answer": "none (required)",
    "retrieved_contexts": "none",
    "retrieved_ids": "none",
    "retrieved_values": "the numbers in the retrieved contexts, years left out",
    "cited_ids": "none",
    "declined": "false",
    "reference": "none",
    "expected_values": "the reference's number, when it is a number, a number with its unit or a short "
    "phrase around one number (a year that is the answer counts, the question's numbers are left out); "
    "none for a question to decline",
    "expected_behaviour": '"answer"',
    "stratum": "none",
    "attempt": "none (one attempt a question)",
}

# The distinct keys of JSON Lines rows kept to check a mapping against; a
# file with more has keys that vary by row, and is not checked so.
MAX_KEYS_SEEN = 1000

# Converted lines are kept in memory up to this size, then on disk.
SPOOL_BYTES = 8 * 1024 * 1024


# --- The reader scoring.imports dispatches to ---------------------------------------------------------


@dataclass(frozen=True)
class TabularReader:
    """The reader of one of TABULAR_FORMATS ("ragas" or "csv")."""

    file_format: str
    fields: tuple[str, ...] = TARGET_FIELDS

    def default_columns(self, names: Iterable[str]) -> dict[str, str]:
        """The column each field is read from when the mapping names none,
        among ``names`` (a CSV header, the keys of JSON objects)."""
        return default_columns(names)

    def preview(self, path: Path, options: ImportOptions, *, rows: int = 5) -> Preview:
        return preview(path, self.file_format, options, rows=rows)

    def convert(self, path: Path, out: BinaryIO, options: ImportOptions, *, max_errors: int = 200) -> int:
        return convert(path, out, self.file_format, options, max_errors=max_errors)


def reader(file_format: str) -> TabularReader:
    """The reader of ``file_format``; refuses (ValueError) a format not in TABULAR_FORMATS."""
    if file_format not in TABULAR_FORMATS:
        raise ValueError(f"the tabular formats are {', '.join(TABULAR_FORMATS)}, not {file_format!r}")
    return TabularReader(file_format)


def default_columns(names: Iterable[str]) -> dict[str, str]:
    """Field -> column for every field one of ``names`` can fill by default
    (DEFAULT_SOURCES), the field's own name before Ragas'."""
    present = set(names)
    found = {}
    for target, candidates in DEFAULT_SOURCES.items():
        for candidate in candidates:
            if candidate in present:
                found[target] = candidate
                break
    return found


# --- Conversion ---------------------------------------------------------------------------------------


def preview(path: Path, file_format: str, options: ImportOptions, *, rows: int = 5) -> Preview:
    """The first ``rows`` rows of ``path`` as read and as run-log lines, with
    the problems of those rows and of the file's start. The versions are not
    checked here (the person confirms them after the preview)."""
    collector = ErrorCollector(limit=200)
    shown = Preview(format=file_format)
    explicit = _explicit_columns(options.columns, collector)
    if problem := _file_problem(path, file_format):
        shown.errors = [LineError(1, None, problem)]
        return shown
    converter = _Converter(options, explicit, unit=_unit(path, file_format))
    with _rows(path, file_format, collector, explicit) as (header, source):
        keys: dict[str, None] = dict.fromkeys(header or ())
        for number, row in source if rows > 0 else ():
            shown.rows.append(row)
            keys.update(dict.fromkeys(row))
            if header is None:
                # What a mapping can reach inside JSON rows, for the import page to offer.
                keys.update(dict.fromkeys(paths_in(row)))
            line = converter.add(number, row, header, collector)
            if line is not None:
                shown.lines.append(line)
            if len(shown.rows) >= rows:
                break
    shown.fields = [name for name in keys if name]
    shown.columns = _in_use(default_columns(shown.fields), explicit)
    shown.errors = list(collector.errors)
    return shown


def convert(
    path: Path, out: BinaryIO, file_format: str, options: ImportOptions, *, max_errors: int = 200
) -> int:
    """Write ``path`` as a combined-form run log to the binary stream ``out``:
    a header naming the versions (and the repetitions, when rows give
    attempts beyond 1), then one line a row. Returns the number of rows.

    Raises LogFileError naming every problem (the first ``max_errors``), each
    on its line of the source file and under its source column: a version
    missing or not a label, a mapped column not in the header or a column
    named twice, a row with more cells than the header, an empty answer or
    question id, a value that is not what its field holds, a line that is
    not a JSON object, a file that is not what ``file_format`` says, a
    question id given twice, and whatever the run log itself refuses (see
    scoring.logfile.answer_errors and question_errors). Nothing is written
    to ``out`` then."""
    collector = ErrorCollector(max_errors)
    header_line = _version_header(options, collector)
    explicit = _explicit_columns(options.columns, collector)
    if problem := _file_problem(path, file_format):
        collector.add([LineError(1, None, problem)])
        collector.raise_if_any()
    converter = _Converter(options, explicit, unit=_unit(path, file_format))
    with tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES) as spool:
        with _rows(path, file_format, collector, explicit) as (header, source):
            for number, row in source:
                line = converter.add(number, row, header, collector)
                if line is not None and not collector.total:
                    spool.write(orjson.dumps(line) + b"\n")
        collector.add(converter.finish(json_lines=file_format == "ragas"))
        if not converter.rows and not collector.total:
            collector.add([LineError(1, None, "the file holds no rows")])
        collector.raise_if_any()
        if converter.max_attempt > 1:
            header_line["repetitions"] = converter.max_attempt
        out.write(orjson.dumps(header_line) + b"\n")
        spool.seek(0)
        shutil.copyfileobj(spool, out)
    return converter.rows


def _version_header(options: ImportOptions, collector: ErrorCollector) -> dict:
    header = {}
    for name in ("assistant_version", "set_version"):
        value = getattr(options, name).strip()
        if not value:
            collector.add(
                [
                    LineError(
                        1,
                        name,
                        "missing: a Ragas or CSV file does not name versions; give the "
                        f"{name.replace('_', ' ')} the answers are imported under",
                    )
                ]
            )
        elif problem := label_problem(value):
            collector.add([LineError(1, name, problem)])
        header[name] = value
    return header


def _explicit_columns(columns: Mapping[str, str], collector: ErrorCollector) -> dict[str, str]:
    """The mapping as given; an empty column ("") turns the field's default off."""
    explicit = {}
    for target, column in columns.items():
        column = (column or "").strip()
        if target not in TARGET_FIELDS:
            collector.add(
                [
                    LineError(
                        1,
                        target,
                        f"{target!r} is not a field of the run log; "
                        f"the fields are {', '.join(TARGET_FIELDS)}",
                    )
                ]
            )
            continue
        explicit[target] = column
    return explicit


def _in_use(defaults: Mapping[str, str], explicit: Mapping[str, str]) -> dict[str, str]:
    """The defaults with the explicit mapping over them, fields turned off left out."""
    return {field: column for field, column in {**defaults, **explicit}.items() if column}


def _file_problem(path: Path, file_format: str) -> str | None:
    try:
        return sniff.format_problem(path, path.name, file_format)
    except FileNotFoundError:
        return "no such file"
    except OSError as error:
        return f"cannot be read ({error.strerror or error})"


def _unit(path: Path, file_format: str) -> str:
    """What a row's number counts: a "line", or an "item" of a JSON array."""
    if file_format != "ragas":
        return "line"
    seen = sniff.look(path, path.name)
    return "item" if seen.kind == "json_array" or (seen.kind, seen.detail) == ("ragas", "array") else "line"


@contextmanager
def _rows(path: Path, file_format: str, collector: ErrorCollector, explicit: Mapping[str, str]):
    """(header, rows): the CSV header (None for JSON Lines) and each row as
    (line number, row), file problems going to ``collector``."""
    if file_format == "ragas" and _unit(path, file_format) == "item":
        yield None, _json_array_rows(path, collector)
        return
    if file_format == "ragas":
        with open(path, "rb") as stream:
            yield None, _jsonl_rows(stream, collector)
        return
    with open(path, "rb") as stream:
        yield from _csv_table(stream, collector, explicit)


# A line of the source file is never held whole past this: a file of one
# huge line is refused on it, not read into memory. (A run-log line may hold
# 100 KB by default, so a source line this long could never be stored.)
SOURCE_LINE_MAX_BYTES = 8 * 1024 * 1024


def _source_line_too_long(number: int) -> LineError:
    return LineError(
        number, None, f"the line is longer than {SOURCE_LINE_MAX_BYTES // 2**20} MB; the rest was not read"
    )


def _jsonl_rows(stream: BinaryIO, collector: ErrorCollector) -> Iterator[tuple[int, dict]]:
    for number, text, _, oversize in iter_lines(stream, max_line_bytes=SOURCE_LINE_MAX_BYTES):
        if oversize:
            collector.add([_source_line_too_long(number)])
            continue
        record, error = parse_object(number, text)
        if error:
            collector.add([error])
        else:
            yield number, record


def _json_array_rows(path: Path, collector: ErrorCollector) -> Iterator[tuple[int, dict]]:
    try:
        items = read_json_array(path)
    except JsonArrayError as error:
        collector.add([LineError(0, None, str(error), unit="file")])
        return
    for number, item in enumerate(items, start=1):
        if isinstance(item, dict):
            yield number, item
        else:
            collector.add([LineError(number, None, f"not a JSON object but {kind(item)}", unit="item")])


class _Decoded:
    """The lines of a binary stream as text, stopping at the first line that
    is not UTF-8 (its number kept in ``bad_line``)."""

    def __init__(self, stream: BinaryIO):
        self.stream = stream
        self.bad_line = 0
        self.long_line = 0

    def __iter__(self) -> Iterator[str]:
        number = 0
        while raw := self.stream.readline(SOURCE_LINE_MAX_BYTES + 1):
            number += 1
            if len(raw) > SOURCE_LINE_MAX_BYTES:
                self.long_line = number
                return
            if number == 1:
                raw = raw.removeprefix(b"\xef\xbb\xbf")
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError:
                self.bad_line = number
                return


def _csv_table(stream: BinaryIO, collector: ErrorCollector, explicit: Mapping[str, str]):
    decoded = _Decoded(stream)
    table = csv.reader(decoded)
    try:
        header = next(table, None)
    except csv.Error as error:
        collector.add([LineError(1, None, f"not CSV ({csv_reason(error)})")])
        header = None
    if header is None:
        if decoded.bad_line:
            collector.add([_not_utf8(decoded.bad_line)])
        if decoded.long_line:
            collector.add([_source_line_too_long(decoded.long_line)])
        yield None, iter(())
        return
    first = header
    named = [root(column) for column in explicit.values() if column] or ["answer"]
    header, data, problem = header_of(
        first, named, known=_KNOWN_NAMES, example="--columns question=col1,answer=col2"
    )
    if data:
        # No header: the mapping names the columns by position, and the
        # first line is a row like the others.
        yield header, _positional_rows(first, table, decoded, header, collector)
        return
    if problem:
        collector.add([problem])
        yield header, iter(())
        return
    problems = repeated_columns(header)
    problems += [
        LineError(
            1, column, f"the {target} column {root(column)!r} is not in the header ({listed_names(header)})"
        )
        for target, column in explicit.items()
        if column and root(column) not in header
    ]
    if len(header) == 1 and (separator := next((c for c in ";\t|" if c in header[0]), None)):
        problems.append(
            LineError(
                1,
                None,
                f"the header is one column holding {separator!r}: this file seems to separate its columns "
                f"with {separator!r}; save it as CSV with commas",
            )
        )
    elif not explicit.get("answer") and ("answer" in explicit or "answer" not in default_columns(header)):
        problems.append(
            LineError(
                1,
                None,
                f'no answer column: none is named "answer" or "response" ({listed_names(header)}); '
                "map the answer field to the column that holds the answers",
            )
        )
    if problems:
        # Every row would repeat the header's problem: the header is the one
        # line to fix.
        collector.add(problems)
        yield header, iter(())
        return
    yield header, _csv_rows(table, decoded, header, collector)


# The column names a header of another tool's CSV is known by.
_KNOWN_NAMES = frozenset(name for names in DEFAULT_SOURCES.values() for name in names)


def _positional_rows(
    first: list[str], table, decoded: _Decoded, header: list[str], collector: ErrorCollector
):
    yield 1, dict(zip(header, first, strict=True))
    yield from _csv_rows(table, decoded, header, collector)


def _csv_rows(table, decoded: _Decoded, header: list[str], collector: ErrorCollector):
    yield from csv_rows(table, header, collector)
    if decoded.bad_line:
        collector.add([_not_utf8(decoded.bad_line)])
    if decoded.long_line:
        collector.add([_source_line_too_long(decoded.long_line)])


def _not_utf8(line: int) -> LineError:
    return LineError(line, None, "not UTF-8 text: save the file as UTF-8")


class _Converter:
    """Turns rows into run-log lines, one at a time, and keeps what only the
    whole file can tell: a question id given twice, attempts with gaps."""

    def __init__(self, options: ImportOptions, explicit: dict[str, str], *, unit: str = "line"):
        self.options = options
        # What a row's number counts: "line", or "item" of a JSON array.
        self.unit = unit
        self.explicit = explicit
        self.rows = 0
        self.max_attempt = 0
        # Question id -> attempt -> the line that gave it (attempt 1 for a
        # row that names none).
        self.attempts: dict[str, dict[int, int]] = {}
        # The keys of JSON Lines rows, to tell a mapped key that no row has.
        self.keys_seen: set[str] = set()
        # The lines of rows that name no attempt, for when others do.
        self.without_attempt: list[int] = []
        self.attempt_column = "attempt"
        self._columns_cache: dict[tuple[str, ...], dict[str, str]] = {}

    def columns(self, row: dict, header: list[str] | None) -> dict[str, str]:
        keys = tuple(header if header is not None else row)
        columns = self._columns_cache.get(keys)
        if columns is None:
            columns = _in_use(default_columns(keys), self.explicit)
            if len(self._columns_cache) < 64:
                self._columns_cache[keys] = columns
        return columns

    def add(self, number: int, row: dict, header: list[str] | None, collector: ErrorCollector) -> dict | None:
        """The run-log line of the row on line ``number`` (None when it has
        errors, which go to ``collector``)."""
        self.rows += 1
        if header is None and len(self.keys_seen) < MAX_KEYS_SEEN:
            self.keys_seen.update(row)
        columns = self.columns(row, header)
        line, errors = convert_row(
            number,
            row,
            columns,
            position=self.rows,
            language=self.options.language,
            csv_row=header is not None,
        )
        if line is not None:
            errors += self._repeat_errors(number, line, columns)
        collector.add(self._counted(errors))
        return None if errors else line

    def _counted(self, errors: list[LineError]) -> list[LineError]:
        if self.unit == "line":
            return errors
        return [replace(error, unit=self.unit) if error.unit == "line" else error for error in errors]

    def _repeat_errors(self, number: int, line: dict, columns: dict[str, str]) -> list[LineError]:
        question_id = line["question_id"]
        attempt = line.get("attempt")
        if attempt is None:
            self.without_attempt.append(number)
        else:
            self.attempt_column = columns.get("attempt", "attempt")
            self.max_attempt = max(self.max_attempt, attempt)
        given = self.attempts.setdefault(question_id, {})
        first = given.get(attempt or 1)
        if first is not None:
            if attempt is None:
                field = columns.get("question_id", "question_id")
                return [
                    LineError(
                        number, field, f"{question_id!r} is already the question id on {self.unit} {first}"
                    )
                ]
            return [
                LineError(
                    number,
                    self.attempt_column,
                    f"attempt {attempt} of {question_id!r} is already on {self.unit} {first}",
                )
            ]
        given[attempt or 1] = number
        return []

    def finish(self, *, json_lines: bool) -> list[LineError]:
        """What only the whole file tells: a mapped key that no line of JSON
        Lines has, rows without an attempt beside rows with attempts beyond
        1, and a question's attempts with gaps."""
        errors = []
        if json_lines and self.rows and len(self.keys_seen) < MAX_KEYS_SEEN:
            seen = ", ".join(repr(key) for key in sorted(self.keys_seen)[:20])
            errors += [
                LineError(
                    1,
                    column,
                    f"the {target} key {root(column)!r} is on no line of the file (the lines have {seen})",
                )
                for target, column in self.explicit.items()
                if column and root(column) not in self.keys_seen
            ]
        if self.max_attempt < 2:
            return self._counted(errors)
        errors += [
            LineError(
                number,
                self.attempt_column,
                f"missing: other rows give attempts up to {self.max_attempt}, so every row says "
                "which attempt it is",
            )
            for number in self.without_attempt
        ]
        for question_id, given in self.attempts.items():
            if len(given) == max(given):
                continue
            missing = [attempt for attempt in range(1, max(given)) if attempt not in given]
            after_gap = min(attempt for attempt in given if attempt > missing[0])
            lines = ", ".join(
                f"attempt {attempt} on {self.unit} {given[attempt]}" for attempt in sorted(given)
            )
            shown = ", ".join(map(str, missing))
            errors.append(
                LineError(
                    given[after_gap],
                    self.attempt_column,
                    f"{question_id!r} has no attempt {shown} ({lines}): a question's attempts are numbered "
                    "from 1 without gaps",
                )
            )
        return self._counted(sorted(errors, key=lambda error: error.line))


# --- Spec 001's QA datasets as a question set -----------------------------------------------------------


def qa_question_set(
    path: Path,
    task: str,
    columns=None,
    *,
    language: str = "en",
    out: BinaryIO,
    correct_from: int = 0,
    file_format: str | None = None,
    max_errors: int = 200,
) -> int:
    """Write the questions of an open-ended ("open") or multiple choice ("mc")
    dataset (spec 001, read by scoring.qa.read_dataset with ``columns``: a
    scoring.qa.Columns, its text form for parse_columns, or None for the
    defaults) to ``out`` as this app's question set, one JSON line each:
    question_id, language, question (for multiple choice the prompt with its
    options labelled A, B, C, ...), reference (multiple choice: "B. Paris"),
    expected_behaviour "answer", expected_values (open-ended: the
    reference's number as scoring.imports.expected reads it; multiple
    choice: none, a question right by its letter) and the stratum when
    there is one. No header:
    the set's version is given where the set is uploaded. Returns the number
    of questions.

    Raises LogFileError listing every problem, each on its dataset line and
    column (what read_dataset refuses, a file it cannot read, and what a
    question set cannot hold); nothing is written then. Refuses (ValueError)
    an unknown task, language or column key."""
    from scoring import qa

    if isinstance(columns, str):
        columns = qa.parse_columns(columns)
    columns = columns or qa.Columns()
    if problem := language_problem(language):
        raise ValueError(f"the language {problem}")
    try:
        questions = qa.read_dataset(
            path,
            task=task,
            columns=columns,
            correct_from=correct_from,
            file_format=file_format,
            max_errors=max_errors,
        )
    except qa.DatasetError as error:
        message = str(error).removeprefix(f"{path}: ")
        raise LogFileError([LineError(1, None, message)]) from error
    sources = {
        "question_id": columns.id or "question_id",
        "question": columns.question,
        "reference": columns.reference if task == "open" else columns.correct,
        "expected_values": columns.reference if task == "open" else columns.correct,
        "stratum": columns.stratum or "stratum",
    }
    collector = ErrorCollector(max_errors)
    lines = []
    for question in questions:
        if task == "mc":
            letter = question.correct_letter
            reference = f"{letter}. {question.options[question.correct]}"
            text = qa.mc_prompt(question.text, question.options)
            # Right by its letter, as an Inspect multiple-choice sample is:
            # the number in the correct option's text is not asked for (the
            # prompt asks for a letter), so numeric accuracy does not apply.
            values = []
        else:
            reference = question.reference
            text = question.text
            values = expected_values(reference, question=text, language=language)
        line = {
            "question_id": question.id,
            "language": language,
            "question": text,
            "reference": reference,
            "expected_behaviour": "answer",
            "expected_values": values,
        }
        if question.stratum is not None:
            line["stratum"] = question.stratum
        errors = question_errors(question.line, line)
        errors += [
            LineError(question.line, name, NUL_MESSAGE) for name, value in line.items() if holds_nul(value)
        ]
        collector.add(
            LineError(error.line, sources.get(error.field, error.field), error.message) for error in errors
        )
        lines.append(line)
    collector.raise_if_any()
    for line in lines:
        out.write(orjson.dumps(line) + b"\n")
    return len(lines)
