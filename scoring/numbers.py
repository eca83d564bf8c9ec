"""Numbers in answer text, as people write them.

The base rules are spec 000's (recipe 4.2): dates, "per 1,000"-style
denominators and record identifiers are blanked, then a number is digits,
optionally grouped by three, optionally with a decimal part after "." or ",",
not glued to a word. On top of them, without changing what they read where
they are unambiguous:

- thousands may also be grouped by a no-break, narrow no-break or thin space,
  or an apostrophe (1'234), and by "." in languages that write it so;
- a leading minus (hyphen or U+2212) makes a signed number, but a hyphen after
  a word is part of a name (COVID-19) and after a number is a range (5-7);
- a figure is supported by a value of either sign, since prose often states
  the sign in words ("fell by 2.5 points" against -2.5);
- a token that reads two ways ("1,234": 1234 or 1.234) keeps both readings;
- optionally, a scale word after a number ("1.2 million", "5万", "3억")
  adds the scaled reading, and a number written in parts of falling scale
  (1万2千3百, 3천5백, and Chinese 1万5 for 15,000) is one number;
- in scripts that do not space their words (Han, kana, Hangul, Thai) a
  number may touch a letter ("每年5天", "1.5倍", "ราคา50บาท"), where a Latin
  letter beside digits still makes a name or a code (A1, COVID19); their
  dates (2024年3月31日) and "per" denominators (每1,000, 1,000명당) are
  blanked, and their separators are English ones (1,234.5);
- full-width digits and marks (１，２３４．５) read as ASCII ones;
- an ordinal (37th, 1st, 1º) reads as its number, marked ``is_ordinal``:
  an answer "the 37th" states an expected 37, but "the 21st century" states
  no figure; a day written as one ("March 3rd", "3rd of March", "1º de
  marzo", "3. März") is a date, and blanked.
"""

from __future__ import annotations

import functools
import math
import re
from typing import NamedTuple

# Characters that group thousands. Spaces of every width and apostrophes
# always; "," always (the base rules); "." only where the language uses it.
_SPACES = " \u00a0\u202f\u2009"
_APOSTROPHES = "'\u2019"
_GROUPERS = _SPACES + _APOSTROPHES + ",."
DOT_GROUPING_LANGUAGES = frozenset({"fr", "es", "de", "it", "pt", "nl", "da", "id", "tr"})

_SEPARATOR = f"[{re.escape(_GROUPERS)}]"

# Scripts written without spaces between words: Han, kana, Hangul and Thai.
# A number may touch their letters ("每年5天", "ราคา50บาท"), where a Latin
# (or Greek, Cyrillic...) letter beside digits makes a name or a code (A1,
# COVID19) and stops the number. Thai digits (U+0E50-0E59) are left out:
# they are digits, read as any other.
_UNSPACED_LETTERS = (
    "\u0e01-\u0e4e"  # Thai letters, vowels and tone marks
    "\u1100-\u11ff"  # Hangul Jamo
    "\u3005-\u3007"  # 々 〆 〇
    "\u3040-\u30ff"  # Hiragana and Katakana
    "\u3130-\u318f"  # Hangul compatibility Jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK unified ideographs, extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\ua960-\ua97f"  # Hangul Jamo extended-A
    "\uac00-\ud7ff"  # Hangul syllables and Jamo extended-B
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff66-\uffdc"  # half-width Katakana and Hangul
    "\U00020000-\U0003134f"  # CJK unified ideographs, extensions B to H
)
# A word character that a number may not touch: \w less those scripts.
_SPACED_WORD = rf"[^\W{_UNSPACED_LETTERS}]"
# An English ordinal's suffix, or the ordinal indicators º and ª: "37th" and
# "1º" are 37 and 1, but "3rdparty" is a word.
_ORDINAL = rf"(?:st|nd|rd|th|ST|ND|RD|TH|[\u00ba\u00aa])(?!{_SPACED_WORD})"
# What makes a number read an ordinal: the suffix, where º is no ordinal
# before C or F (Spanish and Portuguese write 30º C for 30 °C).
_ORDINAL_SUFFIX = re.compile(rf"(?:st|nd|rd|th|ST|ND|RD|TH|\u00aa|\u00ba(?!\s?[CF]\b))(?!{_SPACED_WORD})")
# A month's name, in English and, after "º de", in Spanish and Portuguese;
# "May" only capitalized, since "the 2nd may" is a verb more often than not.
_ORDINAL_MONTHS = (
    r"(?:(?i:january|february|march|april|june|july|august|september|october|november|december"
    r"|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec"
    r"|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|setiembre|octubre|noviembre|diciembre"
    r"|janeiro|fevereiro|março|marco|maio|junho|julho|setembro|outubro|novembro|dezembro)|May|MAY)"
)
_MONTH_BEFORE_ORDINAL = re.compile(rf"(?<![^\W\d_]){_ORDINAL_MONTHS}\.?\s+$")
# German writes a day as an ordinal with a full stop: "3. März", "1. Mai"
# (looked for in German answers only).
_GERMAN_MONTH_AFTER_DAY = re.compile(
    r"\.\s?(?:Januar|Jänner|Februar|März|Maerz|April|Mai|Juni|Juli|August|September|Oktober|November"
    r"|Dezember|Jan|Feb|Mär|Apr|Jun|Jul|Aug|Sept|Sep|Okt|Nov|Dez)(?![^\W\d_])"
)
_MONTH_AFTER_ORDINAL = re.compile(rf"\s+(?:(?i:of|de)\s+)?{_ORDINAL_MONTHS}(?![^\W\d_])")

