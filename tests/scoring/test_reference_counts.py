"""The default counts equal spec 000's reference script's counts.

The script (``../shared/baselines/answer_scores.py``) is loaded as it stands
and its per-answer ``score`` applied to a generated run in the combined form;
the CLI scores the same file. Every slice and every measure the script has
must carry the same k and n.
"""

import importlib.util
import json
from collections import Counter
from pathlib import Path

import pytest

from scoring import synthetic
from scoring.__main__ import main
from tests.conftest import SHARED_DATA

# Beside the checkout, as on every developer machine and in CI.
SCRIPT = Path(__file__).resolve().parents[3] / "shared" / "baselines" / "answer_scores.py"

# The script's measure names and ours.
MEASURE_NAMES = {
    "numeric": "numeric_accuracy",
    "citation": "citation_validity",
    "declined_when_expected": "refusal_accuracy",
    "answered_when_expected": "answer_rate",
    "unsupported": "unsupported_numbers",
}


@pytest.fixture(scope="module")
def reference():
    spec = importlib.util.spec_from_file_location("answer_scores", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def reference_counts(module, rows: list[dict]) -> dict:
    """{slice: {measure: {"k", "n"}}} as the script counts them (its value
    is 1 for a success, and for "unsupported" 1 for an unsupported number)."""
    counts: dict[str, Counter] = {}
    for row in rows:
        checks, _ = module.score(row)
        for slice_name in ("all", f"language={row['language']}"):
            tally = counts.setdefault(slice_name, Counter())
            for name, value in checks:
                tally[(MEASURE_NAMES[name], "k")] += int(value)
                tally[(MEASURE_NAMES[name], "n")] += 1
    return {
        slice_name: {
            measure: {"k": tally[(measure, "k")], "n": tally[(measure, "n")]}
            for measure in MEASURE_NAMES.values()
            if tally[(measure, "n")]
        }
        for slice_name, tally in counts.items()
    }


def combined_run(size: int, seed: int) -> list[dict]:
    questions = synthetic.generate_question_set(questions=size, seed=seed)
    by_id = {q["question_id"]: q for q in questions}
    answers = synthetic.generate_run(question_set=questions, answers=size, seed=seed + 1)
    return [
        {
            **answer,
            "expected_behaviour": by_id[answer["question_id"]]["expected_behaviour"],
            "expected_values": by_id[answer["question_id"]]["expected_values"],
        }
        for answer in answers
    ]


def cli_slices(path, capsys, *args) -> dict:
    assert main([str(path), "--json", *args]) == 0
    result = json.loads(capsys.readouterr().out)
    return {
        slice_name: {
            measure: {"k": c["k"], "n": c["n"]}
            for measure, c in measures.items()
            if measure in MEASURE_NAMES.values()
        }
        for slice_name, measures in result["slices"].items()
    }


def test_it_counts_a_generated_20000_answer_run_as_the_reference_script(reference, tmp_path, capsys):
    rows = combined_run(20_000, seed=91)
    path = tmp_path / "answers_run_bench-1.0_set-bench.jsonl"
    synthetic.write_jsonl(path, rows)
    expected = reference_counts(reference, rows)
    ours = cli_slices(path, capsys)
    assert ours == expected
    # The run repeats figures and citations, so counting each distinct value
    # once must give a smaller n: the comparison above tests the counting.
    distinct = cli_slices(path, capsys, "--distinct")
    assert distinct["all"]["unsupported_numbers"]["n"] < expected["all"]["unsupported_numbers"]["n"]


def test_it_counts_the_running_example_as_the_reference_script(reference, capsys):
    path = SHARED_DATA / "running_example.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [row for row in rows if "question_id" in row]
    assert cli_slices(path, capsys) == reference_counts(reference, rows)
