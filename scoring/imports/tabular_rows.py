"""One row of a Ragas or CSV file as one line of the combined form
(convert_row), and the cells it is made of: texts, numbers, lists, yes/no."""

from __future__ import annotations

import math
from collections.abc import Mapping

import orjson

from scoring.fieldpath import MISSING, find, parse_container, root
from scoring.imports.expected import expected_values, written_values
from scoring.logfile import (
    BEHAVIOURS,
    MAX_REPETITIONS,
    LineError,
    answer_errors,
    holds_nul,
    question_errors,
)

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

_MISSING = object()

NUL_MESSAGE = "holds the NUL character (\\u0000), which cannot be stored: remove it"


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
        value, problem = find(row, column)
        if value is MISSING:
            # A path into a value the line has, which lacks a part of it,
            # is the mapping's shape not matching: say which part.
            if root(column) in row:
                errors.append(LineError(number, column, f"missing: {problem}"))
            return _MISSING
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
        expected = []
        if reference is not None and behaviour == "answer":
            expected = expected_values(reference, question=question or "", language=line["language"])
    line["expected_values"] = expected
    line["retrieved_ids"] = read("retrieved_ids", _id_list, [])
    retrieved = read("retrieved_values", _numbers)
    if retrieved is None:
        retrieved = written_values(contexts or (), language=line["language"])
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
    if root(column) not in row:
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
    parsed = parse_container(text) if text.startswith("[") else None
    return parsed if isinstance(parsed, list) else [value]


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


def _kept(value, csv_row: bool):
    """A Ragas field kept as it is, a list or dict cell of a CSV parsed."""
    return parse_container(value) if csv_row and isinstance(value, str) else value
