import pytest

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
