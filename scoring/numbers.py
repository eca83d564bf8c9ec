"""Numbers in answer text, read by the rules of spec 000, recipe 4.2.

Dates, "per 1,000"-style denominators and record identifiers are blanked
before numbers are read, so that "35 per 1,000 live births in 2020
(HLTH_U5_MORT)" yields 35 and 2020 only.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

# Digits, optionally grouped by three after a space or comma ("1 250",
# "1,340"), optionally with a decimal part after "." or ",".
_NUMBER_BODY = r"\d+(?:[ ,]\d{3})*(?:[.,]\d+)?"

# A number must stand alone: not glued to a word, a digit or a preceding
# dot, and not running into a word; a full stop after it ends a sentence.
NUMBER = re.compile(rf"(?<![\w.]){_NUMBER_BODY}(?!\w)")

# Blanked before reading numbers; replaced by spaces of the same length so
# that two numbers can never be joined across a blank and offsets stay true.
_BLANKED = re.compile(
    r"\d{4}-\d{2}-\d{2}"  # a date
    rf"|\b(?i:per)\s+{_NUMBER_BODY}"  # a denominator such as "per 1,000"
    r"|[A-Z][A-Z0-9_]{3,}"  # an identifier such as HLTH_U5_MORT
)

_GROUP = re.compile(r"[ ,](?=\d{3}(?!\d))")


@dataclass(frozen=True, slots=True)
class Number:
    """One number as written in an answer: its value, text and position."""

    value: float
    text: str
    start: int
    end: int

    @property
    def is_year(self) -> bool:
        """A plain four-digit integer from 1900 to 2100, as years are written."""
        return len(self.text) == 4 and self.text.isdigit() and 1900 <= self.value <= 2100


def _blank(match: re.Match[str]) -> str:
    return " " * (match.end() - match.start())


def _value(token: str) -> float:
    # Group separators come first; whatever "." or "," is left is the decimal mark.
    return float(_GROUP.sub("", token).replace(",", "."))


def extract_numbers(text: str) -> list[Number]:
    """Return the numbers in ``text``, in order, after blanking dates,
    denominators and identifiers."""
    blanked = _BLANKED.sub(_blank, text)
    return [
        Number(_value(m.group()), m.group(), m.start(), m.end()) for m in NUMBER.finditer(blanked)
    ]


def is_close_to_any(value: float, candidates) -> bool:
    """True when ``value`` is close to one of ``candidates`` (math.isclose defaults)."""
    return any(math.isclose(value, candidate) for candidate in candidates)