# A token with an optional sign: it must stand alone, not glued to a word, a
# digit or a preceding dot, and not run into a word (an identifier may follow
# at once: "12ABCD" reads 12, as if the identifier were blanked; so may an
# ordinal's suffix). A full stop may follow. The pattern opens with the
# character class its first character is in (a sign or a digit), which the
# regex engine scans for in C: a quarter faster than trying every position.
# The lookbehinds then look at the character before that first one.
_TOKEN = re.compile(
    rf"[-\u2212\d](?<!{_SPACED_WORD}.)(?<!\..)"
    rf"(?:(?<=\d)\d*|(?<=[-\u2212])\d+)(?:{_SEPARATOR}\d{{3}})*(?:[.,]\d+)?"
    rf"(?:(?!{_SPACED_WORD})|(?=[A-Z][A-Z0-9_]{{3}})|(?=({_ORDINAL})))"
)
_SIGNS = "-\u2212"
_UNSPACED_LETTER = re.compile(f"[{_UNSPACED_LETTERS}]")

# Blanked before reading, in this order (a date first, so that "per 1,000
# 2024-03-31" keeps its date), replaced by spaces of the same length so that
# two numbers can never be joined across a blank and offsets stay true.
# Identifiers (a capital then three or more capitals, digits or underscores)
# need no blanking: their digits always follow a word character, which no
# number may follow.
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DENOMINATOR = re.compile(r"\b(?i:per)\s+\d+(?:[ ,]\d{3})*(?:[.,]\d+)?")

_DIGIT = re.compile(r"\d")

# Answers in the unspaced scripts write dates with year, month and day signs
# (2024年3月31日, 2024년 3월 31일): blanked as a whole, as "2024-03-31" is. A
# month alone ("3月", "3월") is a month's name, as "March" is, and blanked;
# the year before it stays a year. Months counted (3个月, 3か月, 3개월) are
# figures. Digits may be ASCII or full-width (\d is both). Each pattern here
# opens with a character class or a literal, which the regex engine scans for
# in C (a pattern that opens with a lookbehind is tried at every position,
# five to ten times slower), and a lookbehind after the first character looks
# at the character before it.
_TO_FULL_WIDTH = str.maketrans("0123456789", "０１２３４５６７８９")


def _either_width(digits: str) -> str:
    """A character class of ``digits`` ("1-9") in ASCII and in full width."""
    return f"[{digits}{digits.translate(_TO_FULL_WIDTH)}]"


