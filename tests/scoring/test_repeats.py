"""Repeated runs: failures as results, not-run attempts, stable resolution,
and intervals that allow for attempts of one question being alike."""

import numpy as np
import pytest
import statsmodels.api as sm

from scoring.measures import check_answer, plain_counts, score_run
from scoring.repeats import clustered_rate, one_attempt_sentence


def question(question_id, behaviour="answer", values=(41.0,), language="en"):
    return {
        "question_id": question_id,
        "language": language,
        "expected_behaviour": behaviour,
        "expected_values": list(values),
    }


def answer(question_id, text, *, attempt=1, language="en", status="ok", **extra):
    return {
        "question_id": question_id,
        "attempt": attempt,
        "language": language,
        "answer": text,
        "declined": False,
        "retrieved_values": [41.0, 12.0],
        "retrieved_ids": ["A_SERIES"],
        "cited_ids": [],
        "status": status,
        **extra,
    }


def test_a_timeout_is_unresolved_for_every_measure_a_question_counts_in_and_never_a_knowledge_error():
    check = check_answer(
        answer("q1", "", status="timeout", status_reason="stopped at the 600 s limit"), question("q1")
    )
    assert (check.count("numeric_accuracy_k"), check.count("numeric_accuracy_n")) == (0, 1)
    assert (check.count("answer_rate_k"), check.count("answer_rate_n")) == (0, 1)
    assert check.count("unsupported_numbers_n") == check.count("unsupported_answers_n") == 0
    [finding] = check.findings
    assert (finding.kind, finding.detail) == (
        "failed",
        "timeout: stopped at the 600 s limit (no answer; not a knowledge error)",
    )
    refusal = check_answer(answer("q2", "", status="error"), question("q2", "decline", ()))
    assert (refusal.count("refusal_accuracy_k"), refusal.count("refusal_accuracy_n")) == (0, 1)


# A hand-made three-attempt run: q1 right in all three attempts; q2 right in
# two and timed out in the third; q3 (to be declined) declined twice and
# answered once; q4 right once and never run again (two attempts missing).
THREE_ATTEMPTS = [
    answer("q1", "It was 41.", attempt=1),
    answer("q1", "It was 41.", attempt=2),
    answer("q1", "It was 41.", attempt=3),
    answer("q2", "It was 41.", attempt=1),
    answer("q2", "It was 41.", attempt=2),
    answer("q2", "", attempt=3, status="timeout", status_reason="600 s"),
    {**answer("q3", "No.", attempt=1), "declined": True},
    {**answer("q3", "No.", attempt=2), "declined": True},
    answer("q3", "About 12.", attempt=3),
    answer("q4", "It was 41.", attempt=1),
]
QUESTIONS = {
    q["question_id"]: q
    for q in (question("q1"), question("q2"), question("q3", "decline", ()), question("q4"))
}


def test_every_rate_divides_by_n_equal_to_q_times_r():
    scores = score_run(THREE_ATTEMPTS, QUESTIONS, repetitions=3)
    assert (scores.answers, scores.not_run) == (10, 2)
    # 3 questions expecting an answer × 3 attempts = 9: 6 hits (q1 3, q2 2, q4 1).
    counts = plain_counts(scores.slices)["all"]
    assert counts["numeric_accuracy"] == {"k": 6, "n": 9}
    assert counts["refusal_accuracy"] == {"k": 2, "n": 3}
    kinds = [f.kind for f in scores.findings]
    assert (kinds.count("failed"), kinds.count("not_run")) == (1, 2)


