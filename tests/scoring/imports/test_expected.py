"""Expected values read from a target (scoring.imports.expected): only a
target that is a number, a number with its unit or a short phrase around
one number gives one; code, JSON, lists, long prose and dates stay
reference texts."""

import json

import pytest

from scoring.__main__ import main as score
from scoring.imports.__main__ import main as import_
from scoring.imports.expected import expected_values, written_values

CLASS_EVAL_TARGET = """class Calculator:
    def add(self, a, b):
        return a + b

    def power(self, base, exponent=2):
        return base ** exponent
"""
PR_ARENA_TARGET = '{"issue_number": 4521, "created_at": "2024-05-01T12:30:00Z", "labels": ["bug"]}'


@pytest.mark.parametrize(
    ("target", "language", "values"),
    [
        ("18", "en", [18.0]),
        ("-2.5", "en", [-2.5]),
        ("1,234", "en", [1234.0]),
        ("7,3 %", "fr", [7.3]),
        ("212 degrees Fahrenheit", "en", [212.0]),
        ("5 days", "en", [5.0]),
        ("37.5 %", "en", [37.5]),
        ("$1,200", "en", [1200.0]),
        ("7.6% in 2024.", "en", [7.6]),
        ("41 per 1,000 live births in 2020.", "en", [41.0]),
        ("7,3 % au deuxième trimestre 2025 (provisoire).", "fr", [7.3]),
    ],
)
def test_it_reads_a_number_a_number_with_its_unit_and_a_short_phrase_around_one(target, language, values):
    assert expected_values(target, question="What was it?", language=language) == values


@pytest.mark.parametrize(
    "target",
    [
        CLASS_EVAL_TARGET,
        "return a + b * 2",
        "print(len(items) + 1)",
        PR_ARENA_TARGET,
        "[3, 5, 7]",
        "3, 5, 7",
        "between 5 and 7",
        "5-7 days",
        "\\frac{1}{2}",
        "x = 42",
        "The national statistical office publishes the headcount ratio every 2 years, "
        "after the household survey is weighted and checked by its methodology unit.",
        "Paris",
        "",
    ],
)
def test_it_gives_no_expected_value_for_code_json_lists_long_prose_or_words(target):
    assert expected_values(target, question="What is it?", language="en") == []


def test_it_leaves_out_numbers_a_free_text_reference_restates_from_the_question():
    assert expected_values("Route 20 is 12 km long", question="How long is Route 20?", language="en") == [
        12.0
    ]
    assert expected_values(
        "Flight 691 landed 45 minutes late", question="How late was Flight 691?", language="en"
    ) == [45.0]
    # Restated and nothing else: no expected value at all.
    assert expected_values("Route 20", question="Which road is Route 20?", language="en") == []


def test_it_keeps_a_bare_number_that_the_question_also_holds():
    question = "A bus leaves every 20 minutes. How many minutes apart are two buses?"
    assert expected_values("20", question=question, language="en") == [20.0]
    assert expected_values("20 minutes", question=question, language="en") == [20.0]


@pytest.mark.parametrize(
    ("target", "language"),
    [
        ("30 July", "en"),
        ("July 30, 2021", "en"),
        ("30th of July 2021", "en"),
        ("2021-07-30", "en"),
        ("30/07/2021", "en"),
        ("July 2021", "en"),
        ("30 juillet 2021", "fr"),
        ("1er juillet", "fr"),
        ("30 de julio de 2021", "es"),
        ("2021年7月30日", "zh"),
        ("The Berlin Wall fell on 9 November 1989.", "en"),
    ],
)
def test_it_reads_a_date_as_one_value_that_is_not_a_number(target, language):
    assert expected_values(target, question="When was it?", language=language) == []


def test_it_reads_the_number_beside_a_date_and_not_the_date_s_pieces():
    assert expected_values("7.6% on 30 July 2021", question="What was it?", language="en") == [7.6]


@pytest.mark.parametrize("target", ["1989", "in 1989", "It fell in 1989.", "1989 AD"])
def test_it_keeps_a_year_that_is_the_expected_answer(target):
    assert expected_values(target, question="In which year did the Berlin Wall fall?", language="en") == [
        1989.0
    ]


def test_it_takes_each_of_several_targets_once():
    assert expected_values(["62.3", "62.3%"], question="What share?", language="en") == [62.3]
    assert expected_values(["five", "5"], question="How many?", language="en") == [5.0]


def test_written_values_reads_every_number_of_passages_but_years():
    assert written_values(["7.6 in 2024, 7.9 in 2023.", "7.6 again; 41 per 1,000"], language="en") == [
        7.6,
        7.9,
        41.0,
    ]


def test_it_counts_the_words_of_a_script_written_without_spaces():
    # Four runs between spaces, but a sentence of 30 characters: prose, not a phrase.
    prose = "该国统计局每两年在住户调查加权并经方法部门核对后 发布 3 项贫困人口比例数据"
    assert expected_values(prose, question="发布多少项？", language="zh") == []
    assert expected_values("3 项", question="发布多少项？", language="zh") == [3.0]


# A figure of over 308 digits is past a float: float() reads it as infinite,
# which JSON writes as null.
HUGE = "1" + "0" * 400


def test_it_gives_no_expected_value_for_a_number_too_large_for_a_float():
    assert expected_values(HUGE, question="big?", language="en") == []
    assert expected_values(f"{HUGE} km", question="big?", language="en") == []
    assert expected_values([HUGE, "5"], question="big?", language="en") == [5.0]
    # Still a phrase around two numbers, which gives none.
    assert expected_values(f"{HUGE} or 5", question="big?", language="en") == []


def test_written_values_leave_out_a_number_too_large_for_a_float():
    assert written_values([f"{HUGE} and 7.6"], language="en") == [7.6]


def test_a_huge_reference_imports_as_a_question_without_an_expected_number_that_scores(tmp_path):
    dataset = tmp_path / "big.jsonl"
    dataset.write_text(json.dumps({"id": 1, "question": "big?", "reference": HUGE}) + "\n")
    question_set = tmp_path / "set.jsonl"
    assert import_(["qa", "open", str(dataset), "--out", str(question_set)]) == 0
    (question,) = [json.loads(line) for line in question_set.read_text().splitlines()]
    assert question["expected_values"] == []

    rows = tmp_path / "big.csv"
    rows.write_text(f"id,question,response,reference\n1,big?,about 5,{HUGE}\n")
    run = tmp_path / "run.jsonl"
    assert import_([str(rows), "--assistant-version", "a", "--set-version", "s", "--out", str(run)]) == 0
    _header, line = [json.loads(text) for text in run.read_text().splitlines()]
    assert line["expected_values"] == []
    assert score([str(run), "--json"]) == 0
