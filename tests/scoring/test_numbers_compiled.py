"""The compiled number reader (scoring/_numbers_c.c) against the Python one.

``read_numbers`` is the reference. On every text, in every language the
reader knows, ``extract_numbers`` (the compiled reader, or the Python one for
what it hands back) must give the same numbers: values with their sign
(-0.0 is not 0.0 here), texts, offsets, readings in order, decimals."""

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import numbers, synthetic
from scoring.numbers import Number, extract_numbers, read_numbers
from scoring.synthetic.realistic import generate_realistic_run

EXAMPLES = int(os.environ.get("HYPOTHESIS_EXAMPLES", "400"))

LANGUAGES = ["", "en", "EN", "fr", "Fr-CA", "es", "de", "DE", "it", "pt", "nl", "da", "id", "tr", "ja", "zh",
             "ko", "th", "e", "dé", "İt", "\u212aO"]  # fmt: skip

# Pieces that the reader's rules turn on: digits in runs of every length,
# each grouper and decimal mark, signs and hyphens, ordinal suffixes,
# months, "per" denominators, identifiers, dates in both forms, scale
# words, the unspaced scripts, full-width and other digits, and characters
# that lower-case or fold oddly.
PIECES = [
    "0", "1", "7", "12", "123", "1234", "2024", "0.5", "00", "99999", "9" * 30,
    " ", "\u00a0", "\u202f", "\u2009", "'", "\u2019", ",", ".", ",5", ".25", " 234", ",234", ".234", "'234",
    "-", "\u2212", "\u2010", "+", "%", "(", ")", "\n", ":", ";", "_",
    "st", "nd", "rd", "th", "TH", "º", "ª", " C", "C", "F",
    "per ", "Per ", "PER\u00a0", "per", "super ", "per\n",
    "de ", "of ", "March ", "May ", "3rd of March", "1º de marzo", "3. März", ". Mai",
    "COVID", "ABCD", "GDP_GROWTH", "A1", "x", "é", "le ", "a ",
    "2024-03-31", "1999-12-0", "2024年3月31日", "3月", "3월", "每", "ต่อ", "当たり", "명당",
    "万", "千", "억", "ล้าน", "million", "mil millones",
    "１２", "．", "，", "－", "٣", "²", "ſ", "\u212a", "İ", "😀", "\u2400", "\u23ff",
]  # fmt: skip


def same(text: str, language: str) -> None:
    compiled = extract_numbers(text, language=language)
    reference = read_numbers(text, language=language)
    assert compiled == reference
    assert repr(compiled) == repr(reference)  # signs of zero, float reprs
    assert all(type(number) is Number for number in compiled)


@settings(max_examples=EXAMPLES, deadline=None)
@given(pieces=st.lists(st.sampled_from(PIECES), max_size=24), language=st.sampled_from(LANGUAGES))
def test_texts_made_of_the_rules_pieces(pieces, language):
    same("".join(pieces), language)


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    text=st.text(
        alphabet=st.sampled_from("0123456789 ,.'-\u2212\u00a0\u202f\u2009\u2019perPERstndhºª_ABZaz%é万월"),
        max_size=40,
    ),
    language=st.sampled_from(LANGUAGES),
)
def test_texts_of_digits_and_marks(text, language):
    same(text, language)


@settings(max_examples=EXAMPLES, deadline=None)
@given(text=st.text(max_size=60), language=st.sampled_from(LANGUAGES))
def test_any_text(text, language):
    same(text, language)


def generated_answers():
    questions = synthetic.generate_question_set(questions=1500, seed=11)
    simple = synthetic.generate_run(question_set=questions, answers=1500, seed=12)
    realistic = generate_realistic_run(question_set=questions, answers=1500, seed=13)
    return [(row.get("answer") or "", row.get("language") or "") for row in simple + realistic]


def test_generated_answers_read_alike_and_compiled():
    """Every answer of both benchmark shapes reads the same both ways, and
    the compiled reader reads them itself: were it to hand every answer
    back, scoring would be as slow as before and every other test here
    would still pass."""
    answers = generated_answers()
    for text, language in answers:
        same(text, language)
    handed_back = [text for text, language in answers if numbers._compiled_read(text, language) is None]
    assert len(handed_back) <= len(answers) // 20, handed_back[:5]


def test_the_compiled_reader_is_built():
    """bin/setup builds it with the machine's C compiler; without one the
    app still works (the Python reader reads everything), but CI must test
    both readers."""
    assert numbers._compiled_read is not None, "scoring/_numbers_c.c was not built: run bin/setup"


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("ranked 37th of 190", "en"),  # an ordinal: the Python reader decides
        ("am 3. März 2024", "de"),  # perhaps a German date
        ("1.234.567 people", "en"),  # no grouping reads it in English
        ("每年5天", "zh"),  # an unspaced script
        ("٣ cases", "ar"),  # digits other than ASCII
        ("value 12", "dé"),  # a language code that is not ASCII
        ("9" * 200, "en"),  # longer than the compiled reader reads
    ],
)
def test_what_the_compiled_reader_hands_back(text, language):
    assert numbers._compiled_read(text, language) is None
    same(text, language)


@pytest.mark.parametrize(
    ("text", "language", "expected"),
    [
        ("COVID-19 cases: 1,234", "en", [(1234.0, 1.234)]),
        ("29.9 per 1,000 live births", "en", [(29.9,)]),
        ("per 1,000per 1,000", "en", [(1000.0, 1.0)]),  # the second "per" starts no word
        ("As of 2014-12-31, 5-7", "en", [(5.0,), (7.0,)]),  # a range, not -7
        ("12 907 dollars, 3,2 %", "fr", [(12907.0,), (3.2,)]),
        ("1.234,5 et 1.234", "fr", [(1234.5,), (1.234, 1234.0)]),  # the base rules read 1.234 first
        ("−2,5 points", "es", [(-2.5,)]),
        ("12ABCD and 1.5x", "en", [(12.0,), (1.0,)]),
    ],
)
def test_what_the_compiled_reader_reads(text, language, expected):
    compiled = numbers._compiled_read(text, language)
    assert compiled is not None
    assert [number.readings for number in compiled] == expected
    same(text, language)


@settings(max_examples=EXAMPLES, deadline=None)
@given(text=st.from_regex(r"\A[0-9]{1,19}(\.[0-9]{1,24})?\Z"))
def test_decimals_are_read_as_float_reads_them(text):
    # The compiled reader divides exactly where it can and asks Python
    # otherwise: either way the value float() gives, to the last bit.
    (number,) = numbers._compiled_read(f"about {text} people", "en")
    assert number.value == float(text)
    same(f"about {text} people", "en")
