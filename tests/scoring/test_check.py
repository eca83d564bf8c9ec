"""scoring.check: the number check of one answer, the scorer's own test."""

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import synthetic
from scoring.check import CheckInputError, check_numbers
from scoring.measures import UNSUPPORTED_K, UNSUPPORTED_N, Options, check_answer
from tests.conftest import SHARED_DATA


def running_example() -> dict[str, dict]:
    lines = (SHARED_DATA / "running_example.jsonl").read_text().splitlines()
    return {row["question_id"]: row for row in map(json.loads, lines)}


def check_line(line: dict, **options):
    return check_numbers(
        line["answer"],
        retrieved_values=line["retrieved_values"],
        language=line["language"],
        expected_values=line["expected_values"],
        **options,
    )


def test_it_finds_a03s_35_unsupported_and_reads_2020_as_a_year():
    line = running_example()["a03"]
    result = check_line(line)
    assert (result.verdict, result.numbers_counted, result.numbers_unsupported) == ("unsupported", 1, 1)
    thirty_five, year = result.numbers
    assert (thirty_five.text, thirty_five.start, thirty_five.end) == ("35", 34, 36)
    assert line["answer"][thirty_five.start : thirty_five.end] == "35"
    assert (thirty_five.counted, thirty_five.supported, thirty_five.matched) == (True, False, None)
    assert (year.text, year.year, year.counted, year.supported) == ("2020", True, False, None)
    assert line["answer"][year.start : year.end] == "2020"
    assert [number.text for number in result.unsupported_numbers] == ["35"]


def test_an_ordinal_is_marked_as_one_not_as_a_year():
    # /api/check and the answer pages told "21st" apart from a year by
    # "neither supported nor not", which an ordinal now also is.
    line = running_example()["a03"] | {"answer": "In the 21st century the rate was 35 in 2020."}
    numbers = {n.text: (n.year, n.ordinal, n.counted) for n in check_line(line).numbers}
    assert numbers == {"21": (False, True, False), "35": (False, False, True), "2020": (True, False, False)}
    assert check_line(line).numbers[0].as_dict()["ordinal"] is True


def test_it_finds_a06s_31_unsupported():
    line = running_example()["a06"]
    result = check_line(line)
    assert result.verdict == "unsupported"
    assert [(n.text, n.start, n.end, n.counted, n.supported) for n in result.numbers] == [
        ("31", 42, 44, True, False),
        ("2021", 49, 53, False, None),
    ]
    assert line["answer"][42:44] == "31"


def test_it_finds_every_number_of_a01_supported_by_a_retrieved_value():
    line = running_example()["a01"]
    result = check_line(line)
    assert (result.verdict, result.numbers_counted, result.numbers_unsupported) == ("supported", 2, 0)
    assert [(n.text, n.start, n.end, n.year, n.matched, n.matched_in) for n in result.numbers] == [
        ("7.6", 6, 9, False, 7.6, "retrieved"),
        ("2024", 51, 55, True, None, None),
        ("7.9", 67, 70, False, 7.9, "retrieved"),
        ("2023", 75, 79, True, None, None),
    ]
    for number in result.numbers:
        assert line["answer"][number.start : number.end] == number.text


def test_it_counts_every_line_of_the_running_example_as_the_scorer_does():
    for line in running_example().values():
        scored = check_answer(line, line)
        result = check_line(line)
        assert (result.numbers_counted, result.numbers_unsupported) == (
            scored.counts[UNSUPPORTED_N],
            scored.counts[UNSUPPORTED_K],
        )


def test_the_modules_example_withholds_the_unsupported_figure():
    text = "The under-five mortality rate was 35 per 1,000 live births in 2020."
    result = check_numbers(text, retrieved_values=[41.0, 44.0], language="en")
    for number in reversed(result.unsupported_numbers):
        text = text[: number.start] + "[figure withheld]" + text[number.end :]
    assert text == "The under-five mortality rate was [figure withheld] per 1,000 live births in 2020."


def test_it_says_no_numbers_when_none_is_counted():
    assert check_numbers("In 2024, nothing.", retrieved_values=[]).verdict == "no numbers"
    assert check_numbers("", retrieved_values=[1.0]).as_dict() == {
        "verdict": "no numbers",
        "numbers_counted": 0,
        "numbers_unsupported": 0,
        "numbers": [],
    }


def test_it_matches_an_expected_value_after_the_retrieved_ones():
    result = check_numbers("It was 41, then 44.", retrieved_values=[44], expected_values=[41])
    assert [(n.matched, n.matched_in) for n in result.numbers] == [(41.0, "expected"), (44.0, "retrieved")]


def test_it_applies_the_scorers_options():
    text = "It was 7.6, 7.6 again and 1.2 million."
    plain = check_numbers(text, retrieved_values=[7.62, 1.2e6])
    assert (plain.numbers_counted, plain.numbers_unsupported) == (3, 3)
    chosen = check_numbers(
        text, retrieved_values=[7.62, 1.2e6], rounding=True, scale_words=True, distinct=True
    )
    assert (chosen.numbers_counted, chosen.numbers_unsupported) == (2, 0)
    assert [n.counted for n in chosen.numbers] == [True, False, True]
    assert chosen.numbers[2].readings == (1.2, 1.2e6)


