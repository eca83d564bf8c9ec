"""Tests for scoring.synthetic.realistic: the benchmark's answers shaped like
spec 000's running example, which the scorer and the reference script must
count alike."""

from __future__ import annotations

import importlib.util
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from scoring import synthetic
from scoring.__main__ import main
from scoring.numbers import extract_numbers
from scoring.runner import score_file
from scoring.synthetic.realistic import generate_realistic_run

ROOT = Path(__file__).resolve().parents[2]
# Beside the checkout, as on every developer machine and in CI.
REFERENCE = ROOT.parent / "shared" / "baselines" / "answer_scores.py"

# The benchmark's own comparison of the CLI's counts with the reference's.
_spec = importlib.util.spec_from_file_location("bench_scoring", ROOT / "bench" / "bench_scoring.py")
bench_scoring = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_scoring)

ANSWERS = 1500


@pytest.fixture(scope="module")
def questions() -> list[dict]:
    return synthetic.generate_question_set(questions=ANSWERS, seed=5, set_version="realistic-test")


@pytest.fixture(scope="module")
def rows(questions) -> list[dict]:
    return generate_realistic_run(question_set=questions, answers=ANSWERS, seed=6)


def test_it_gives_the_same_answers_for_the_same_seed(questions, rows):
    assert generate_realistic_run(question_set=questions, answers=ANSWERS, seed=6) == rows
    assert generate_realistic_run(question_set=questions, answers=ANSWERS, seed=7) != rows


def test_it_refuses_more_answers_than_questions(questions):
    with pytest.raises(ValueError, match="answers must be from 0 to the 1500 questions, not 1501"):
        generate_realistic_run(question_set=questions, answers=ANSWERS + 1, seed=6)


def test_it_writes_answers_shaped_like_the_running_example(rows):
    def answers_in(language: str) -> str:
        return "\n".join(row["answer"] for row in rows if row["language"] == language)

    stated = [
        len(extract_numbers(row["answer"], language=row["language"])) for row in rows if not row["declined"]
    ]
    assert 4 <= statistics.median(stated) <= 6
    assert {row["language"] for row in rows} == {"en", "fr", "es"}
    for language in ("fr", "es"):
        assert re.search(r"\d,\d", answers_in(language)), f"no decimal comma in {language}"
        assert re.search(r"\d \d{3}\b", answers_in(language)), f"no thousands grouped by a space in {language}"
    english = answers_in("en")
    assert re.search(r"\d,\d{3}\b", english)
    assert re.search(r"\bper 1,000 ", english)
    assert re.search(r"\b20\d\d-\d\d-\d\d\b", english)
    assert any(row["declined"] and extract_numbers(row["answer"]) for row in rows)
    assert any(len(row["cited_ids"]) >= 2 for row in rows)
    assert all(row["tool_calls"] and row["submitted_at"] < row["received_at"] for row in rows)


def test_its_lines_score_as_the_reference_script_counts_them(tmp_path, questions, rows, capsys):
    combined = tmp_path / "combined.jsonl"
    synthetic.write_jsonl(combined, synthetic.combined_form(questions, rows))
    run = tmp_path / "answers_run_bench-1.0_set-realistic-test.jsonl"
    synthetic.write_jsonl(run, rows, header={"assistant_version": "bench-1.0", "set_version": "realistic-test"})
    question_set = tmp_path / "questions_set-realistic-test.jsonl"
    synthetic.write_jsonl(question_set, questions, header={"set_version": "realistic-test"})

    # score_file raises LogFileError on any bad line.
    assert score_file(combined, None).answers == ANSWERS
    reference = subprocess.run(
        [sys.executable, str(REFERENCE), str(combined)], capture_output=True, text=True, check=True
    ).stdout
    # Every measure the findings count exactly has a k to compare.
    assert set(bench_scoring.reference_whole_run_k(reference, bench_scoring.reference_table(reference))) == {
        "numeric_accuracy",
        "citation_validity",
        "refusal_accuracy",
        "unsupported_numbers",
    }
    for arguments in ([str(combined)], [str(run), "--questions", str(question_set)]):
        assert main([*arguments, "--json"]) == 0
        cli = capsys.readouterr().out
        assert json.loads(cli)["slices"]["all"]["unsupported_numbers"]["k"] > 0
        assert bench_scoring.differences(reference, cli) == []