_MONTH_NUMBER = rf"(?:{_either_width('1')}{_either_width('0-2')}|{_either_width('0')}?{_either_width('1-9')})"
_DAY = (
    rf"(?:{_either_width('3')}{_either_width('01')}|{_either_width('12')}\d|{_either_width('0')}?"
    rf"{_either_width('1-9')})\s?[日号일]"
)
_UNSPACED_DATE = re.compile(
    r"\d(?<![\d.,].)"  # a first digit that is no part of a number
    rf"(?:\d{{3}}\s?[年년]\s?(?={_MONTH_NUMBER}\s?[月월]\s?{_DAY}){_MONTH_NUMBER}"  # a year before both
    # or a month from 1 to 12, its first digit read
    rf"|(?<={_either_width('1')}){_either_width('0-2')}|(?<={_either_width('0')}){_either_width('1-9')}"
    rf"|(?<={_either_width('1-9')}))"
    rf"\s?[月월](?:\s?{_DAY})?"
)
# Their "per 1,000": 每 and ต่อ before the number, 当たり/あたり and 당 after
# it (with a scale and a unit between: 10万人当たり, 1,000명당). Those after
# are blanked first: what follows one of their blanks is never a digit, so
# the pattern for those before cannot read across it (the other way round,
# "4每24당" would lose its 4).
_PER_NUMBER_REST = r"\d*(?:[ ,]\d{3})*(?:[.,]\d+)?"
_DENOMINATOR_BEFORE = re.compile(rf"(?:每|ต\u0e48\u0e2d)\s*\d{_PER_NUMBER_REST}")
_DENOMINATOR_AFTER = re.compile(
    rf"\d(?<![\d.,].){_PER_NUMBER_REST}(?=\s?[万萬千만천]?\s?(?:人|名|件|世帯|명|건|가구)?\s?"
    r"(?:当たり|あたり|当り|당(?![\uac00-\ud7af])))"
)
# What these rules and the full-width ones below look for. A text holding
# none of them (every French or Spanish answer) skips them: "in" looks for
# each in C, and at once in a text of Latin-1 characters only, where no such
# character can be. Full-width digits need nothing: they are digits, which
# float() reads.
_UNSPACED_MARKERS = ("．", "，", "－", "月", "월", "每", "ต่อ", "当", "あたり", "당")
# A full-width full stop between digits is a decimal mark, a full-width comma
# groups full-width digits by three (in Chinese prose, "5，100" after ASCII
# digits is a clause comma), and a full-width hyphen before a digit is a
# minus: each is one character for one, so offsets stay true.
_FULL_WIDTH_MARK = re.compile(r"．(?<=\d．)(?=\d)|，(?<=[０-９]，)(?=[０-９]{3}(?![０-９]))|－(?=\d)")
_ASCII_MARK = {"．": ".", "，": ",", "－": "-"}
_SPLIT = re.compile(rf"({_SEPARATOR})")

