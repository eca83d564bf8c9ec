"""A model grader's mean score with its interval, against worked examples."""

import re

import pytest
from statsmodels.stats.proportion import proportion_confint

from scoring.stats.means import Mean, score_mean


def test_it_is_wilsons_interval_on_n_for_unclustered_scores():
    scores = [0.7, 0.8, 0.6, 0.704] * 10
    result = score_mean(scores)
    # A mean of 0.701 over 40 answers: Wilson's interval for 28.04 of 40.
    low, high = proportion_confint(28.04, 40, method="wilson")
    assert (result.value, result.n, result.effective_n) == (pytest.approx(0.701), 40, None)
    assert (result.low, result.high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
    assert (round(result.low, 4), round(result.high, 4)) == (0.5467, 0.82)


def test_it_is_never_a_point_when_every_score_is_the_same():
    # Twenty scores of 1: Wilson's 20 of 20, [0.8389, 1].
    assert score_mean([1.0] * 20) == Mean(1.0, 20, pytest.approx(0.838875, abs=1e-6), 1.0)
    assert score_mean([0.0] * 20) == Mean(0.0, 20, 0.0, pytest.approx(0.161125, abs=1e-6))


def test_it_counts_a_questions_attempts_as_fewer_draws():
    # Ten questions of three attempts, each question all 1s or all 0s: the
    # 30 scores are worth 10 draws, Wilson's 5 of 10.
    scores = [1, 1, 1, 0, 0, 0] * 5
    result = score_mean(scores, clusters=[position // 3 for position in range(30)])
    low, high = proportion_confint(5, 10, method="wilson")
    assert (result.value, result.n, result.effective_n, result.clusters) == (0.5, 30, 10.0, 10)
    assert (result.low, result.high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))


def test_it_is_none_without_scores_and_refuses_what_is_not_a_score():
    assert score_mean([]) is None
    for scores, message in (
        ([0.5, 1.5], "a score lies in [0, 1]; score 1 is 1.5"),
        ([float("nan")], "a score lies in [0, 1]; score 0 is nan"),
        ([True], "a score lies in [0, 1]; score 0 is True"),
        (["0.5"], "a score lies in [0, 1]; score 0 is '0.5'"),
    ):
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            score_mean(scores)
    with pytest.raises(ValueError, match=r"^1 clusters for 2 scores: give one cluster per score$"):
        score_mean([0.5, 0.5], clusters=["q1"])
    with pytest.raises(ValueError, match=r"^alpha must lie strictly between 0 and 1; got nan$"):
        score_mean([0.5], alpha=float("nan"))
