"""Paths into nested records, as a column mapping names them.

A path is a key, or keys joined by "." with list indexes in brackets:
``question.stem``, ``resps[0][0]``, ``doc.choices.2`` (a number after a dot
indexes a list too), ``question.choices[].text`` (every item's ``text``, a
list). A key that names a list of objects reaches into each of them, so
``question.choices.text`` is ``question.choices[].text``. A text that holds
a JSON or Python list or object (a CSV cell as pandas writes a list or dict
column) is read as that list or object when the path goes into it.

One lookup for every reader: the QA datasets (scoring.qa), the Ragas and
CSV imports and an Inspect log's metadata mapping (scoring.imports).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

import orjson

MISSING: Any = object()
# ``[]`` in a path: every item of a list.
EACH = None

_SEGMENT = re.compile(r"([^.\[\]]*)((?:\[-?\d*\])*)")
_INDEX = re.compile(r"\[(-?\d*)\]")


def parse_path(text: str) -> tuple[str | int | None, ...]:
    """The parts of ``text``: keys (str), list indexes (int) and EACH for
    ``[]``. Refuses (ValueError) an empty part and a bracket that is not
    ``[number]`` or ``[]``."""
    parts: list[str | int | None] = []
    for segment in text.split("."):
        match = _SEGMENT.fullmatch(segment)
        if match is None or not (match.group(1) or match.group(2)):
            raise ValueError(
                f"{text!r} is not a path such as question.stem or resps[0][0]: "
                + (f"{segment!r} is not a key with [index]" if segment else "it has an empty part")
            )
        if match.group(1):
            parts.append(match.group(1))
        for index in _INDEX.findall(match.group(2)):
            parts.append(EACH if index == "" else int(index))
    return tuple(parts)


def is_path(text: str) -> bool:
    """Whether ``text`` goes below the top of a record (holds "." or "[")."""
    return "." in text or "[" in text


def root(text: str) -> str:
    """The top-level key ``text`` starts at (the CSV column it reads)."""
    try:
        first = parse_path(text)[0]
    except ValueError:
        return text
    return first if isinstance(first, str) else text


def lookup(record: Any, path: str, *, default: Any = MISSING) -> Any:
    """The value at ``path`` in ``record``, ``default`` when it is not there.
    A key of ``record`` spelt as ``path`` (a column named "doc.id") wins."""
    value, _ = find(record, path)
    return default if value is MISSING else value


def find(record: Any, path: str) -> tuple[Any, str | None]:
    """(value, None), or (MISSING, why) where ``why`` says which part of the
    path is not there: "'question' has no 'stemm' (it has 'stem', 'choices')".
    A text that is no path (bad brackets) is found only as a key spelt so;
    ``why`` then says what is wrong with it."""
    if isinstance(record, Mapping) and path in record:
        return record[path], None
    try:
        parts = parse_path(path)
    except ValueError as error:
        return MISSING, str(error)
    if not isinstance(parts[0], str):
        return MISSING, f"{path!r} does not start with a key"
    return _walk(record, parts, "")


def _walk(value: Any, parts: tuple, done: str) -> tuple[Any, str | None]:
    if not parts:
        return value, None
    part, rest = parts[0], parts[1:]
    if isinstance(value, str):
        value = parse_container(value)
    where = repr(done) if done else "the record"
    if part is EACH:
        if not isinstance(value, list):
            return MISSING, f"{where} is {kind(value)}, not a list"
        return _each(value, rest, done)
    if isinstance(part, int) or (isinstance(value, list) and part.isdigit()):
        index = int(part)
        if isinstance(value, Mapping) and str(part) in value:
            return _walk(value[str(part)], rest, _joined(done, part))
        if not isinstance(value, list):
            return MISSING, f"{where} is {kind(value)}, not a list to take item [{index}] of"
        if not -len(value) <= index < len(value):
            count = f"{len(value)} item" + ("" if len(value) == 1 else "s")
            return MISSING, f"{where} has {count}, no item [{index}]"
        return _walk(value[index], rest, f"{done}[{index}]")
    if isinstance(value, Mapping):
        if part not in value:
            keys = ", ".join(repr(str(key)) for key in list(value)[:10])
            held = f" (it has {keys})" if keys else " (it is empty)"
            return MISSING, f"{where} has no {part!r}{held}"
        return _walk(value[part], rest, _joined(done, part))
    if isinstance(value, list) and value and all(isinstance(item, Mapping) for item in value):
        return _each(value, parts, done)
    return MISSING, f"{where} is {kind(value)}, not an object with {part!r}"


def _each(items: list, rest: tuple, done: str) -> tuple[Any, str | None]:
    found = []
    for position, item in enumerate(items):
        value, problem = _walk(item, rest, f"{done}[{position}]")
        if problem:
            return MISSING, problem
        found.append(value)
    return found, None


def _joined(done: str, part) -> str:
    return f"{done}.{part}" if done else str(part)


def kind(value: Any) -> str:
    """What a JSON value is, for a message: "an object", "a list", "a text"."""
    if value is None:
        return "null"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a text"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    return type(value).__name__


def parse_container(text: str) -> Any:
    """The list or object a text holds (JSON, or a Python literal as pandas
    writes a list or dict cell to CSV); the text itself when it holds none."""
    stripped = text.strip()
    if not (stripped[:1] in "[{" and stripped[-1:] in "]}"):
        return text
    try:
        parsed = orjson.loads(stripped)
    except orjson.JSONDecodeError:
        try:
            parsed = ast.literal_eval(stripped)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return text
    return parsed if isinstance(parsed, list | dict) else text


def paths_in(record: Mapping, *, limit: int = 200) -> list[str]:
    """The paths a mapping can name in ``record``, for a form to offer: each
    key, nested objects' keys as dotted paths (``doc.question``, the objects
    themselves left out), and a list's first item when it is a list or an
    object, and an inner list's first item (``resps[0][0]``); at most
    ``limit`` of them."""
    found: list[str] = []

    def visit(value: Any, path: str) -> None:
        if len(found) >= limit:
            return
        if isinstance(value, Mapping) and value and path:
            for key, inner in value.items():
                visit(inner, f"{path}.{key}")
            return
        if isinstance(value, Mapping):
            for key, inner in value.items():
                visit(inner, str(key))
            return
        found.append(path)
        # Into a list of lists or objects, and to the first text of an inner
        # list (lm-eval's resps[0][0]); a flat list of texts is mapped whole.
        if isinstance(value, list) and value and (isinstance(value[0], list | Mapping) or path.endswith("]")):
            visit(value[0], f"{path}[0]")

    visit(record, "")
    return found[:limit]
