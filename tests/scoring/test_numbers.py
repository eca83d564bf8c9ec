import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.numbers import extract_numbers


def values(text: str) -> list[float]:
    return [number.value for number in extract_numbers(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("About 7.6% of the population", [7.6]),
        ("Le taux était de 7,3 % au deuxième trimestre", [7.3]),
        ("La population comptait 1 250 milliers", [1250.0]),
        ("a total of 1,340 schools", [1340.0]),
        ("1,250,000.5 people", [1250000.5]),
        ("grew 2.5. Then", [2.5]),
        ("in 2023.", [2023.0]),
        ("values 3 and 4", [3.0, 4.0]),
    ],
)
def test_it_reads_numbers_as_the_rules_write_them(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("35 per 1,000 live births in 2020", [35.0, 2020.0]),
        ("35 Per 100 people", [35.0]),
        ("as of 2024-03-31 it was 4.1", [4.1]),
        ("(HLTH_U5_MORT) and EDU_STATS_2024 cite 12", [12.0]),
        ("v2 x3 A12 3a", []),
    ],
)
def test_it_blanks_dates_denominators_and_identifiers(text, expected):
    assert values(text) == expected


def test_it_keeps_positions_of_the_original_text():
    text = "In 2020-01-01 terms, HLTH_U5_MORT was 35."
    (number,) = extract_numbers(text)
    assert text[number.start : number.end] == "35"


def test_it_tells_years_from_figures():
    years = [n.is_year for n in extract_numbers("in 2024 about 1899 and 2101 and 1 950 and 2000.5")]
    assert years == [True, False, False, False, False]


def test_it_does_not_read_a_number_glued_to_a_word():
    assert values("COVID19 and 12abc and _12 and .5") == []


# Numbers as people write them (issue 3): separators, signs, ranges, names,
# two readings, and the optional scale words.


def readings(text: str, language: str = "en", **options) -> list[tuple[float, ...]]:
    return [n.readings for n in extract_numbers(text, language=language, **options)]


@pytest.mark.parametrize(
    ("text", "language", "expected"),
    [
        ("1\u00a0250 habitants", "fr", [(1250.0,)]),
        ("1\u202f250,5 habitants", "fr", [(1250.5,)]),
        ("1\u2009250", "fr", [(1250.0,)]),
        ("CHF 1'234'567.50", "de", [(1234567.5,)]),
        ("1.234.567,5", "de", [(1234567.5,)]),
        ("1.234", "en", [(1.234,)]),
        ("1.234", "es", [(1.234, 1234.0)]),
        ("1,234", "en", [(1234.0, 1.234)]),
        ("5–7 %", "en", [(5.0,), (7.0,)]),
        ("5-7 %", "en", [(5.0,), (7.0,)]),
        ("COVID-19 cases", "en", []),
        ("fell by -2.5 points", "en", [(-2.5,)]),
        ("fell by \u22122.5 points", "en", [(-2.5,)]),
    ],
)
def test_it_reads_numbers_as_people_write_them(text, language, expected):
    assert readings(text, language) == expected


def test_it_adds_scaled_readings_only_when_asked():
    assert readings("1.2 million people") == [(1.2,)]
    assert readings("1.2 million people", scale_words=True) == [(1.2, 1200000.0)]
    assert readings("3 mil millones", "es", scale_words=True) == [(3.0, 3e9)]
    assert readings("1 250 milliers", "fr", scale_words=True) == [(1250.0, 1250000.0)]


def test_it_keeps_the_base_rules_where_they_are_unambiguous():
    assert [n.value for n in extract_numbers("7,3 % et 1 250 et 1,340 et 2.5", language="fr")] == [
        7.3,
        1250.0,
        1340.0,
        2.5,
    ]


LANGUAGE_FORMATS = {
    # language: (grouping characters, decimal mark)
    "en": ([",", ""], "."),
    "fr": (["\u202f", "\u00a0", " ", ""], ","),
    "es": ([".", " ", ""], ","),
    "de": ([".", "'", ""], ","),
}


def written(value: float, decimals: int, grouping: str, mark: str) -> str:
    whole, _, fraction = f"{abs(value):.{decimals}f}".partition(".")
    groups = []
    while len(whole) > 3:
        whole, groups = whole[:-3], [whole[-3:], *groups]
    text = grouping.join([whole, *groups])
    return ("-" if value < 0 else "") + text + (mark + fraction if decimals else "")


@given(
    value=st.floats(min_value=-1e9, max_value=1e9, allow_nan=False),
    decimals=st.integers(min_value=0, max_value=3),
    language=st.sampled_from(sorted(LANGUAGE_FORMATS)),
    data=st.data(),
)
def test_it_reads_back_any_value_as_each_language_writes_it(value, decimals, language, data):
    groupers, mark = LANGUAGE_FORMATS[language]
    grouping = data.draw(st.sampled_from(groupers))
    value = round(value, decimals)
    text = written(value, decimals, grouping, mark)
    (number,) = extract_numbers(f"La valeur est {text} cette fois.", language=language)
    assert any(math.isclose(reading, value) for reading in number.readings), (text, number)
