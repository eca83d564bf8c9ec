"""Expected values read from a reference answer (a target), the one rule
every importer follows (Inspect samples, Ragas and CSV rows, QA datasets),
and the numbers written in passages.

Numeric accuracy asks whether an answer states the expected value; a value
read by accident from a target that is not a number (the digits of a Python
class, an issue number in JSON, the day of a date, a route number copied
from the question) makes it count hits that mean nothing. So a target gives
an expected value only when it is a number:

- a number alone or with its unit ("18", "212 degrees Fahrenheit", "5 days",
  "37.5 %", "$1,200"): that number, whatever the question holds;
- a short phrase around one number ("7.6% in 2024.", "Route 20 is 12 km
  long"): the one number left once the numbers the question already holds
  are left out (a reference restates the question: "Route 20", "Flight
  691"), and years too when another number is left (a year beside a value
  is its period);

and every other target (code, JSON, lists, formulas, several numbers, long
prose, words) is a reference text only: it gives no expected value, and
numeric accuracy does not apply to its question. A date ("30 July", "July
30, 2021", "2021-07-30", "2021年7月30日") is read as one value that is not a
number: its day and year are never expected numbers, and a target that is a
date gives none (a judge reads it against the reference). A year that is
the answer ("1989", "It fell in 1989.") is an expected value: spec 000 leaves
years out of the numbers an answer states, not out of what a question asks.
A number too large for a float (over 308 digits) is no value: float() reads
it as infinite, which JSON cannot hold (it was written as null, and the
scorer then refused the question set).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable

from scoring.numbers import Number, extract_numbers, match_value

# Longer than this, a reference is prose, not a phrase around its number.
MAX_WORDS = 12
# A unit after a number: at most this many words ("degrees Fahrenheit",
# "per cent of GDP").
MAX_UNIT_WORDS = 3

# Characters that a number, a unit or a sentence does not hold, and code,
# JSON, markup and formulas do.
_STRUCTURE = re.compile(r"[{}\[\]<>=;`\\|^]|\n|\b(?:def|return|import|lambda|function|const)\s|[^\W\d]\(")

# Month names and their usual abbreviations, by language.
_MONTH_NAMES = {
    "en": "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec",
    "fr": "janvier février fevrier mars avril mai juin juillet août aout septembre octobre novembre "
    "décembre decembre janv févr fevr avr juil déc",
    "es": "enero febrero marzo abril mayo junio julio agosto septiembre setiembre octubre noviembre "
    "diciembre",
    "pt": "janeiro fevereiro março marco abril maio junho julho agosto setembro outubro novembro dezembro",
    "de": "januar februar märz maerz april mai juni juli august september oktober november dezember",
}
_MONTHS = {name for names in _MONTH_NAMES.values() for name in names.split()}
_MONTH = "(?:" + "|".join(sorted(map(re.escape, _MONTHS), key=len, reverse=True)) + r")\.?"
_DAY = r"\d{1,2}(?:st|nd|rd|th|er|e|º|°|\.)?"
_YEAR = r"\d{4}"
# Dates, in three kinds, each looked for only where it can be (most targets
# hold no date, and a month-name pattern tried at every word is slow).
_NUMERIC_DATE = re.compile(
    # 2021-07-30, 2021/07/30, 30/07/2021, 30.07.2021, 7/30/21
    rf"\b{_YEAR}[-/.]\d{{1,2}}[-/.]\d{{1,2}}\b|\b\d{{1,2}}[-/.]\d{{1,2}}[-/.](?:\d{{4}}|\d{{2}})\b"
)
_MONTH_DATE = re.compile(
    "|".join(
        (
            # 30 July, 30th of July 2021, 1er juillet, 30 de julio de 2021, 30. Juli 2021
            rf"\b{_DAY}\s*(?:of\s+|de\s+)?{_MONTH}(?![^\W\d_])(?:,?\s+(?:de\s+)?{_YEAR}\b)?",
            # July 30, July 30th, 2021
            rf"\b{_MONTH}\s+{_DAY}(?!\d)(?:,?\s+{_YEAR}\b)?",
            # July 2021, julio de 2021: a month of a year
            rf"\b{_MONTH}\s+(?:de\s+)?{_YEAR}\b",
        )
    ),
    re.IGNORECASE,
)
# 2021年7月30日, 7月30日, 2021년 7월 30일, 2021年7月
_CJK_DATE = re.compile(
    r"\d{2,4}\s*[年년]\s*\d{1,2}\s*[月월](?:\s*\d{1,2}\s*[日일号])?|\d{1,2}\s*[月월]\s*\d{1,2}\s*[日일号]"
)
_WORD = re.compile(r"[^\W\d_]+")
_DIGIT = re.compile(r"\d")


def _blank(match: re.Match[str]) -> str:
    return " " * len(match.group())


def _without_dates(text: str) -> str:
    """``text`` with each date blanked, offsets kept."""
    if "/" in text or "-" in text or "." in text:
        text = _NUMERIC_DATE.sub(_blank, text)
    if not _MONTHS.isdisjoint(word.lower() for word in _WORD.findall(text)):
        text = _MONTH_DATE.sub(_blank, text)
    if "月" in text or "월" in text:
        text = _CJK_DATE.sub(_blank, text)
    return text


# Scripts written without spaces between words: each character counts as
# half a word, so that a Chinese sentence is not one "word".
_UNSPACED = ("CJK", "HIRAGANA", "KATAKANA", "THAI", "LAO", "KHMER", "MYANMAR")


def expected_values(
    target_text: str | Iterable[str], *, question: str = "", language: str = ""
) -> list[float]:
    """The expected numbers of a target (or of each of several targets, as
    an Inspect sample may give: each value once, in order), [] when it is
    not a number (see the module's rules). ``question`` is the question's
    text, whose numbers a free-text reference restates; ``language`` decides
    how numbers are read (scoring.numbers.extract_numbers)."""
    targets = [target_text] if isinstance(target_text, str) else list(target_text)
    restated: list[float] | None = None  # the question's numbers, read when a phrase needs them
    values: dict[float, None] = {}
    for target in targets:
        text = _reference_phrase(target)
        if text is None:
            continue
        numbers = extract_numbers(text, language=language)
        if len(numbers) == 1 and _is_number_with_unit(text, numbers[0]):
            if _finite(numbers[0].value):
                values.setdefault(numbers[0].value, None)
            continue
        if restated is None:
            numbers_asked = extract_numbers(question, language=language)
            restated = [reading for number in numbers_asked for reading in _readings(number)]
        if (value := _one_value(numbers, restated)) is not None and _finite(value):
            values.setdefault(value, None)
    return list(values)


def written_values(texts: Iterable[str], *, language: str = "") -> list[float]:
    """The numbers written in ``texts`` (retrieved passages, a text mapped
    as expected values), years left out, each once, in order."""
    values: dict[float, None] = {}
    for text in texts:
        for number in extract_numbers(text, language=language):
            if not number.is_year and _finite(number.value):
                values.setdefault(number.value, None)
    return list(values)


def _finite(value: float) -> bool:
    return math.isfinite(value)


def _readings(number: Number) -> tuple[float, ...]:
    return number.readings or (number.value,)


def _reference_phrase(target: str) -> str | None:
    """The target with its dates blanked when it is a phrase that may hold
    a number (short, one line, no code or markup), else None."""
    text = target.strip()
    if not _DIGIT.search(text) or _STRUCTURE.search(text) or _words(text) > MAX_WORDS:
        return None
    # A date's pieces are blanked, not read: the date is one value, not a number.
    return _without_dates(text)


def _one_value(numbers: list[Number], restated: list[float]) -> float | None:
    """The one value a phrase's numbers leave once those the question
    holds are left out, and years beside another number; None for none or
    several."""
    kept = [number for number in numbers if match_value(number, restated) is None]
    if any(not number.is_year for number in kept):
        kept = [number for number in kept if not number.is_year]
    values = set(number.value for number in kept)
    return values.pop() if len(values) == 1 else None


def _is_number_with_unit(text: str, number: Number) -> bool:
    """True when ``text`` is ``number`` with at most a sign or currency
    before it and a short unit after it."""
    before, after = text[: number.start], text[number.end :]
    return not any(character.isalnum() for character in before) and _words(after) <= MAX_UNIT_WORDS


def _words(text: str) -> float:
    """How many words ``text`` holds: its runs between spaces, a character
    of a script written without spaces counting for half a word."""
    unspaced = sum(1 for character in text if _is_unspaced(character))
    return len(text.split()) + unspaced / 2


def _is_unspaced(character: str) -> bool:
    if character.isascii() or not character.isalpha():
        return False
    return unicodedata.name(character, "").startswith(_UNSPACED)