SCALE_WORDS = {
    "thousand": 1e3,
    "thousands": 1e3,
    "million": 1e6,
    "millions": 1e6,
    "billion": 1e9,
    "billions": 1e9,
    "mille": 1e3,
    "milliers": 1e3,
    "milliard": 1e9,
    "milliards": 1e9,
    "mil": 1e3,
    "millón": 1e6,
    "millon": 1e6,
    "millones": 1e6,
    "billón": 1e12,
    "billones": 1e12,
}
# Written straight after the number, or after a space: 5万, 1.2亿, 3억, 5 ล้าน.
UNSPACED_SCALE_WORDS = {
    "十": 1e1,
    "拾": 1e1,
    "百": 1e2,
    "佰": 1e2,
    "千": 1e3,
    "仟": 1e3,
    "万": 1e4,
    "萬": 1e4,
    "十万": 1e5,
    "十萬": 1e5,
    "百万": 1e6,
    "百萬": 1e6,
    "千万": 1e7,
    "千萬": 1e7,
    "亿": 1e8,
    "億": 1e8,
    "十亿": 1e9,
    "十億": 1e9,
    "百亿": 1e10,
    "百億": 1e10,
    "千亿": 1e11,
    "千億": 1e11,
    "万亿": 1e12,
    "萬億": 1e12,
    "兆": 1e12,
    "십": 1e1,
    "백": 1e2,
    "천": 1e3,
    "만": 1e4,
    "십만": 1e5,
    "백만": 1e6,
    "천만": 1e7,
    "억": 1e8,
    "십억": 1e9,
    "백억": 1e10,
    "천억": 1e11,
    "조": 1e12,
    "พัน": 1e3,
    "หมื่น": 1e4,
    "แสน": 1e5,
    "ล้าน": 1e6,
    "พันล้าน": 1e9,
    "หมื่นล้าน": 1e10,
    "แสนล้าน": 1e11,
    "ล้านล้าน": 1e12,
}
# In Chinese a lone digit straight after one of these is the next lower
# unit, its word left unsaid: 1万5 is 1万5千 (15,000), 1千5 is 1,500.
# Japanese and Korean, which write no 零 for a skipped unit, say 10,005 so
# (一万五, 만 오): there the digit stays a unit.
_UNIT_LEFT_UNSAID_AFTER = frozenset(word for word in UNSPACED_SCALE_WORDS if "\u4e00" <= word[-1] <= "\u9fff")
# A scale word of a small unit and a large one (百万, 千亿, 천만): after a
# number in smaller units than its first, its large unit counts them all,
# so that 1千5百万 is (1千5百)万, 15,000,000.
_SMALL_UNITS = frozenset("十拾百佰千仟십백천")
_LARGE_UNITS = frozenset("万萬亿億만억")
_COUNTED_IN_LARGE_UNIT = {
    word: (UNSPACED_SCALE_WORDS[word[0]], UNSPACED_SCALE_WORDS[word[1]])
    for word in UNSPACED_SCALE_WORDS
    if len(word) == 2 and word[0] in _SMALL_UNITS and word[1] in _LARGE_UNITS
}


def _longest_first(words) -> str:
    return "|".join(sorted(map(re.escape, words), key=len, reverse=True))


# Longest first, so that "mil millones" is a billion and not a thousand, and
# 千万 ten million and not a thousand. A scale word after a number, looked
# for once identifiers are blanked too. The lookaheads first turn away most
# numbers, which have no scale word, at the cost of one character class.
_UNSPACED_SCALE_STARTS = "".join(sorted({word[0] for word in UNSPACED_SCALE_WORDS}))
_SCALE = re.compile(
    rf"(?=\s|[{_UNSPACED_SCALE_STARTS}])"
    rf"(?:\s+(?i:(?P<word>mil\s+millones|{_longest_first(SCALE_WORDS)}))\b"
    rf"|\s?(?=[{_UNSPACED_SCALE_STARTS}])(?P<unspaced>{_longest_first(UNSPACED_SCALE_WORDS)}))"
)
_IDENTIFIER = re.compile(r"[A-Z][A-Z0-9_]{3,}")


class Number(NamedTuple):
    """One number as written in an answer.

    ``value`` is its first reading; ``readings`` holds every value the token
    can mean (two for "1,234", a scaled one with scale words). ``decimals`` is
    the precision it was written with, for matching rounded values.
    """

    value: float
    text: str
    start: int
    end: int
    readings: tuple[float, ...] = ()
    decimals: int = 0
    signed: bool = False
    # Written with an ordinal's suffix (37th, 1º): read, to match an expected
    # value, but no stated figure, as a year is none.
    is_ordinal: bool = False

    @property
    def is_year(self) -> bool:
        """A plain four-digit integer from 1900 to 2100, as years are written."""
        return len(self.text) == 4 and self.text.isdigit() and 1900 <= self.value <= 2100


def _blank(match: re.Match[str]) -> str:
    return " " * (match.end() - match.start())


_BASE_TOKEN = re.compile(r"\d+(?:[ ,]\d{3})*(?:[.,]\d+)?")


def _base_reading(body: str) -> list[tuple[float, int]]:
    """The one reading of spec 000's base rules: groups first, then the decimal part."""
    whole = re.sub(r"[ ,](?=\d{3}(?!\d))", "", body).replace(",", ".")
    return [(float(whole), len(whole.partition(".")[2]))]


