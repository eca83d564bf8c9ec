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
  by ";"), else the numbers in the reference, years left out; none for a
  question to decline;
- retrieved_values: the column, else the numbers in the retrieved contexts,
  years left out;
- declined: the column (true/false, yes/no, 1/0), else false;
- list cells (retrieved_contexts, retrieved_ids, cited_ids): a JSON array, a
  Python list as pandas writes one to CSV, or else one item.

Both readers stream: one row at a time, the converted lines spooled to a
temporary file so that ``out`` receives nothing from a file that turns out to
be bad, and a header that can declare the repetitions the rows show.
"""

from __future__ import annotations

import ast
import csv
import math
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import orjson

import scoring.imports.sniff as sniff
from scoring.csvrows import csv_reason, csv_rows, listed_names, repeated_columns
from scoring.imports.common import TARGET_FIELDS, ImportOptions, Preview
from scoring.logfile import (
    BEHAVIOURS,
    MAX_REPETITIONS,
    ErrorCollector,
    LineError,
    LogFileError,
    answer_errors,
    holds_nul,
    iter_lines,
    label_problem,
    language_problem,
    parse_object,
    question_errors,
)
from scoring.numbers import extract_numbers

TABULAR_FORMATS = ("ragas", "csv")

# Where a field is looked for when the mapping does not name a column: its
# own name first (a table already in the run log's terms needs no mapping),
# then Ragas' SingleTurnSample name, then the name of Ragas' older datasets.
DEFAULT_SOURCES: dict[str, tuple[str, ...]] = {
    "question_id": ("question_id", "id"),
    "question": ("question", "user_input"),
    "language": ("language",),
    "answer": ("answer", "response"),
    "retrieved_contexts": ("retrieved_contexts", "contexts"),
    "retrieved_ids": ("retrieved_ids", "retrieved_context_ids"),
    "retrieved_values": ("retrieved_values",),
    "cited_ids": ("cited_ids",),
    "declined": ("declined",),
    "reference": ("reference", "ground_truth"),
    "expected_values": ("expected_values",),
    "expected_behaviour": ("expected_behaviour",),
    "stratum": ("stratum",),
    "attempt": ("attempt",),
}

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
    "expected_values": "the numbers in the reference, years left out (none for a question to decline)",
    "expected_behaviour": '"answer"',
    "stratum": "none",
    "attempt": "none (one attempt a question)",
}

# Ragas' SingleTurnSample fields with no place in the run log: kept on the
# line under "ragas", so that nothing the team had is lost, and not scored.
# "rubric" is the field's name before Ragas 0.3, "rubrics" after.
RAGAS_KEPT = (
    "reference_contexts",
    "reference_context_ids",
    "multi_responses",
    "rubrics",
    "rubric",
    "persona_name",
    "query_style",
    "query_length",
)

# The order of a converted line's fields.
LINE_ORDER = (
    "question_id",
    "language",
    "question",
    "reference",
    "expected_behaviour",
    "expected_values",
    "retrieved_ids",
    "retrieved_values",
    "retrieved_contexts",
    "answer",
    "cited_ids",
    "declined",
    "stratum",
    "attempt",
    "ragas",
)

TRUE_WORDS = frozenset({"true", "yes", "y", "1"})
FALSE_WORDS = frozenset({"false", "no", "n", "0"})

# The distinct keys of JSON Lines rows kept to check a mapping against; a
# file with more has keys that vary by row, and is not checked so.
MAX_KEYS_SEEN = 1000

# Converted lines are kept in memory up to this size, then on disk.
SPOOL_BYTES = 8 * 1024 * 1024

_MISSING = object()

NUL_MESSAGE = "holds the NUL character (\\u0000), which cannot be stored: remove it"


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
    converter = _Converter(options, explicit)
    with _rows(path, file_format, collector, explicit) as (header, source):
        keys: dict[str, None] = dict.fromkeys(header or ())
        for number, row in source if rows > 0 else ():
            shown.rows.append(row)
            keys.update(dict.fromkeys(row))
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
    converter = _Converter(options, explicit)
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


@contextmanager
def _rows(path: Path, file_format: str, collector: ErrorCollector, explicit: Mapping[str, str]):
    """(header, rows): the CSV header (None for JSON Lines) and each row as
    (line number, row), file problems going to ``collector``."""
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
    header = [name.strip() for name in header]
    problems = repeated_columns(header)
    problems += [
        LineError(1, column, f"the {target} column {column!r} is not in the header ({listed_names(header)})")
        for target, column in explicit.items()
        if column and column not in header
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

    def __init__(self, options: ImportOptions, explicit: dict[str, str]):
        self.options = options
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
        collector.add(errors)
        return None if errors else line

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
                    LineError(number, field, f"{question_id!r} is already the question id on line {first}")
                ]
            return [
                LineError(
                    number,
                    self.attempt_column,
                    f"attempt {attempt} of {question_id!r} is already on line {first}",
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
                    f"the {target} key {column!r} is on no line of the file (the lines have {seen})",
                )
                for target, column in self.explicit.items()
                if column and column not in self.keys_seen
            ]
        if self.max_attempt < 2:
            return errors
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
            lines = ", ".join(f"attempt {attempt} on line {given[attempt]}" for attempt in sorted(given))
            shown = ", ".join(map(str, missing))
            errors.append(
                LineError(
                    given[after_gap],
                    self.attempt_column,
                    f"{question_id!r} has no attempt {shown} ({lines}): a question's attempts are numbered "
                    "from 1 without gaps",
                )
            )
        return sorted(errors, key=lambda error: error.line)


class _BadValue(ValueError):
    """A value its field cannot hold; the message says why."""


def convert_row(
    number: int,
    row: Mapping,
    columns: Mapping[str, str],
    *,
    position: int,
    language: str = "en",
    csv_row: bool = False,
) -> tuple[dict | None, list[LineError]]:
    """(line, []) for a row that makes a valid run-log line, else (None, errors).

    ``columns`` maps each field to the column or key it is read from
    (default_columns and the mapping given); ``position`` is the row's place
    among the rows, from 1, for the id of a row without one; ``language``
    the language of rows that give none. Each error names the source column
    (the run-log field when no column gave it)."""
    errors: list[LineError] = []

    def value_of(target: str):
        column = columns.get(target)
        if column is None:
            return _MISSING
        value = row.get(column, _MISSING)
        # An empty cell or string is a value not given.
        return None if isinstance(value, str) and not value.strip() else value

    def read(target: str, parse, default=None):
        value = value_of(target)
        if value is _MISSING or value is None:
            return default
        try:
            return parse(value)
        except _BadValue as error:
            errors.append(LineError(number, columns[target], str(error)))
            return default

    line: dict = {}
    question_id = read("question_id", _identifier)
    if "question_id" in columns:
        if question_id is None and not any(error.field == columns["question_id"] for error in errors):
            errors.append(
                LineError(number, columns["question_id"], _missing_message("question id", row, columns))
            )
    else:
        question_id = f"row-{position}"
    line["question_id"] = question_id
    line["language"] = read("language", _identifier) or language
    question = read("question", _text)
    reference = read("reference", _text)
    if question is not None:
        line["question"] = question
    if reference is not None:
        line["reference"] = reference
    behaviour = read("expected_behaviour", _behaviour, "answer")
    line["expected_behaviour"] = behaviour
    contexts = read("retrieved_contexts", _string_list)
    expected = read("expected_values", _numbers)
    if expected is None:
        expected = (
            _values_in([reference], line["language"])
            if reference is not None and behaviour == "answer"
            else []
        )
    line["expected_values"] = expected
    line["retrieved_ids"] = read("retrieved_ids", _id_list, [])
    retrieved = read("retrieved_values", _numbers)
    if retrieved is None:
        retrieved = _values_in(contexts or (), line["language"])
    line["retrieved_values"] = retrieved
    if contexts is not None:
        line["retrieved_contexts"] = contexts
    answer = read("answer", _text)
    if answer is None and not any(error.field == columns.get("answer") for error in errors):
        errors.append(
            LineError(number, columns.get("answer", "answer"), _missing_message("answer", row, columns))
        )
    line["answer"] = answer
    line["cited_ids"] = read("cited_ids", _id_list, [])
    line["declined"] = read("declined", _boolean, False)
    stratum = read("stratum", _identifier)
    if stratum is not None:
        line["stratum"] = stratum
    attempt = read("attempt", _attempt)
    if attempt is not None:
        line["attempt"] = attempt
    used = set(columns.values())
    kept = {name: _kept(row[name], csv_row) for name in RAGAS_KEPT if name in row and name not in used}
    kept = {name: value for name, value in kept.items() if value not in (None, "", [], {})}
    if kept:
        line["ragas"] = kept
    if not errors:
        return line, _line_errors(number, line, columns)
    # The rest of the line is still checked, so that a row is fixed in one
    # pass; what failed to read stands in as a placeholder, not checked again.
    failed = {error.field for error in errors}
    checked = {
        **line,
        "question_id": line["question_id"] or f"row-{position}",
        "answer": line["answer"] or "-",
    }
    errors += [error for error in _line_errors(number, checked, columns) if error.field not in failed]
    return None, errors


def _missing_message(what: str, row: Mapping, columns: Mapping[str, str]) -> str:
    target = what.replace(" ", "_")
    column = columns.get(target)
    if column is None:
        names = " or ".join(f'"{name}"' for name in DEFAULT_SOURCES[target])
        return f"missing: no {names} on this line; map the {what} field to the key that holds it"
    if column not in row:
        return f"missing: the {what} {column!r} is not on this line"
    return f"empty: every row needs {'an' if what[0] in 'aeiou' else 'a'} {what}"


def _line_errors(number: int, line: dict, columns: Mapping[str, str]) -> list[LineError]:
    """What the run log itself refuses in ``line``, each error under the
    source column of its field."""
    repetitions = MAX_REPETITIONS if "attempt" in line else 1
    found = answer_errors(number, line, repetitions=repetitions) + question_errors(number, line)
    for name, value in line.items():
        if holds_nul(value):
            found.append(LineError(number, name, NUL_MESSAGE))
    if not found:
        return []
    sources = dict(columns)
    # Derived fields are wrong because of what they were read from.
    sources.setdefault("expected_values", columns.get("reference", "expected_values"))
    sources.setdefault("retrieved_values", columns.get("retrieved_contexts", "retrieved_values"))
    return [
        LineError(error.line, sources.get(error.field, error.field) if error.field else None, error.message)
        for error in dict.fromkeys(found)
    ]


# --- Cells ----------------------------------------------------------------------------------------------


def _shown(value) -> str:
    if isinstance(value, str):
        text = value if len(value) <= 40 else value[:40] + "…"
        return orjson.dumps(text).decode()
    return orjson.dumps(value, default=str).decode()[:60]


def _text(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _number_text(value)
    raise _BadValue(f"must be a text, not {_shown(value)}")


def _number_text(value: int | float) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _identifier(value) -> str | None:
    """An id, a language or a stratum: a text or a number, spaces around it dropped."""
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _number_text(value)
    raise _BadValue(f"must be a text or a number, not {_shown(value)}")


def _behaviour(value) -> str:
    if not isinstance(value, str):
        raise _BadValue(f'must be "answer" or "decline", not {_shown(value)}')
    behaviour = value.strip().lower()
    if not behaviour:
        return "answer"
    if behaviour not in BEHAVIOURS:
        raise _BadValue(f'the expected behaviour is "answer" or "decline", not {_shown(value)}')
    return behaviour


def _boolean(value) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS or not word:
            return False
    raise _BadValue(f"must be true or false (yes/no, 1/0), not {_shown(value)}")


def _attempt(value) -> int | None:
    if isinstance(value, str) and value.strip().isdigit() and value.strip().isascii():
        value = int(value.strip())
    elif isinstance(value, str) and not value.strip():
        return None
    elif isinstance(value, float) and value.is_integer():
        value = int(value)
    if type(value) is not int or value < 1:
        raise _BadValue(f"the attempt is a whole number from 1, not {_shown(value)}")
    return value


def parse_list_cell(value) -> list:
    """The items of a list cell: a JSON array, a Python list literal (as
    pandas writes a list column to CSV), or else the value as one item.
    A list is returned as it is."""
    if isinstance(value, list):
        return value
    if not isinstance(value, str):
        return [value]
    text = value.strip()
    if not text:
        return []
    if text.startswith("[") and text.endswith("]"):
        try:
            parsed = orjson.loads(text)
        except orjson.JSONDecodeError:
            try:
                parsed = ast.literal_eval(text)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                parsed = None
        if isinstance(parsed, list):
            return parsed
    return [value]


def _string_list(value) -> list[str]:
    items = []
    for position, item in enumerate(parse_list_cell(value), start=1):
        if isinstance(item, str):
            items.append(item)
        elif isinstance(item, int | float) and not isinstance(item, bool):
            items.append(_number_text(item))
        elif item is not None:
            raise _BadValue(f"item {position} of the list must be a text, not {_shown(item)}")
    return items


def _id_list(value) -> list[str]:
    return [item.strip() for item in _string_list(value) if item.strip()]


def _numbers(value) -> list[float]:
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            items = parse_list_cell(text)
            if items == [text]:
                raise _BadValue(f"must be numbers: a JSON list such as [7.6, 7.9], not {_shown(value)}")
        else:
            items = [part for part in text.split(";") if part.strip()]
    elif isinstance(value, list):
        items = value
    else:
        items = [value]
    numbers = []
    for item in items:
        number = _number(item)
        if number is None:
            raise _BadValue(
                f"{_shown(item)} is not a number (give numbers with a point for decimals, several separated "
                'by ";" or as a JSON list such as [7.6, 7.9])'
            )
        numbers.append(number)
    return numbers


def _number(item) -> float | None:
    if isinstance(item, bool):
        return None
    if isinstance(item, int | float):
        number = float(item)
    elif isinstance(item, str):
        try:
            number = float(item.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def _values_in(texts: Iterable[str], language: str) -> list[float]:
    """The numbers written in ``texts``, years left out, each once, in order."""
    values: dict[float, None] = {}
    for text in texts:
        for number in extract_numbers(text, language=language):
            if not number.is_year:
                values[number.value] = None
    return list(values)


def _kept(value, csv_row: bool):
    """A Ragas field kept as it is, a list or dict cell of a CSV parsed."""
    if not (csv_row and isinstance(value, str)):
        return value
    text = value.strip()
    if text.startswith("[") or text.startswith("{"):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            try:
                parsed = ast.literal_eval(text)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                return value
            if isinstance(parsed, list | dict):
                return parsed
    return value


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
    expected_behaviour "answer", expected_values (the numbers in the
    reference, years left out) and the stratum when there is one. No header:
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
            values = _values_in([question.options[question.correct]], language)
        else:
            reference = question.reference
            text = question.text
            values = _values_in([reference], language)
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
