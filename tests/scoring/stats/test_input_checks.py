"""Inputs the statistics refuse with a sentence instead of answering wrongly
(issue 24, point 7: each case below was reproduced by a tester)."""

import math
from decimal import Decimal

import pytest

from scoring.repeats import clustered_rate
from scoring.stats.paired import paired_from_table
from scoring.stats.rates import rate, severity_weighted_rate, stratified_rate


@pytest.mark.parametrize("alpha", [1.5, 0.0, 1.0, -0.1, math.nan, math.inf])
def test_a_rate_refuses_an_alpha_outside_zero_and_one(alpha):
    # alpha=1.5 gave low above high; alpha=nan gave [0, 1].
    with pytest.raises(ValueError, match="alpha must lie strictly between 0 and 1"):
        rate(3, 10, alpha=alpha)


@pytest.mark.parametrize("alpha", [1.5, math.nan])
def test_the_weighted_and_clustered_rates_refuse_a_bad_alpha_too(alpha):
    with pytest.raises(ValueError, match="alpha must lie strictly between 0 and 1"):
        severity_weighted_rate([True, False], [1.0, 1.0], alpha=alpha)
    with pytest.raises(ValueError, match="alpha must lie strictly between 0 and 1"):
        stratified_rate([(1, 2, 10)], alpha=alpha)
    with pytest.raises(ValueError, match="alpha must lie strictly between 0 and 1"):
        clustered_rate([1, 2], [3, 3], alpha=alpha)


def test_a_clustered_rate_refuses_more_successes_than_units():
    with pytest.raises(ValueError, match=r"question 2 \(counting from 1\) has 4 successes of 3"):
        clustered_rate([1, 4], [3, 3])


def test_a_clustered_rate_refuses_negative_successes():
    with pytest.raises(ValueError, match=r"question 1 \(counting from 1\) has -1 successes of 3"):
        clustered_rate([-1, 2], [3, 3])


def test_a_clustered_rate_refuses_no_units_at_all():
    # Every n = 0 divided by zero.
    with pytest.raises(ValueError, match="a clustered rate needs at least one unit"):
        clustered_rate([0, 0], [0, 0])


def test_a_clustered_rate_still_gives_the_plain_figures_it_gave():
    figures = clustered_rate([2, 3, 0], [3, 3, 3])
    assert (figures["k"], figures["n"], figures["clusters"]) == (5, 9, 3)


@pytest.mark.parametrize("weight", [math.inf, math.nan, -1.0, 0.0])
def test_a_severity_rate_refuses_a_weight_that_is_not_a_positive_finite_number(weight):
    # An infinite weight gave NaN.
    with pytest.raises(ValueError, match="every weight must be above 0 and finite"):
        severity_weighted_rate([True, False], [1.0, weight])


def test_a_severity_rate_refuses_failures_that_are_not_true_or_false():
    # The string "False" counted as a failure.
    with pytest.raises(ValueError, match=r"item 2 \(counting from 1\) is 'False', not True or False"):
        severity_weighted_rate([True, "False"], [1.0, 1.0])


def test_a_paired_table_refuses_fractional_counts():
    # 2.5 was truncated to 2 without a word.
    with pytest.raises(ValueError, match=r"counts must be whole numbers; got 2\.5"):
        paired_from_table(((10, 2.5), (3, 4)))


def test_a_paired_table_takes_whole_counts_from_a_database():
    result = paired_from_table(((Decimal(10), Decimal(2)), (3.0, 4)))
    assert (result.n, result.table) == (19, ((10, 2), (3, 4)))