def _readings(body: str, dot_groups: bool) -> list[tuple[float, int]]:
    """Every (value, decimals) the unsigned token can mean, the base rules'
    reading first."""
    if body.isdigit():
        return [(float(body), 0)]
    parts = _SPLIT.split(body)
    if len(parts) == 3 and len(parts[2]) != 3:
        # One mark not followed by three digits: a plain decimal ("7.6", "7,3").
        return [(float(f"{parts[0]}.{parts[2]}"), len(parts[2]))]
    digits, separators = parts[0::2], parts[1::2]
    readings = []

    # All separators group thousands: the same grouper throughout.
    first = separators[0]
    if (
        all(sep == first for sep in separators)
        and all(len(run) == 3 for run in digits[1:])
        and (first != "." or dot_groups)
    ):
        readings.append((float("".join(digits)), 0))

    # The last separator is the decimal mark; the others group, alike and
    # unlike the mark, by threes.
    mark, groups = separators[-1], separators[:-1]
    if (
        mark in ".,"
        and all(sep == groups[0] for sep in groups)
        and (not groups or groups[0] != mark)
        and all(len(run) == 3 for run in digits[1:-1])
        and (not groups or groups[0] != "." or dot_groups)
    ):
        value = float("".join(digits[:-1]) + "." + digits[-1])
        readings.append((value, len(digits[-1])))
    if len(readings) > 1 and _BASE_TOKEN.fullmatch(body):
        # Where the base rules read the token, their reading comes first.
        base = _base_reading(body)[0]
        readings.sort(key=lambda reading: reading != base)
    return readings


def extract_numbers(text: str, *, language: str = "", scale_words: bool = False) -> list[Number]:
    """Return the numbers in ``text``, in order, after blanking dates,
    denominators and identifiers. ``language`` decides whether "." may group
    thousands; ``scale_words`` adds the scaled reading of "1.2 million".

    The compiled reader (scoring/_numbers_c.c) reads the usual answer, and
    hands the rest (unspaced scripts, ordinals, scale words...) to
    ``read_numbers``, the reference it is tested against."""
    if _compiled_read is not None and not scale_words:
        numbers = _compiled_read(text, language)
        if numbers is not None:
            return numbers
    return read_numbers(text, language=language, scale_words=scale_words)


def read_numbers(text: str, *, language: str = "", scale_words: bool = False) -> list[Number]:
    """``extract_numbers`` in Python: the reference implementation, and the
    reader of every answer the compiled one hands back."""
    if not _DIGIT.search(text):
        return []
    # Blanking is slow; most answers hold neither a date nor "per". A date
    # is always ten characters, so its blank is too.
    blanked = text
    # Most answers are ASCII, which str.isascii() tells at no cost.
    unspaced = not text.isascii() and _holds_unspaced_markers(text)
    if unspaced and ("．" in text or "，" in text or "－" in text):
        blanked = _FULL_WIDTH_MARK.sub(_ascii_mark, blanked)
    if "-" in blanked:
        blanked = _DATE.sub(_DATE_BLANK, blanked)
    if unspaced and ("月" in text or "월" in text):
        blanked = _UNSPACED_DATE.sub(_blank, blanked)
    if "per" in blanked.lower():
        blanked = _DENOMINATOR.sub(_blank, blanked)
    if unspaced:
        if "当" in text or "あたり" in text or "당" in text:
            blanked = _DENOMINATOR_AFTER.sub(_blank, blanked)
        if "每" in text or "ต่อ" in text:
            blanked = _DENOMINATOR_BEFORE.sub(_blank, blanked)
    dot_groups = language[:2].lower() in DOT_GROUPING_LANGUAGES
    german = language[:2].lower() == "de"
    scale_text = _IDENTIFIER.sub(_blank, blanked) if scale_words else ""
    numbers = []
    # A number's index: (the factor of its unspaced scale word, where the
    # word ends, the word).
    unspaced_scales = {}
    for match in _TOKEN.finditer(blanked):
        token = match.group()
        start, end = match.span()
        if token[0] in _SIGNS:
            sign, body, digits_at = token[0], token[1:], start + 1
        else:
            sign, body, digits_at = None, token, start
        if digits_at >= 2 and blanked[digits_at - 1] in "-\u2010" and _spaced_letter(text[digits_at - 2]):
            continue  # a hyphenated name such as COVID-19 holds no figure; 为-2.5 is a sign
        values, decimals, length = _interpret(sign, body, dot_groups)
        end = digits_at + length
        ordinal = False
        # The token pattern's one group is an ordinal's suffix: most numbers
        # have none, and cost one attribute to tell.
        if match.lastindex and (suffix := _ORDINAL_SUFFIX.match(blanked, end)):
            if _MONTH_AFTER_ORDINAL.match(blanked, suffix.end()) or _MONTH_BEFORE_ORDINAL.search(
                blanked, max(0, start - 12), start
            ):
                continue  # the day of a date: "March 3rd", "3rd of March"
            ordinal = True
        elif (
            german
            and length <= 2
            and blanked[end : end + 1] == "."
            and _GERMAN_MONTH_AFTER_DAY.match(blanked, end)
        ):
            continue  # "3. März" is a date, as "2024-03-03" is
        if scale_words and (scale := _SCALE.match(scale_text, end)):
            if word := scale["unspaced"]:
                factor = UNSPACED_SCALE_WORDS[word]
                unspaced_scales[len(numbers)] = (factor, scale.end(), word)
            else:
                word = " ".join(scale["word"].lower().split())
                factor = 1e9 if word == "mil millones" else SCALE_WORDS[word]
            values += tuple(value * factor for value in values)
        # tuple.__new__ skips the named tuple's Python-level constructor.
        numbers.append(
            _new(Number, (values[0], text[start:end], start, end, values, decimals, bool(sign), ordinal))
        )
    if unspaced_scales:
        unit_left_unsaid = language[:2].lower() not in ("ja", "ko")
        return _joined_parts(numbers, unspaced_scales, text, unit_left_unsaid)
    return numbers