def test_its_dict_is_json_even_for_a_figure_too_large_for_a_float():
    result = check_numbers("9" * 400 + " and 7.6", retrieved_values=[7.6])
    assert result.as_dict()["numbers"][0]["readings"] == [None]
    assert json.loads(json.dumps(result.as_dict(), allow_nan=False)) == result.as_dict()


@pytest.mark.parametrize(
    ("arguments", "field", "message"),
    [
        ({"retrieved_values": [1, "2"]}, "retrieved_values[1]", "must be a number, not a string ('2')"),
        ({"retrieved_values": [True]}, "retrieved_values[0]", "must be a number, not true"),
        ({"retrieved_values": [float("nan")]}, "retrieved_values[0]", "must be a finite number, not NaN"),
        ({"retrieved_values": [1e308 * 10]}, "retrieved_values[0]", "must be a finite number, not infinity"),
        ({"retrieved_values": "7.6"}, "retrieved_values", "must be a list of numbers, not a string ('7.6')"),
        ({"retrieved_values": None}, "retrieved_values", "must be a list of numbers, not null"),
        ({"expected_values": [None]}, "expected_values[0]", "must be a number, not null"),
        ({"answer": b"7.6"}, "answer", "must be a string, not bytes"),
        ({"answer": "€" * 34134}, "answer", "is 102,402 bytes in UTF-8; an answer may hold at most 102,400"),
        ({"language": None}, "language", "must be a string, not null"),
        ({"rounding": 1}, "rounding", "must be true or false, not int"),
    ],
)
def test_it_refuses_bad_input_naming_the_field(arguments, field, message):
    arguments = {"answer": "It was 7.6.", "retrieved_values": [7.6], **arguments}
    with pytest.raises(CheckInputError, match="^" + re.escape(f"{field} {message}") + "$") as raised:
        check_numbers(arguments.pop("answer"), **arguments)
    assert raised.value.field == field
    assert isinstance(raised.value, ValueError)


def test_it_takes_an_answer_of_exactly_100_kb():
    assert check_numbers("€" * 34133 + "1", retrieved_values=[1]).verdict == "supported"  # 102,400 bytes


def test_it_agrees_with_the_scorer_on_generated_answers():
    questions = synthetic.generate_question_set(questions=600, seed=21)
    by_id = {q["question_id"]: q for q in questions}
    for line in synthetic.generate_run(question_set=questions, answers=600, seed=22):
        question = by_id[line["question_id"]]
        for options in (Options(), Options(rounding=True, scale_words=True, distinct=True)):
            scored = check_answer(line, question, options=options)
            result = check_numbers(
                line.get("answer") or "",
                retrieved_values=line.get("retrieved_values") or (),
                language=line.get("language") or "",
                expected_values=question.get("expected_values") or (),
                rounding=options.rounding,
                scale_words=options.scale_words,
                distinct=options.distinct,
            )
            assert (result.numbers_counted, result.numbers_unsupported) == (
                scored.counts[UNSUPPORTED_N],
                scored.counts[UNSUPPORTED_K],
            )


@settings(max_examples=300, deadline=None)
@given(
    words=st.lists(
        st.one_of(
            st.sampled_from(
                ["was", "in 2021", "per 1,000", "COVID-19", "HLTH_U5_MORT", "fell by", "million"]
            ),
            st.integers(min_value=-99_999, max_value=99_999).map(str),
            st.floats(min_value=-1e6, max_value=1e6, allow_nan=False).map(lambda value: f"{value:,.2f}"),
        ),
        max_size=12,
    ),
    values=st.lists(st.sampled_from([0.0, 7.6, -2.5, 41.0, 1000.0, 2021.0, 1.2e6]), max_size=5),
    language=st.sampled_from(["en", "fr", ""]),
    rounding=st.booleans(),
    scale_words=st.booleans(),
)
def test_it_counts_any_text_as_the_scorer_does(words, values, language, rounding, scale_words):
    text = " ".join(words)
    options = Options(rounding=rounding, scale_words=scale_words)
    line = {
        "question_id": "q",
        "answer": text,
        "language": language,
        "retrieved_values": values,
        "declined": False,
    }
    scored = check_answer(line, {"expected_behaviour": "answer", "expected_values": [41.0]}, options=options)
    result = check_numbers(
        text,
        retrieved_values=values,
        language=language,
        expected_values=[41.0],
        rounding=rounding,
        scale_words=scale_words,
    )
    assert (result.numbers_counted, result.numbers_unsupported) == (
        scored.counts[UNSUPPORTED_N],
        scored.counts[UNSUPPORTED_K],
    )
    assert [(n.text, n.start, n.supported) for n in result.numbers] == [
        (c.number.text, c.number.start, c.supported) for c in scored.numbers
    ]
    for number in result.numbers:
        assert text[number.start : number.end] == number.text
