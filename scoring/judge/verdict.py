"""Strict reading of a judge's verdict (spec 003).

A verdict is one JSON object, alone or inside one fenced code block, and
nothing else. Every required field has its exact JSON type: a boolean is
true or false (not 1, not "yes"), a rating is an integer in its range (not
4.0, not "4"), a choice is one of its listed strings. Duplicate keys, NaN and
Infinity are refused. Nothing is guessed from prose: a verdict that breaks a
rule is an error that keeps the raw text, never a score.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

FENCED = re.compile(r"\A```[A-Za-z0-9_-]*[ \t]*\n(?P<body>.*?)\n?```\Z", re.DOTALL)


class VerdictError(ValueError):
    """A verdict that breaks the rules; ``raw`` is the text as the model gave it."""

    def __init__(self, reason: str, raw: str):
        super().__init__(reason)
        self.reason = reason
        self.raw = raw


@dataclass(frozen=True)
class Boolean:
    def check(self, value) -> str | None:
        return None if isinstance(value, bool) else f"must be true or false, not {_shown(value)}"


@dataclass(frozen=True)
class Text:
    def check(self, value) -> str | None:
        return None if isinstance(value, str) else f"must be a string, not {_shown(value)}"


@dataclass(frozen=True)
class Rating:
    low: int
    high: int

    def check(self, value) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int):
            return f"must be an integer from {self.low} to {self.high}, not {_shown(value)}"
        if not self.low <= value <= self.high:
            return f"must be from {self.low} to {self.high}, not {value}"
        return None


@dataclass(frozen=True)
class Choice:
    values: tuple[str, ...]

    def check(self, value) -> str | None:
        if isinstance(value, str) and value in self.values:
            return None
        listed = ", ".join(f'"{choice}"' for choice in self.values)
        return f"must be one of {listed}, not {_shown(value)}"


@dataclass(frozen=True)
class ListOf:
    """A list whose every element is checked by ``element`` (a field or a schema dict)."""

    element: object

    def check(self, value) -> str | None:
        if not isinstance(value, list):
            return f"must be a list, not {_shown(value)}"
        for index, item in enumerate(value):
            problem = _check(self.element, item)
            if problem:
                return f"[{index}]{problem}" if problem.startswith(".") else f"[{index}] {problem}"
        return None


def _check(schema, value) -> str | None:
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            return f"must be an object, not {_shown(value)}"
        for name, field in schema.items():
            if name not in value:
                return f'misses the field "{name}"'
            problem = _check(field, value[name])
            if problem:
                return f'"{name}" {problem}' if not problem.startswith("[") else f'"{name}"{problem}'
        return None
    return schema.check(value)


def _shown(value) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _unique_keys(pairs):
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f'the key "{key}" appears twice')
        seen[key] = value
    return seen


def _no_constant(name):
    raise ValueError(f"{name} is not a number a verdict may hold")


def parse_verdict(text: str, schema: dict, *, on_error: str = "raise"):
    """The verdict in ``text`` as a dict, checked against ``schema``.

    ``schema`` maps each required field to Boolean(), Text(), Rating(low,
    high), Choice(values) or ListOf(element); fields it does not name are
    kept unchecked. A verdict that breaks a rule raises VerdictError, or with
    ``on_error="record"`` the VerdictError is returned instead of raised.
    """
    if on_error not in ("raise", "record"):
        raise ValueError('on_error is "raise" or "record"')
    try:
        return _parse(text, schema)
    except VerdictError as error:
        if on_error == "raise":
            raise
        return error


def _parse(text: str, schema: dict) -> dict:
    if not isinstance(text, str):
        raise VerdictError(f"the verdict is {type(text).__name__}, not text", repr(text))
    body = text.strip()
    fenced = FENCED.match(body)
    if fenced:
        body = fenced.group("body").strip()
    if not body.startswith("{"):
        raise VerdictError("the verdict is not a JSON object (nothing is read from prose)", text)
    try:
        value = json.loads(body, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except ValueError as error:
        reason = error.msg if isinstance(error, json.JSONDecodeError) else str(error)
        raise VerdictError(f"the verdict is not one valid JSON object: {reason}", text) from None
    if not isinstance(value, dict):
        raise VerdictError("the verdict is not a JSON object", text)
    problem = _check(schema, value)
    if problem:
        raise VerdictError(f"the verdict {problem}", text)
    return value