def _joined_parts(
    numbers: list[Number], scales: dict[int, tuple[float, int, str]], text: str, unit_left_unsaid: bool
) -> list[Number]:
    """``numbers`` with each number written in parts of falling scale (1万5千,
    3亿5000万, 2억 5천만, 3천5백) joined into one, read in its first part's
    scale and in units: (1.5, 15000.0). A part follows the scale word before
    it at once, or after a space when it has a scale word of its own, and is
    smaller than that word's scale; "5万 3" and "1万2万" stay two numbers
    each. A lone digit straight after a Chinese scale word is the next lower
    unit (1万5 is 15,000) with ``unit_left_unsaid``: Chinese says it so, and
    writes 10,005 as 1万零5.
    A last part in a small unit and a large one (1千5百万) makes the large
    unit count the parts before it: 15,000,000."""
    joined: list[Number] = []
    # (first part's factor, sum so far, last part's factor, where its scale
    # word ends, that word)
    chain = None
    for index, number in enumerate(numbers):
        scale = scales.get(index)
        if chain and not number.signed and len(number.readings) == (2 if scale else 1):
            first_factor, total, last_factor, last_end, last_word = chain
            gap = text[last_end : number.start]
            value = number.readings[0]
            unit = scale[0] if scale else 1.0
            large = 1.0  # the large unit that counts the whole, for 1千5百万
            if (
                unit_left_unsaid
                and not scale
                and gap == ""
                and len(number.text) == 1
                and last_word in _UNIT_LEFT_UNSAID_AFTER
            ):
                unit = last_factor / 10
            elif scale and scale[2] in _COUNTED_IN_LARGE_UNIT:
                small, in_large = _COUNTED_IN_LARGE_UNIT[scale[2]]
                if small < last_factor and first_factor < in_large:
                    unit, large = small, in_large
            part = value * unit
            if part < last_factor and (gap == "" or (gap == " " and scale)):
                total = (total + (part if total >= 0 else -part)) * large
                first_factor *= large
                unit *= large
                decimals = max(0, round(math.log10(first_factor / (unit / 10**number.decimals))))
                first, end = joined[-1], scale[1] if scale else number.end
                readings = (total / first_factor, total)
                joined[-1] = Number(
                    readings[0], text[first.start : end], first.start, end, readings, decimals, first.signed
                )
                chain = (first_factor, total, unit, scale[1], scale[2]) if scale else None
                continue
        joined.append(number)
        chain = (scale[0], number.readings[-1], *scale) if scale and len(number.readings) == 2 else None
    return joined


