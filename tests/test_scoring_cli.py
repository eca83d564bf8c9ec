import json
import subprocess
import sys

from scoring.__main__ import main
from tests.conftest import SHARED_DATA

RUN = SHARED_DATA / "answers_run_assistant-1.3_set-1.2.jsonl"
QUESTIONS = SHARED_DATA / "questions_set-1.2.jsonl"
COMBINED = SHARED_DATA / "running_example.jsonl"


def test_it_prints_the_spec_table_for_the_running_example(capsys):
    assert main([str(COMBINED)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "8 answers"
    rows = {line.split()[0]: line.split()[1:] for line in lines[3:6]}
    assert rows["all"] == [
        "0.83",
        "(n=6)",
        "0.88",
        "(n=8)",
        "0.50",
        "(n=2)",
        "1.00",
        "(n=6)",
        "0.25",
        "(n=8)",
    ]
    assert rows["language=en"] == [
        "0.75",
        "(n=4)",
        "0.83",
        "(n=6)",
        "0.50",
        "(n=2)",
        "1.00",
        "(n=4)",
        "0.33",
        "(n=6)",
    ]
    assert rows["language=fr"] == [
        "1.00",
        "(n=2)",
        "1.00",
        "(n=2)",
        "-",
        "1.00",
        "(n=2)",
        "0.00",
        "(n=2)",
    ]
    assert "findings: 5" in lines
    assert "  a07: citation: cited EDU_STATS_2024, which was not retrieved" in lines


def test_it_scores_a_log_against_its_question_set_as_json():
    out = subprocess.run(
        [sys.executable, "-m", "scoring", str(RUN), "--questions", str(QUESTIONS), "--json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    result = json.loads(out)
    assert result["answers"] == 8
    assert result["slices"]["all"]["numeric_accuracy"] == {"k": 5, "n": 6}
    assert result["slices"]["all"]["unsupported_numbers"] == {"k": 2, "n": 8}
    assert "refusal_accuracy" not in result["slices"]["language=fr"]
    assert [(f["question_id"], f["kind"]) for f in result["findings"]] == [
        ("a03", "numeric"),
        ("a03", "unsupported"),
        ("a06", "refusal"),
        ("a06", "unsupported"),
        ("a07", "citation"),
    ]


def test_it_reports_bad_lines_on_stderr_and_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"assistant_version": "x", "set_version": "1.2"}\n{"question_id": "a01"}\n')
    assert main([str(bad), "--questions", str(QUESTIONS)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: line 2, field language: missing" in err


def test_it_needs_expected_values_from_somewhere(capsys):
    assert main([str(RUN)]) == 2
    assert "give the question set with --questions" in capsys.readouterr().err