def test_it_counts_stable_resolution_on_a_three_attempt_run():
    stable = score_run(THREE_ATTEMPTS, QUESTIONS, repetitions=3).stable["all"]
    numeric = stable["numeric_accuracy"]
    assert numeric["stable"] == {"k": 1, "n": 3}  # only q1 passed all three
    assert numeric["distribution"] == {"3 of 3": 1, "2 of 3": 1, "1 of 3": 1, "0 of 3": 0}
    assert stable["refusal_accuracy"]["stable"] == {"k": 0, "n": 1}
    assert stable["refusal_accuracy"]["distribution"]["2 of 3"] == 1
    over = numeric["over_attempts"]
    assert (over["k"], over["n"], over["clusters"]) == (6, 9, 3)
    # By hand: p = 6/9 = 2/3; per-question residual sums k_q − 3p = 1, 0, −1,
    # squares 2. Cluster-robust variance (1/9)² · 2 · G/(G − 1) = 2/81 · 3/2
    # = 1/27, so n_eff = p(1 − p) / (1/27) = (2/9) · 27 = 6 (between the 3
    # questions and 9 attempts). Wilson on 4 of 6: 0.3000 to 0.9032.
    assert over["effective_n"] == 6.0
    assert (round(over["low"], 4), round(over["high"], 4)) == (0.3, 0.9032)


def test_it_reports_no_stable_resolution_for_single_runs():
    scores = score_run(THREE_ATTEMPTS[:1], {"q1": QUESTIONS["q1"]}, repetitions=1)
    assert scores.stable == {}
    assert "stable" not in scores.as_dict()


def test_the_clustered_interval_uses_statsmodels_cluster_robust_variance():
    k, n = np.array([3, 2, 0, 1, 3, 3]), np.array([3, 3, 3, 3, 3, 3])
    result = clustered_rate(k, n)
    y = np.concatenate([[1] * kq + [0] * (nq - kq) for kq, nq in zip(k, n, strict=True)])
    groups = np.repeat(np.arange(6), 3)
    fit = sm.OLS(y, np.ones(len(y))).fit(cov_type="cluster", cov_kwds={"groups": groups})
    p = 12 / 18
    assert result["effective_n"] == pytest.approx(p * (1 - p) / fit.bse[0] ** 2, abs=0.01)
    # By hand: residual sums k_q − 3p = 1, 0, −2, −1, 1, 1, squares 8; variance
    # (1/18)² · 8 · 6/5 = 4/135; n_eff = (2/9) / (4/135) = 7.5. Wilson on
    # 5 of 7.5 (p = 2/3): 0.3301 to 0.8903.
    assert (result["clusters"], result["effective_n"]) == (6, 7.5)
    assert (round(result["low"], 4), round(result["high"], 4)) == (0.3301, 0.8903)


def test_identical_attempts_count_once_each_question():
    # Every question's three attempts agree: they carry no more than one attempt each.
    result = clustered_rate(np.array([3, 0, 3, 3, 0, 3]), np.array([3, 3, 3, 3, 3, 3]))
    # By hand: p = 12/18 = 2/3; residual sums 1 (×4) and −2 (×2), squares 12;
    # variance (1/18)² · 12 · 6/5 = 2/45; p(1 − p) / (2/45) = 5, raised to the
    # 6 questions. Wilson on 4 of 6: 0.3000 to 0.9032 (not the 0.4375 to
    # 0.8372 that Wilson on 12 of 18 attempts would give).
    assert result["effective_n"] == 6
    assert (round(result["low"], 4), round(result["high"], 4)) == (0.3, 0.9032)
    every = clustered_rate(np.array([3, 3]), np.array([3, 3]))
    assert (every["rate"], every["high"], every["effective_n"]) == (1.0, 1.0, 2)
    # Wilson on 2 of 2, z = 1.96: (1 + z²/4 − z²/4) / (1 + z²/2) = 1 / 2.9207 = 0.3424.
    assert round(every["low"], 4) == 0.3424


def test_the_one_attempt_sentence_says_what_rests_on_it_and_spec_004s_default():
    assert one_attempt_sentence(figures="this run's rates") == (
        "One attempt per question: this run's rates rest on a single attempt at each question, so no "
        "stable-resolution rate is shown (it takes repeated attempts to tell a question answered right "
        "every time from one answered right once). Spec 004's default is three attempts per question."
    )
    assert one_attempt_sentence(figures="the gate's paired differences", who="bot-1.1").startswith(
        "One attempt per question (bot-1.1): the gate's paired differences rest on"
    )
    assert one_attempt_sentence().startswith("One attempt per question: these figures rest on")
