"""The number check: is every figure of an answer in the values its sources hold?

Spec 000 (recipe 4.2, step 3) counts a number that appears in no retrieved
value as unsupported: a figure the sources did not contain. The scorer counts
them over a whole run after the fact; this module applies the same test to one
answer at the moment it is shown, so an assistant's runtime can hold back a
figure its sources do not hold. It is the scorer's own test, not a copy:
``check_numbers`` and ``scoring.measures.check_answer`` both call
``scoring.measures.match_numbers``, so the two never disagree on a number.

Example, in an assistant's runtime::

    from scoring.check import check_numbers

    text = "The under-five mortality rate was 35 per 1,000 live births in 2020."
    result = check_numbers(
        text,
        retrieved_values=[41.0, 44.0],  # the values of the records retrieved for it
        language="en",
    )
    result.verdict  # "unsupported"
    [(n.text, n.start, n.end) for n in result.unsupported_numbers]  # [("35", 34, 36)]
    # Withhold each unsupported figure, from the last, so earlier positions hold.
    for number in reversed(result.unsupported_numbers):
        text = text[: number.start] + "[figure withheld]" + text[number.end :]
    # "The under-five mortality rate was [figure withheld] per 1,000 live births in 2020."

"per 1,000" is a denominator and 2020 a year: neither is counted. ``as_dict()``
gives the same result as JSON-safe dicts and lists (what ``POST /api/check``
answers); a reading too large for a float is null there.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal, NamedTuple

from scoring.measures import Options, match_numbers
from scoring.numbers import extract_numbers

# An answer longer than this (in UTF-8) is refused, as a line of a run log is.
MAX_ANSWER_BYTES = 100 * 1024

Verdict = Literal["supported", "unsupported", "no numbers"]

# Made once: an answer is checked in microseconds, and a frozen dataclass is slow to make.
_OPTIONS = {
    (rounding, scale_words, distinct): Options(rounding=rounding, scale_words=scale_words, distinct=distinct)
    for rounding in (False, True)
    for scale_words in (False, True)
    for distinct in (False, True)
}


class CheckInputError(ValueError):
    """An input ``check_numbers`` refuses; ``field`` names it ("retrieved_values[2]")."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field} {message}")
        self.field = field


class CheckedNumber(NamedTuple):
    """One number read from the answer and what the check made of it."""

    text: str  # as written
    start: int  # character offsets in the answer: answer[start:end] == text
    end: int
    # Every value the text can mean (scoring.numbers.Number.readings); a
    # figure of over 308 digits reads as infinite, which JSON cannot hold.
    readings: tuple[float, ...]
    year: bool  # a year is read but never counted
    ordinal: bool  # so is an ordinal ("21st century"), though it may match an expected value
    counted: bool  # False for a year or an ordinal (and, counting distinct values, a repeat)
    supported: bool | None  # None for a year or an ordinal
    matched: float | None  # the retrieved or expected value that supports it
    matched_in: Literal["retrieved", "expected"] | None

    def as_dict(self) -> dict:
        return {
            "text": self.text,
            "start": self.start,
            "end": self.end,
            "readings": [reading if math.isfinite(reading) else None for reading in self.readings],
            "year": self.year,
            "ordinal": self.ordinal,
            "counted": self.counted,
            "supported": self.supported,
            "matched": self.matched,
            "matched_in": self.matched_in,
        }


@dataclass(frozen=True, slots=True)
class NumberCheckResult:
    """Every number of one answer, with the counts and the verdict."""

    numbers: tuple[CheckedNumber, ...]
    numbers_counted: int  # n of the unsupported-numbers measure for this answer
    numbers_unsupported: int  # k

    @property
    def verdict(self) -> Verdict:
        """The answer's verdict: "no numbers" when none is counted,
        "unsupported" when any counted number is, else "supported"."""
        if not self.numbers_counted:
            return "no numbers"
        return "unsupported" if self.numbers_unsupported else "supported"

    @property
    def unsupported_numbers(self) -> list[CheckedNumber]:
        """The counted numbers that no value supports, in the order written."""
        return [number for number in self.numbers if number.counted and not number.supported]

    def as_dict(self) -> dict:
        return {
            "verdict": self.verdict,
            "numbers_counted": self.numbers_counted,
            "numbers_unsupported": self.numbers_unsupported,
            "numbers": [number.as_dict() for number in self.numbers],
        }


