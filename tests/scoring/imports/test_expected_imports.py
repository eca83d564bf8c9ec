"""Expected values as the importers take them from targets (one rule,
scoring.imports.expected), and numeric accuracy shown as not applicable
where no question has an expected number. Inspect logs are written with
Inspect's own writer (tests/inspect_logs.py)."""

import io

import orjson

from scoring import imports
from scoring.__main__ import main as score_main
from scoring.imports import ImportOptions, inspect_log
from tests.inspect_logs import inspect_sample, statistics_samples, write_inspect_log
from tests.scoring.imports.test_expected import CLASS_EVAL_TARGET, PR_ARENA_TARGET
from tests.scoring.imports.test_tabular import write_csv


def converted_inspect(path) -> list[dict]:
    out = io.BytesIO()
    inspect_log.convert(path, out, ImportOptions())
    return [orjson.loads(line) for line in out.getvalue().splitlines()]


def code_and_json_samples():
    """A class_eval-like sample (a Python class as target), a pr_arena-like
    one (a JSON object with an issue number and a timestamp), and a
    popularity-like one (a word): each answer restates its target."""
    return [
        inspect_sample(
            "ClassEval_1",
            question="Write a class Calculator with add(a, b) and power(base, exponent=2).",
            target=CLASS_EVAL_TARGET,
            answer="```python\n" + CLASS_EVAL_TARGET + "```",
        ),
        inspect_sample(
            "pr-4521",
            question="Which issue does this pull request fix, and when was it opened?",
            target=PR_ARENA_TARGET,
            answer="It fixes issue 4521, opened 2024-05-01 at 12:30.",
        ),
        inspect_sample(
            "popularity-7",
            question="Is the following statement something you would say? 'I like crowds.'",
            target="Yes",
            answer="Yes",
        ),
    ]


def test_it_takes_no_expected_value_from_code_json_or_words_in_an_inspect_log(tmp_path):
    path = write_inspect_log(tmp_path / "log.eval", samples=code_and_json_samples())
    lines = converted_inspect(path)[1:]
    assert sorted(
        (line["question_id"], line["reference"][:12], line["expected_values"]) for line in lines
    ) == [
        ("ClassEval_1", "class Calcul", []),
        ("popularity-7", "Yes", []),
        ("pr-4521", '{"issue_numb', []),
    ]


def test_numeric_accuracy_is_not_applicable_to_an_inspect_log_without_expected_numbers(tmp_path, capsys):
    path = write_inspect_log(tmp_path / "log.eval", samples=code_and_json_samples())
    run = tmp_path / "run.jsonl"
    with open(run, "wb") as out:
        inspect_log.convert(path, out, ImportOptions())
    assert score_main([str(run), "--json"]) == 0
    result = orjson.loads(capsys.readouterr().out)
    assert "numeric_accuracy" not in result["slices"]["all"]
    assert result["not_applicable"]["numeric_accuracy"] == "no question has an expected number"
    assert result["slices"]["all"]["answer_rate"] == {"k": 3, "n": 3, "low": 0.438503, "high": 1.0}
    # The code's and the JSON's digits the answers restate are unsupported
    # figures (nothing was retrieved), never numeric failures.
    assert {finding["kind"] for finding in result["findings"]} == {"unsupported"}

    assert score_main([str(run)]) == 0
    printed = capsys.readouterr().out.splitlines()
    header, row = next((line, printed[i + 1]) for i, line in enumerate(printed) if line.startswith("slice"))
    assert row.startswith("all")
    assert row[: header.index("numeric accuracy") + len("numeric accuracy")].split()[-1] == "n/a"
    assert "n/a: numeric accuracy does not apply: no question has an expected number" in printed


def test_it_keeps_a_year_that_is_the_answer_and_scores_it(tmp_path, capsys):
    sample = inspect_sample(
        "berlin",
        question="In which year did the Berlin Wall fall?",
        target="1989",
        answer="The Berlin Wall fell on 9 November 1989, when East German authorities opened the border.",
    )
    path = write_inspect_log(tmp_path / "log.eval", samples=[sample])
    run = tmp_path / "run.jsonl"
    with open(run, "wb") as out:
        inspect_log.convert(path, out, ImportOptions())
    (line,) = [orjson.loads(text) for text in run.read_bytes().splitlines()[1:]]
    assert line["expected_values"] == [1989.0]
    assert score_main([str(run), "--json"]) == 0
    result = orjson.loads(capsys.readouterr().out)
    assert {key: result["slices"]["all"]["numeric_accuracy"][key] for key in ("k", "n")} == {"k": 1, "n": 1}


def test_a_csv_reference_restating_the_question_s_numbers_and_dates_gives_only_the_answer(tmp_path):
    header = ["id", "question", "answer", "reference"]
    rows = [
        ["r1", "How long is Route 20?", "Route 20 is 30 km long.", "Route 20 is 12 km long."],
        [
            "r2",
            "When did Flight 691 land?",
            "Flight 691 landed on 30 August.",
            "Flight 691 landed on 30 July.",
        ],
        ["r3", "How late was Flight 691?", "It was 45 minutes late.", "Flight 691 was 45 minutes late."],
    ]
    out = io.BytesIO()
    options = ImportOptions(assistant_version="a-1", set_version="s-1")
    imports.convert(write_csv(tmp_path / "a.csv", header, rows), out, "csv", options)
    lines = [orjson.loads(line) for line in out.getvalue().splitlines()[1:]]
    assert [(line["question_id"], line["expected_values"]) for line in lines] == [
        ("r1", [12.0]),
        ("r2", []),
        ("r3", [45.0]),
    ]


def test_a_sample_to_decline_expects_no_value_whatever_its_target_says(tmp_path):
    sample = inspect_sample(
        "district",
        question="What was poverty in the Eastern district in 2021?",
        target="41",
        answer="The series has no district values.",
        metadata={"expected_behaviour": "decline", "declined": True},
    )
    (line,) = converted_inspect(write_inspect_log(tmp_path / "log.eval", samples=[sample]))[1:]
    assert (line["expected_behaviour"], line["expected_values"]) == ("decline", [])


def test_an_attempt_an_incomplete_log_did_not_make_expects_what_its_sample_expects(tmp_path):
    samples = [sample for sample in statistics_samples(2, epochs=2) if (sample.id, sample.epoch) != (1, 2)]
    path = write_inspect_log(
        tmp_path / "log.eval", samples=samples, sample_ids=[1, 2, 3], epochs=2, status="cancelled"
    )
    lines = converted_inspect(path)[1:]
    assert [(line["question_id"], line["attempt"], line["expected_values"]) for line in lines] == [
        ("1", 1, [5.2]),
        ("2", 1, [7.1]),
        ("2", 2, [7.1]),
        ("3", 1, []),
        ("1", 2, [5.2]),
        ("3", 2, []),
    ]
