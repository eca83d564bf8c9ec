"""Judge reports as JSON, YAML or TOML files, chosen by the path's suffix (spec 003)."""

import json
import tomllib

import pytest
import yaml

from scoring.judge.evaluate import AnswerEvaluation, evaluate_answers
from scoring.judge.preference import evaluate_preference
from scoring.judge.reports import without_nulls

DATASET = [
    {"id": "q1", "question": "What is the capital of France?", "reference": "Paris", "contexts": ["Paris."]},
    {
        "id": "q2",
        "question": "Which planet is the largest?",
        "reference": "Jupiter",
        "contexts": ["Jupiter."],
    },
]


def rating_four(prompt, system):
    return json.dumps({"score": 4, "reason": "Direct answer."})


def failing_on_jupiter(question):
    if "planet" in question:
        raise RuntimeError("the system is down")
    return "Paris"


def report_with_nulls():
    """A report holding every kind of null a real one holds: an answer the system
    never gave, verdicts without error, judges without a base URL, and an alpha
    that is not defined because both judges rate alike."""
    return evaluate_answers(
        failing_on_jupiter,
        DATASET,
        judges={"first": rating_four, "second": rating_four},
        metrics=["answer_relevance"],
        keep_verdicts=True,
    )


def test_it_writes_yaml_for_yaml_paths_and_toml_for_toml_paths(tmp_path):
    report = report_with_nulls()
    report.write(tmp_path / "answers.json")
    document = json.loads((tmp_path / "answers.json").read_text())
    assert document["rows"][1]["answer"] is None
    assert document["agreement"]["answer_relevance"]["alpha"] is None
    for name in ("answers.yaml", "answers.yml"):
        report.write(tmp_path / name)
        assert yaml.safe_load((tmp_path / name).read_text()) == document
    report.write(tmp_path / "answers.toml")
    written = tomllib.loads((tmp_path / "answers.toml").read_text())
    assert written == without_nulls(document)
    assert "answer" not in written["rows"][1]
    assert written["rows"][0]["answer"] == "Paris"


def test_it_writes_json_for_any_other_suffix(tmp_path):
    report = report_with_nulls()
    report.write(tmp_path / "answers.json")
    report.write(tmp_path / "answers.report")
    assert (tmp_path / "answers.report").read_text() == (tmp_path / "answers.json").read_text()


def test_it_reads_yaml_and_toml_back_as_it_reads_json(tmp_path):
    report = report_with_nulls()
    for name in ("answers.json", "answers.yaml", "answers.yml", "answers.toml"):
        report.write(tmp_path / name)
    from_json = AnswerEvaluation.read(tmp_path / "answers.json")
    for name in ("answers.yaml", "answers.yml"):
        again = AnswerEvaluation.read(tmp_path / name)
        assert (again.rows, again.columns, again.judges, again.usage, again.agreement) == (
            from_json.rows,
            from_json.columns,
            from_json.judges,
            from_json.usage,
            from_json.agreement,
        )
    from_toml = AnswerEvaluation.read(tmp_path / "answers.toml")
    # The one difference the rule allows: a null is an absent key, except that a
    # score left undefined reads back as NaN and an undefined alpha as None.
    assert from_toml.rows == [without_nulls(row) for row in from_json.rows]
    assert from_toml.judges == without_nulls(from_json.judges)
    assert (from_toml.columns, from_toml.usage, from_toml.agreement) == (
        from_json.columns,
        from_json.usage,
        from_json.agreement,
    )
    assert from_toml.agreement["answer_relevance"]["alpha"] is None
    assert json.dumps(from_toml.metrics) == json.dumps(report.metrics)
    assert (
        from_toml.coverage
        == report.coverage
        == {
            "exact_match": 1,
            "token_f1": 1,
            "answer_relevance/first": 1,
            "answer_relevance/second": 1,
            "answer_relevance": 1,
        }
    )
    assert from_toml.errors == report.errors == {"system": 1}


def test_it_compares_a_toml_report_as_scored_by_the_same_judges(tmp_path):
    report = report_with_nulls()
    report.write(tmp_path / "answers.toml")
    comparison = report.compare(AnswerEvaluation.read(tmp_path / "answers.toml"))
    assert comparison.warnings == []
    assert {m.basis for m in comparison.metrics} == {"measured"}
    assert {m.delta for m in comparison.metrics} == {0.0}


def test_it_refuses_a_null_in_a_list_for_toml_and_keeps_the_paid_report_as_json(tmp_path):
    report = AnswerEvaluation(
        rows=[{"id": "q1", "verdicts": {"x": {"verdict": {"notes": ["a", None]}}}}], columns=[]
    )
    with pytest.raises(ValueError) as caught:
        report.write(tmp_path / "answers.toml")
    assert str(caught.value) == (
        "rows[0].verdicts.x.verdict.notes[1] is null inside a list, which TOML cannot hold; "
        f"the report was written as JSON to {tmp_path / 'answers.json'} instead"
    )
    assert not (tmp_path / "answers.toml").exists()
    # The model calls behind it were made and paid for: nothing of them is lost.
    assert AnswerEvaluation.read(tmp_path / "answers.json").rows == report.rows


@pytest.mark.parametrize("name, text", [("bad.yaml", "rows: [unclosed"), ("bad.toml", "rows = [")])
def test_it_refuses_a_yaml_or_toml_file_that_does_not_parse(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    with pytest.raises(ValueError, match=rf"^{tmp_path / name} is not an answer evaluation report \("):
        AnswerEvaluation.read(tmp_path / name)


def test_it_writes_a_preference_report_by_the_suffix_too(tmp_path):
    def always_first(prompt, system):
        return '{"winner": "answer_a", "reason": "The first one."}'

    duel = evaluate_preference(
        DATASET, ["Paris", "Jupiter"], ["Lyon", "Saturn"], judges={"biased": always_first}
    )
    duel.write(tmp_path / "duel.json")
    duel.write(tmp_path / "duel.yaml")
    duel.write(tmp_path / "duel.toml")
    document = json.loads((tmp_path / "duel.json").read_text())
    assert yaml.safe_load((tmp_path / "duel.yaml").read_text()) == document
    assert tomllib.loads((tmp_path / "duel.toml").read_text()) == without_nulls(document)


def test_it_refuses_a_report_whose_agreement_is_not_a_table(tmp_path):
    (tmp_path / "odd.yaml").write_text("columns: []\nrows: []\nagreement: [0.5]\n")
    with pytest.raises(ValueError, match=rf"^{tmp_path / 'odd.yaml'} is not an answer evaluation report \("):
        AnswerEvaluation.read(tmp_path / "odd.yaml")