def check_numbers(
    answer: str,
    *,
    retrieved_values: Iterable[float],
    language: str = "",
    expected_values: Iterable[float] = (),
    rounding: bool = False,
    scale_words: bool = False,
    distinct: bool = False,
    max_answer_bytes: int = MAX_ANSWER_BYTES,
) -> NumberCheckResult:
    """Check every number of ``answer`` against ``retrieved_values`` (and
    ``expected_values``, when a question set gives them), as the scorer's
    unsupported-numbers measure does.

    ``language`` decides whether "." may group thousands ("1.250" in French);
    ``rounding``, ``scale_words`` and ``distinct`` are the scorer's Options
    of the same names. Returns each number with its position, readings and
    match, the counts and the verdict.

    Raises CheckInputError (a ValueError naming the field) for an answer that
    is not a string or is longer than ``max_answer_bytes`` in UTF-8, a
    language that is not a string, a value that is not a number (true and
    false are not; NaN and infinities are refused) and an option that is not
    true or false.
    """
    _check_text(answer, max_answer_bytes)
    retrieved = _values("retrieved_values", retrieved_values)
    expected = _values("expected_values", expected_values)
    if not isinstance(language, str):
        raise CheckInputError("language", f"must be a string, not {_describe(language)}")
    for name, flag in (("rounding", rounding), ("scale_words", scale_words), ("distinct", distinct)):
        if not isinstance(flag, bool):
            raise CheckInputError(name, f"must be true or false, not {_describe(flag)}")

    options = _OPTIONS[rounding, scale_words, distinct]
    numbers = extract_numbers(answer, language=language, scale_words=scale_words)
    matches = match_numbers(numbers, retrieved_values=retrieved, expected_values=expected, options=options)
    # match_numbers tries the retrieved values first and returns the value
    # itself: a value it matched that is among them was found there.
    checked = tuple(
        CheckedNumber(
            number.text,
            number.start,
            number.end,
            number.readings,
            number.is_year,
            number.is_ordinal,
            check.counted,
            check.supported,
            check.matched,
            None if check.matched is None else "retrieved" if check.matched in retrieved else "expected",
        )
        for check in matches.checks
        for number in (check.number,)
    )
    return NumberCheckResult(checked, matches.counted, len(matches.unsupported))


def _check_text(answer: object, max_bytes: int) -> None:
    if not isinstance(answer, str):
        raise CheckInputError("answer", f"must be a string, not {_describe(answer)}")
    # A character takes at most 4 bytes in UTF-8: most answers need no encoding to measure.
    if len(answer) * 4 > max_bytes:
        size = len(answer.encode("utf-8", "surrogatepass"))
        if size > max_bytes:
            raise CheckInputError(
                "answer", f"is {size:,} bytes in UTF-8; an answer may hold at most {max_bytes:,}"
            )


def _values(field: str, values: object) -> tuple[float, ...]:
    """The values as floats, or CheckInputError naming the first bad one."""
    if isinstance(values, str | bytes | bytearray | Mapping) or not isinstance(values, Iterable):
        raise CheckInputError(field, f"must be a list of numbers, not {_describe(values)}")
    result = []
    for position, value in enumerate(values):
        kind = type(value)
        if (
            kind is not float
            and kind is not int
            and (isinstance(value, bool) or not isinstance(value, numbers.Real))
        ):
            raise CheckInputError(f"{field}[{position}]", f"must be a number, not {_describe(value)}")
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if not math.isfinite(number):
            raise CheckInputError(f"{field}[{position}]", f"must be a finite number, not {_describe(value)}")
        result.append(number)
    return tuple(result)


def _describe(value: object) -> str:
    """A value as a JSON reader would name it, in an error message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else "infinity"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return "a number too large for a float"
    if isinstance(value, str):
        shown = value if len(value) <= 20 else value[:20] + "…"
        return f"a string ({shown!r})"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "a list"
    return type(value).__name__