def _holds_unspaced_markers(text: str) -> bool:
    # A loop, not any() over a generator: 0.4 µs a French answer against 1.1 µs.
    for marker in _UNSPACED_MARKERS:  # noqa: SIM110
        if marker in text:
            return True
    return False


def _ascii_mark(match: re.Match[str]) -> str:
    return _ASCII_MARK[match.group()]


def _spaced_letter(character: str) -> bool:
    """A letter of a script that spaces its words (a hyphen after it joins a name)."""
    return character.isalpha() and not _UNSPACED_LETTER.match(character)


_new = tuple.__new__
_DATE_BLANK = " " * len("2024-03-31")


# Figures repeat (years, common values): reading each token once pays. A
# few thousand entries keep those; 65,536 filled up with one-off tokens, 20
# MB at 1M answers that a run of 100k never reached, for no speed.
@functools.lru_cache(maxsize=1 << 12)
def _interpret(sign: str | None, body: str, dot_groups: bool) -> tuple[tuple[float, ...], int, int]:
    """(readings, decimals of the first, length of the body read)."""
    readings = _readings(body, dot_groups)
    if not readings:
        # Separators that fit no reading: fall back on the base rules, which
        # read the longest prefix they can.
        body = _BASE_TOKEN.match(body).group()
        readings = _base_reading(body)
    values = tuple(-value if sign else value for value, _ in readings)
    return values, readings[0][1], len(body)


def _character_table(size: int = 0x2400) -> bytes:
    """What the compiled reader needs to know of each character below
    ``size``, asked of the patterns above, so that \\w, \\d and \\s mean
    there what they mean here: one byte of flags a character (the names
    are those of scoring/_numbers_c.c)."""
    word, digit, space, alpha, unsafe = 1, 2, 4, 8, 16
    characters = "".join(map(chr, range(size)))
    flags = bytearray(size)

    def mark(pattern: str, flag: int) -> None:
        for match in re.finditer(pattern, characters):
            flags[match.start()] |= flag

    mark(_SPACED_WORD, word)
    mark(r"[0-9]", digit)
    mark(r"\s", space)
    mark(rf"[{_UNSPACED_LETTERS}]", unsafe)
    mark(r"(?![0-9])\d", unsafe)  # digits other than ASCII: read by the Python reader
    # Characters "per" matches, ignoring case, other than its own letters.
    mark(r"(?![pPeErR])(?i:[per])", unsafe)
    for marker in _UNSPACED_MARKERS:
        for character in marker:
            if ord(character) < size:
                flags[ord(character)] |= unsafe
    for code, character in enumerate(characters):
        if character.isalpha():
            flags[code] |= alpha
    return bytes(flags)


try:
    from scoring import _numbers_c
except ImportError:  # not built (no C compiler): the Python reader reads every answer
    _compiled_read = None
else:
    _numbers_c.configure(_character_table(), Number, sorted(DOT_GROUPING_LANGUAGES))
    _compiled_read = _numbers_c.read_numbers


def match_value(number: Number, candidates, *, rounding: bool = False) -> float | None:
    """The first candidate that supports ``number``, else None.

    A candidate supports it when it is close (math.isclose defaults) to one of
    its readings or to a reading with the other sign: a signed number by its
    magnitude, and an unsigned one by a negative value, since prose states
    the sign in words ("fell by 2.5 points" against −2.5). With ``rounding``,
    also when the candidate rounded to the number's own precision equals it.
    """
    readings = number.readings or (number.value,)
    readings = (*readings, *(-r for r in readings if r))
    for candidate in candidates:
        for reading in readings:
            if reading == candidate or math.isclose(reading, candidate):
                return candidate
            if rounding and round(candidate, number.decimals) == reading:
                return candidate
    return None


def is_close_to_any(value: float, candidates) -> bool:
    """True when ``value`` is close to one of ``candidates`` (math.isclose defaults)."""
    return any(math.isclose(value, candidate) for candidate in candidates)
