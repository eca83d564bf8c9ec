import json
import subprocess
import sys

import pytest

from scoring.__main__ import main
from scoring.declines import NO_DECLINE_WARNING
from scoring.stats.rates import rate
from tests.conftest import SHARED_DATA

RUN = SHARED_DATA / "answers_run_assistant-1.3_set-1.2.jsonl"
QUESTIONS = SHARED_DATA / "questions_set-1.2.jsonl"
COMBINED = SHARED_DATA / "running_example.jsonl"


def run_json(*args) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "scoring", *map(str, args), "--json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out)


def test_it_prints_the_spec_figures_with_intervals_for_the_running_example(capsys):
    assert main([str(COMBINED)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "8 answers"
    rows = {line.split()[0]: " ".join(line.split()[1:]) for line in lines[3:6]}
    assert rows["all"].startswith(
        "0.83 (n=6) [0.44-0.97] 0.88 (n=8) [0.53-0.98] 0.50 (n=2) [0.09-0.91] "
        "1.00 (n=6) [0.61-1.00] 0.25 (n=8, eff. 6) [0.06-0.63] 0.29 (n=7) [0.08-0.64]"
    )
    # Unsupported numbers: 2 of 8 numbers in 7 answers, a01's two both
    # supported. By hand: residuals k_g - p n_g are -0.5 (a01), 0.75 twice and
    # -0.25 four times, Σ² = 1.625, variance 7/6 · 1.625/64 = 0.0296, so
    # p(1 - p)/variance = 6.33 draws; below the floor n²/Σn² = 64/10 = 6.4 that
    # answers alike within would be worth, so 6.4 it is: Wilson of 1.6 of 6.4.
    assert rows["language=en"].startswith("0.75 (n=4) [0.30-0.95] 0.83 (n=6)")
    assert rows["language=fr"].startswith("1.00 (n=2) [0.34-1.00] 1.00 (n=2) [0.34-1.00] - 1.00 (n=2)")
    assert "findings: 5" in lines
    assert "  a07: citation: cited EDU_STATS_2024, which was not retrieved" in lines


def test_it_scores_a_log_against_its_question_set_as_json_with_intervals():
    result = run_json(RUN, "--questions", QUESTIONS)
    assert result["answers"] == 8
    assert result["slices"]["all"]["numeric_accuracy"] == {
        "k": 5,
        "n": 6,
        "low": 0.436497,
        "high": 0.969947,
    }
    assert result["slices"]["all"]["unsupported_numbers"]["k"] == 2
    assert result["slices"]["all"]["unsupported_answers"] == {
        "k": 2,
        "n": 7,
        "low": 0.082219,
        "high": 0.641066,
    }
    assert "refusal_accuracy" not in result["slices"]["language=fr"]
    assert result["interval"] == {"method": "wilson", "confidence": 0.95}
    assert [(f["question_id"], f["kind"]) for f in result["findings"]] == [
        ("a03", "numeric"),
        ("a03", "unsupported"),
        ("a06", "refusal"),
        ("a06", "unsupported"),
        ("a07", "citation"),
    ]


def test_it_gives_the_spec_interval_for_17_of_200():
    wilson = rate(17, 200)
    assert (round(wilson.low * 100, 1), round(wilson.high * 100, 1)) == (5.4, 13.2)


# Wilson's 5 of 6 worked by hand: centre (p + z²/2n)/(1 + z²/n) = 0.7032, half-width
# z·sqrt(p(1-p)/n + z²/4n²)/(1 + z²/n) = 0.2667. The other two are statsmodels'
# figures: the test shows the method chosen is the method used.
@pytest.mark.parametrize(
    ("method", "low", "high"),
    [
        ("wilson", 0.436497, 0.969947),
        ("jeffreys", 0.441943, 0.98138),
        ("agresti_coull", 0.417804, 0.988639),
    ],
)
def test_it_computes_the_chosen_interval(method, low, high):
    counts = run_json(RUN, "--questions", QUESTIONS, "--interval", method)["slices"]["all"][
        "numeric_accuracy"
    ]
    assert (counts["low"], counts["high"]) == (low, high)


def test_it_slices_by_any_question_field():
    result = run_json(RUN, "--questions", QUESTIONS, "--slice", "stratum")
    assert set(result["slices"]) == {"all", "stratum=level", "stratum=subnational"}
    assert result["slices"]["stratum=subnational"]["refusal_accuracy"]["k"] == 1


def test_it_records_the_options_it_scored_with():
    assert "options" not in run_json(RUN, "--questions", QUESTIONS)
    assert run_json(RUN, "--questions", QUESTIONS, "--rounding", "--scale-words")["options"] == {
        "rounding": True,
        "scale_words": True,
    }


def test_it_gives_the_same_result_on_several_workers():
    assert run_json(RUN, "--questions", QUESTIONS, "--workers", "2") == run_json(
        RUN, "--questions", QUESTIONS
    )


def test_it_reports_bad_lines_on_stderr_and_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"assistant_version": "x", "set_version": "1.2"}\n{"question_id": "a01"}\n')
    assert main([str(bad), "--questions", str(QUESTIONS)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: line 2, field language: missing" in err


def test_it_reports_an_id_answered_twice_across_chunks(tmp_path, capsys):
    lines = RUN.read_text().splitlines()
    run = tmp_path / "twice.jsonl"
    run.write_text("\n".join([*lines, lines[1]]) + "\n")
    assert main([str(run), "--questions", str(QUESTIONS)]) == 2
    assert f"{run}: line 10, field question_id: 'a01' already answered on line 2" in capsys.readouterr().err


def test_it_needs_expected_values_from_somewhere(capsys):
    assert main([str(RUN)]) == 2
    assert "give the question set with --questions" in capsys.readouterr().err


def test_it_prints_stable_resolution_and_timing_for_a_run_with_repeats(tmp_path):
    from scoring import synthetic

    questions = synthetic.generate_question_set(questions=60, seed=3)
    rows = synthetic.generate_run(
        question_set=questions, answers=60, seed=4, repetitions=3, timeout_share=0.05
    )
    run = tmp_path / "answers_run_x-1_set-demo-1.0.jsonl"
    set_file = tmp_path / "questions_set-demo-1.0.jsonl"
    synthetic.write_jsonl(
        run, rows, header={"assistant_version": "x-1", "set_version": "demo-1.0", "repetitions": 3}
    )
    synthetic.write_jsonl(set_file, questions, header={"set_version": "demo-1.0"})
    result = run_json(run, "--questions", set_file)
    assert (result["answers"], result["repetitions"], result["not_run"]) == (180, 3, 0)
    numeric = result["stable"]["all"]["numeric_accuracy"]
    assert sum(numeric["distribution"].values()) == numeric["stable"]["n"]
    # Every question is asked three times: a question per three attempts.
    assert numeric["stable"]["n"] * 3 == result["slices"]["all"]["numeric_accuracy"]["n"]
    assert numeric["over_attempts"]["n"] == result["slices"]["all"]["numeric_accuracy"]["n"]
    failures = result["timing"]["all"]["failures"]
    timeouts = sum(row.get("status") == "timeout" for row in rows)
    assert (failures["n"], failures["counts"]["timeout"]) == (180, timeouts)
    e2e = result["timing"]["all"]["e2e"]["by_source"]["timestamps"]
    assert e2e["n"] == 180 - timeouts  # a timeout is never a latency sample
    # One timing summary for the whole run and one per language it holds.
    languages = {f"language={row['language']}" for row in rows}
    assert set(result["timing"]) == {"all"} | languages
    assert sum(result["timing"][name]["attempts"] for name in languages) == 180


def timed_line(question_id: str, **fields) -> dict:
    """A combined-form answer line submitted at 10:00:00Z, with ``fields``."""
    return {
        "question_id": question_id,
        "expected_behaviour": "answer",
        "expected_values": [],
        "language": "en",
        "answer": "done",
        "retrieved_ids": [],
        "retrieved_values": [],
        "cited_ids": [],
        "declined": False,
        "submitted_at": "2026-03-01T10:00:00Z",
        **fields,
    }


def test_it_prints_each_questions_median_time_over_its_attempts(tmp_path, capsys):
    from scoring import synthetic

    run = tmp_path / "answers_run_x-1_set-demo-1.0.jsonl"
    lines = []
    # q1: 4, 2, 9 s → median 4. q2: 30 s, 10 s and a timeout → median 20 of 2 samples.
    for question_id, attempt, seconds in (
        ("q1", 1, 4),
        ("q1", 2, 2),
        ("q1", 3, 9),
        ("q2", 1, 30),
        ("q2", 2, 10),
        ("q2", 3, None),
    ):
        line = timed_line(question_id, attempt=attempt)
        if seconds is None:
            line |= {"status": "timeout", "stopped_at": "2026-03-01T10:10:00Z"}
        else:
            line["received_at"] = f"2026-03-01T10:00:{seconds:02d}Z"
        lines.append(line)
    synthetic.write_jsonl(run, lines, header={"repetitions": 3})
    assert main([str(run)]) == 0
    printed = capsys.readouterr().out
    assert (
        "each question's median E2E over its attempts (seconds, from timestamps; slowest first; "
        "a failed attempt is no sample):\n"
        "  question  median  samples\n"
        "  q2         20.00   2 of 3\n"
        "  q1          4.00   3 of 3\n"
    ) in printed
    result = run_json(run)
    assert result["timing"]["all"]["e2e"]["by_source"]["timestamps"]["per_question"] == {
        "q1": {"attempts": 3, "samples": 3, "median_s": 4.0},
        "q2": {"attempts": 3, "samples": 2, "median_s": 20.0},
    }


def test_it_prints_the_clocks_and_each_named_event_beside_the_timing(tmp_path, capsys):
    from scoring import synthetic

    run = tmp_path / "answers_run_x-1_set-demo-1.0.jsonl"
    line = timed_line(
        "q1",
        startup_at="2026-03-01T10:00:01Z",
        first_token_at="2026-03-01T10:00:03Z",
        received_at="2026-03-01T10:00:08Z",
    )
    synthetic.write_jsonl(run, [line], header={"clock_skew_ms": 12, "clock_precision_ms": 1})
    assert main([str(run)]) == 0
    printed = capsys.readouterr().out
    assert "  clocks: skew +12 ms, precision 1 ms\n" in printed
    assert (
        "  startup (platform or agent initialised) − question submitted (not yet any progress): n=1, P50 1.00"
        in printed
    )
    assert "  first progress message − question submitted (not the final answer): not logged\n" in printed
    assert run_json(run)["clock"] == {"skew_ms": 12.0, "precision_ms": 1.0}
    synthetic.write_jsonl(run, [line])
    assert main([str(run)]) == 0
    assert "  clock skew and precision not stated\n" in capsys.readouterr().out


def test_it_prints_no_question_medians_for_a_run_made_once(capsys):
    assert main([str(COMBINED)]) == 0
    assert "each question's median" not in capsys.readouterr().out
    assert "per_question" not in json.dumps(run_json(COMBINED).get("timing", {}))


def test_a_question_set_naming_clusters_gives_intervals_on_them(tmp_path):
    lines = QUESTIONS.read_text().splitlines()
    records = [json.loads(line) for line in lines]
    for record in records:
        if record.get("question_id") in ("a01", "a02"):
            record["cluster"] = "passage-7"
    questions = tmp_path / "questions_set-1.2.jsonl"
    questions.write_text("\n".join(json.dumps(record) for record in records) + "\n")
    numeric = run_json(RUN, "--questions", questions)["slices"]["all"]["numeric_accuracy"]
    # Five clusters (a01 and a02 together): p(1 - p)/variance = (5/36)/(5/4 · (32/36)/36)
    # = 4.5 draws, which is also n²/Σn² = 36/8: Wilson of 3.75 of 4.5.
    assert (numeric["k"], numeric["n"], numeric["clusters"], numeric["effective_n"]) == (5, 6, 5, 4.5)
    low, high = rate(5, 6).low, rate(5, 6).high
    assert numeric["unclustered"] == {"low": round(low, 6), "high": round(high, 6)}
    assert numeric["low"] < low


def test_it_names_the_line_of_a_cluster_that_is_not_printable(tmp_path, capsys):
    lines = QUESTIONS.read_text().splitlines()
    record = json.loads(lines[1])
    record["cluster"] = "passage\u00007"
    questions = tmp_path / "questions_set-1.2.jsonl"
    questions.write_text("\n".join([lines[0], json.dumps(record), *lines[2:]]) + "\n")
    assert main([str(RUN), "--questions", str(questions)]) == 2
    assert f"{questions}: line 2, field cluster: holds" in capsys.readouterr().err


def _answers_only(tmp_path):
    lines = [line for line in COMBINED.read_text().splitlines() if '"decline"' not in line]
    path = tmp_path / "answers_only.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_it_warns_when_no_question_expects_a_decline(tmp_path, capsys):
    assert main([str(_answers_only(tmp_path))]) == 0
    out = capsys.readouterr().out
    assert f"warning: {NO_DECLINE_WARNING.format(what='the questions scored')}" in out
    assert main([str(_answers_only(tmp_path)), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["warnings"] == [
        NO_DECLINE_WARNING.format(what="the questions scored")
    ]


def test_it_gives_no_decline_warning_when_a_question_expects_a_decline(capsys):
    assert main([str(COMBINED)]) == 0
    assert "warning:" not in capsys.readouterr().out
    assert run_json(COMBINED)["warnings"] == []


def test_it_counts_the_lines_of_a_rerun_that_repeat_a_failed_attempt_apart(tmp_path, capsys):
    # A re-run is a run of its own: its answers are its N, and the lines that
    # name the attempt of the repeated run they repeat are counted beside.
    lines = [json.loads(line) for line in COMBINED.read_text().splitlines()]
    lines[0]["repeats_attempt"] = 1
    lines[3]["repeats_attempt"] = 1
    path = tmp_path / "rerun.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in [{"repeats": "run-7"}, *lines]) + "\n")
    assert main([str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[:2] == [
        "8 answers",
        "re-runs: 2 (linked to failed attempts of run run-7)",
    ]
    assert main([str(path), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["answers"], result["reruns"], result["repeats"]) == (8, 2, "run-7")
