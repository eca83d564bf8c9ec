"""Paired figures and sample sizes against examples worked by hand."""

import math

import pytest

from scoring.compare import detectable_difference, paired, size_independent, size_paired, weighted_rate


def test_it_tabulates_and_tests_paired_outcomes():
    # Ten common questions: 3 both succeed, 1 only the baseline, 5 only the candidate, 1 neither.
    baseline = dict.fromkeys("abc", True) | {"d": True} | dict.fromkeys("efghi", False) | {"j": False}
    candidate = (
        dict.fromkeys("abc", True) | {"d": False} | dict.fromkeys("efghi", True) | {"j": False, "extra": True}
    )
    result = paired(baseline, candidate)
    assert result.n == 10
    assert result.table == ((3, 1), (5, 1))
    assert (result.baseline_rate, result.candidate_rate) == (0.4, 0.8)
    assert result.difference == pytest.approx(0.4)
    # McNemar exact: 1 of 6 discordant pairs favours the baseline; two-sided
    # binomial p = 2·(C(6,0) + C(6,1))/2^6 = 14/64.
    assert result.p_value == pytest.approx(14 / 64)
    # Wald: se = sqrt((6/10 - 0.4²)/10) = sqrt(0.044) = 0.2098; 0.4 ± 1.96·0.2098.
    assert result.low == pytest.approx(0.4 - 1.959964 * math.sqrt(0.044), abs=1e-6)
    assert result.high == pytest.approx(0.4 + 1.959964 * math.sqrt(0.044), abs=1e-6)


def test_it_has_no_figures_without_common_questions():
    result = paired({"a": True}, {"b": False})
    assert (result.n, result.difference, result.p_value) == (0, None, None)


def test_it_plans_the_specs_example_with_two_independent_samples():
    # Spec 002: 8.5 % to 6.5 % needs "about 2,716" per group by the normal
    # approximation; statsmodels' arcsine effect size gives 2,711.
    needed = size_independent(0.085, 0.065)
    assert needed == 2711
    assert abs(needed - 2716) / 2716 < 0.01


def test_it_plans_a_paired_design_by_mcnemar():
    # Connor (1987) with delta = 0.02 and 6 % discordant questions:
    # (1.959964·sqrt(.06) + 0.841621·sqrt(.06 - .0004))² / .0004 = 1174.97.
    assert size_paired(0.085, 0.065, 0.06) == 1175
    with pytest.raises(ValueError, match="discordant share"):
        size_paired(0.5, 0.3, 0.1)


def test_it_says_what_a_number_of_pairs_can_resolve():
    smallest = detectable_difference(200, 0.1)
    assert size_paired(0.5, 0.5 + smallest * 1.001, 0.1) <= 200
    assert size_paired(0.5, 0.5 + smallest * 0.9, 0.1) > 200
    assert detectable_difference(0, 0.1) is None


def test_it_weights_by_stratum():
    # Two items of weight 10 resolved, two of weight 1 not: 20/22, not 2/4.
    assert weighted_rate([True, True, False, False], [10, 10, 1, 1]) == pytest.approx(20 / 22)
