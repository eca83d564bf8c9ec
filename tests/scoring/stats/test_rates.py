"""Rates at the edges and the stratified rate, against examples worked by hand."""

import math

import pytest
from statsmodels.stats.proportion import proportion_confint

from scoring.stats.rates import (
    INTERVAL_METHODS,
    STRATIFIED_METHOD,
    WeightedRate,
    rate,
    severity_weighted_rate,
    stratified_domain_rate,
    stratified_rate,
    wilson_interval,
)

SIZES = [1, 2, 5, 17, 200, 1000, 30_000, 1_000_000]


@pytest.mark.parametrize("method", INTERVAL_METHODS)
@pytest.mark.parametrize("n", SIZES)
def test_it_starts_the_interval_at_exactly_0_when_nothing_succeeded(method, n):
    result = rate(0, n, method=method)
    assert result.low == 0.0
    assert 0.0 < result.high < 1.0


@pytest.mark.parametrize("method", INTERVAL_METHODS)
@pytest.mark.parametrize("n", SIZES)
def test_it_ends_the_interval_at_exactly_1_when_everything_succeeded(method, n):
    result = rate(n, n, method=method)
    assert result.high == 1.0
    assert 0.0 < result.low < 1.0


@pytest.mark.parametrize("method", INTERVAL_METHODS)
@pytest.mark.parametrize(("k", "n"), [(1, 2), (1, 5), (4, 5), (17, 200), (1, 30_000), (29_999, 30_000)])
def test_it_keeps_the_rate_inside_its_interval_between_the_edges(method, k, n):
    # Agresti–Coull's limits pass 0 at 1 of 30,000 (and 1 at 29,999): clipped, not pinned.
    result = rate(k, n, method=method)
    assert 0.0 <= result.low < k / n < result.high <= 1.0


def test_it_pins_only_the_edge_statsmodels_misses():
    # Jeffreys at 0 of 5 is equal-tailed: statsmodels' lower limit is 9.3e-5, its
    # upper 0.379377 stays.
    statsmodels_low, statsmodels_high = proportion_confint(0, 5, method="jeffreys")
    assert statsmodels_low > 0
    assert rate(0, 5, method="jeffreys").high == pytest.approx(statsmodels_high, abs=1e-12)


def test_it_keeps_the_wilson_example_for_17_of_200():
    wilson = rate(17, 200)
    assert (round(wilson.low * 100, 1), round(wilson.high * 100, 1)) == (5.4, 13.2)


def test_it_estimates_a_stratified_rate_with_its_effective_n():
    # (k, n, N): 6 of 20 from 300, 2 of 10 from 300, 3 of 5 from 400. N = 1000.
    # W = 0.3, 0.3, 0.4; p_h = 0.3, 0.2, 0.6; p = 0.09 + 0.06 + 0.24 = 0.39.
    # z² = 1.959964² = 3.841459; Agresti–Coull shares (k + z²/2)/(n + z²):
    # 7.920729/23.841459 = 0.332225, 3.920729/13.841459 = 0.283260,
    # 4.920729/8.841459 = 0.556552; p̃ = Σ W·p̃ = 0.407266.
    # Each stratum's variance of p_h: p(1 - p)/(n - 1), or p̃(1 - p̃)/n if larger:
    #   0.21/19 = 0.011053 < 0.332225·0.667775/20 = 0.011093  (the floor)
    #   0.16/9  = 0.017778 < 0.283260·0.716740/10 = 0.020302  (the floor)
    #   0.24/4  = 0.060000 > 0.556552·0.443448/5  = 0.049360  (the estimate)
    # variance = 0.09·(1 - 20/300)·0.011093 + 0.09·(1 - 10/300)·0.020302
    #          + 0.16·(1 - 5/400)·0.06 = 0.000932 + 0.001766 + 0.009480 = 0.012178
    # n* = 0.407266·0.592734/0.012178 = 19.8225, under the 35 sampled;
    # Clopper–Pearson on 0.39·19.8225 = 7.7308 successes of 19.8225: 0.182746 to 0.631277;
    # the normal interval on the same variance, 0.39 ± 1.959964·0.110354 =
    # 0.173709 to 0.606291, reaches lower, so the interval is 0.173709 to 0.631277.
    result = stratified_rate([(6, 20, 300), (2, 10, 300), (3, 5, 400)])
    assert result.value == pytest.approx(0.39, abs=1e-9)
    assert result.variance == pytest.approx(0.012178083, abs=1e-9)
    assert result.effective_n == pytest.approx(19.822532, abs=1e-6)
    assert result.n == 35
    _, high = proportion_confint(0.39 * result.effective_n, result.effective_n, method="beta")
    low = 0.39 - 1.959963984540054 * math.sqrt(result.variance)
    assert (result.low, result.high) == pytest.approx((low, high), abs=1e-12)
    assert (result.low, result.high) == pytest.approx((0.173709, 0.631277), abs=1e-6)
    assert result.method == STRATIFIED_METHOD
    assert "Korn–Graubard" in result.method and "Agresti–Coull" in result.method


def test_it_takes_a_census_at_its_actual_size():
    # Every stratum read in full: no sampling variance, so n* is the 30 items.
    # p = (10/30)·(3/10) + (20/30)·(5/20) = 8/30, and 8 successes of 30.
    result = stratified_rate([(3, 10, 10), (5, 20, 20)])
    assert (result.variance, result.effective_n, result.n) == (0.0, 30.0, 30)
    assert result.value == pytest.approx(8 / 30, abs=1e-12)
    assert (result.low, result.high) == pytest.approx(proportion_confint(8, 30, method="beta"), abs=1e-12)


def test_it_gives_clopper_pearson_or_the_normal_interval_for_one_stratum_from_a_huge_population():
    # One stratum, f = 2e-10. The floor p̃(1 - p̃)/n, p̃ = 18.920729/203.841459
    # = 0.092821, is 0.00042103, above p(1 - p)/(n - 1) = 0.00039083, so
    # n* = p̃(1 - p̃)/that = 200 (the fpc 1 - 2e-10 takes it a hair above, and
    # the cap brings it back): Clopper–Pearson's 17 of 200 ends at 13.3 %; it
    # starts at 5.0 %, above the normal interval's 0.085 - 1.959964·0.020519 =
    # 4.5 %, which is the start. This test used to expect Wilson's 5.4 % to
    # 13.2 % here; that is still rate()'s (spec 002), unchanged, while a
    # stratified figure now uses the conservative interval throughout.
    result = stratified_rate([(17, 200, 10**12)])
    assert result.value == pytest.approx(0.085, abs=1e-12)
    assert result.effective_n == 200.0
    _, high = proportion_confint(17, 200, method="beta")
    low = 0.085 - 1.959963984540054 * math.sqrt(result.variance)
    assert (result.low, result.high) == pytest.approx((low, high), abs=1e-12)
    assert (round(result.low * 100, 1), round(result.high * 100, 1)) == (4.5, 13.3)


def test_it_bounds_the_stratified_interval_at_the_edges():
    nothing = stratified_rate([(0, 10, 100), (0, 1, 5), (0, 300, 30_000)])
    assert (nothing.value, nothing.low, nothing.effective_n) == (0.0, 0.0, 311.0)
    # Nothing succeeded, yet each stratum's adjusted share keeps the variance above 0.
    assert nothing.variance > 0
    assert 0.0 < nothing.high < 0.02
    everything = stratified_rate([(10, 10, 100), (1, 1, 5), (300, 300, 30_000)])
    assert (everything.value, everything.high) == (1.0, 1.0)
    assert 0.98 < everything.low < 1.0


def test_it_no_longer_trusts_one_item_carrying_98_percent_of_the_weight():
    # Issue 24, point 3: 1 of 1 from 9,800 and 20 of 101 from 200 gave
    # 98.4 % [93.7, 99.6], as if the 102 items were 102 simple draws, when the
    # estimate rests on one item. That item's floor p̃(1 - p̃)/1, with
    # p̃ = 2.920729/4.841459 = 0.603275, is 0.239334; times 0.98²·(1 - 1/9800)
    # it is 0.229833, nearly all of the variance 0.229834 (the second
    # stratum adds 0.02²·(1 - 101/200)·0.001637 = 3.2e-7). p̃ = 0.98·0.603275
    # + 0.02·0.209 = 0.595391, so n* = 0.595391·0.404609/0.229834 = 1.048:
    # an interval from 2.8 % to 100 %, which says how little one item shows.
    result = stratified_rate([(1, 1, 9800), (20, 101, 200)])
    assert round(result.value * 100, 1) == 98.4
    assert (round(result.low * 100, 1), round(result.high * 100, 1)) != (93.7, 99.6)
    assert result.effective_n == pytest.approx(1.048152, abs=1e-6)
    assert (round(result.low * 100, 1), round(result.high * 100, 1)) == (2.8, 100.0)


def test_a_stratum_of_one_adds_the_variance_of_its_adjusted_share():
    # This test used to assert that a stratum of one adds no variance (its
    # p_h(1 - p_h) is 0): that was the defect of issue 24, point 3, so it now
    # asserts the variance one item leaves. 1 of 1 from 100: p̃ = 2.920729/4.841459
    # = 0.603275, p̃(1 - p̃)/1 = 0.239334, times 0.5²·(1 - 1/100): 0.059235.
    # 5 of 10 from 100: 0.25/9 = 0.027778 over the floor 0.5·0.5/10 = 0.025:
    # 0.5²·(1 - 10/100)·0.027778 = 0.00625, as before.
    result = stratified_rate([(5, 10, 100), (1, 1, 100)])
    assert result.value == pytest.approx(0.75, abs=1e-12)
    assert result.variance == pytest.approx(0.00625 + 0.059235, abs=1e-6)
    assert result.effective_n < 4


def test_a_stratum_whose_items_all_succeeded_still_adds_variance():
    # 5 of 5 from 500 beside 10 of 20 from 500: p_1(1 - p_1) is 0, yet five
    # successes in five leave a share as low as 0.478 plausible (Clopper–
    # Pearson's lower limit). Floor: p̃ = 6.920729/8.841459 = 0.782759,
    # p̃(1 - p̃)/5 = 0.034009, times 0.5²·(1 - 5/500).
    result = stratified_rate([(5, 5, 500), (10, 20, 500)])
    first = 0.25 * (1 - 5 / 500) * 0.782758 * (1 - 0.782758) / 5
    second = 0.25 * (1 - 20 / 500) * 0.25 / 19
    assert result.variance == pytest.approx(first + second, abs=1e-6)


def test_it_refuses_strata_without_sampled_items_by_position():
    with pytest.raises(ValueError, match=r"^stratum 2, 4 \(counting from 1\) has no sampled items"):
        stratified_rate([(1, 5, 10), (0, 0, 10), (2, 5, 10), (0, 0, 3)])


def test_it_refuses_impossible_strata():
    with pytest.raises(ValueError, match="at least one stratum"):
        stratified_rate([])
    with pytest.raises(ValueError, match=r"^stratum 1 \(counting from 1\) needs 0 <= successes"):
        stratified_rate([(6, 5, 10)])
    with pytest.raises(ValueError, match=r"^stratum 2 \(counting from 1\) needs .*got 1, 5, 4$"):
        stratified_rate([(1, 5, 10), (1, 5, 4)])


def test_it_returns_a_frozen_weighted_rate():
    result = stratified_rate([(1, 2, 3)])
    assert isinstance(result, WeightedRate)
    with pytest.raises(AttributeError):
        result.value = 0.5


def test_a_severity_weighted_rate_counts_each_item_by_its_weight_on_kishs_effective_n():
    # Two failures, one of them where answers carry three times the weight.
    weighted = severity_weighted_rate([True, False, False, True], [3.0, 1.0, 1.0, 1.0])
    assert weighted.value == pytest.approx(4 / 6)
    # Kish: (3 + 1 + 1 + 1)² / (9 + 1 + 1 + 1) = 36 / 12 = 3 draws' worth.
    assert weighted.effective_n == pytest.approx(3.0)
    low, high = proportion_confint(2.0, 3.0, method="wilson")
    assert (weighted.low, weighted.high) == (pytest.approx(low), pytest.approx(high))
    # Equal weights are the plain rate and its Wilson interval.
    plain = severity_weighted_rate([True, False, False, True], [2.0] * 4)
    assert (plain.value, plain.effective_n) == (0.5, 4.0)
    assert (plain.low, plain.high) == (pytest.approx(rate(2, 4).low), pytest.approx(rate(2, 4).high))
    with pytest.raises(ValueError, match="every weight must be above 0"):
        severity_weighted_rate([True], [0.0])


@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.01])
def test_wilson_is_statsmodels_wilson_without_importing_it_per_run(alpha):
    # Whole and fractional counts (effective sizes), tiny and huge n.
    cases = [(k, n) for n in (1, 2, 7, 30, 200, 10_000, 3_000_000) for k in {0, 1, n // 3, n - 1, n}]
    cases += [(0.5, 1.7), (12.25, 40.5), (999.9, 1000.0)]
    for k, n in cases:
        low, high = wilson_interval(k, n, alpha=alpha)
        expected_low, expected_high = proportion_confint(k, n, alpha=alpha, method="wilson")
        assert low == pytest.approx(float(expected_low), rel=1e-12, abs=1e-15)
        assert high == pytest.approx(float(expected_high), rel=1e-12, abs=1e-15)


def test_the_scorer_imports_neither_statsmodels_nor_scipy_nor_pandas(tmp_path):
    import subprocess
    import sys

    run = tmp_path / "run.jsonl"
    run.write_text(
        '{"question_id": "q1", "language": "en", "retrieved_ids": ["A_B_C"], "retrieved_values": [7.6],'
        ' "answer": "It was 7.6 (A_B_C).", "cited_ids": ["A_B_C"], "declined": false,'
        ' "expected_behaviour": "answer", "expected_values": [7.6]}\n'
    )
    script = (
        "import sys, runpy; sys.argv = ['scoring', sys.argv[1], '--json']\n"
        "try:\n    runpy.run_module('scoring', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print(sorted(m for m in ('statsmodels', 'scipy', 'pandas') if m in sys.modules), file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(run)], capture_output=True, text=True, check=True
    )
    assert '"k": 1' in done.stdout
    assert done.stderr.strip().splitlines()[-1] == "[]"


def test_a_stratified_rate_counts_strata_by_weights_given_in_place_of_their_sizes():
    # 1 of 4 and 2 of 4, each from 100, the first counting three times as much
    # (a severity weight of 3): W = 0.75, 0.25, p = 0.75·0.25 + 0.25·0.5 = 0.3125.
    # Both fpcs stay 1 - 4/100, and both variances are the estimates, above
    # their floors: 0.1875/3 = 0.0625 (floor 0.310·0.690/4 = 0.0535) and
    # 0.25/3 (floor 0.0625): 0.75²·0.96·0.0625 + 0.25²·0.96·0.25/3 = 0.03875.
    weighted = stratified_rate([(1, 4, 100), (2, 4, 100)], weights=[300, 100])
    assert weighted.value == pytest.approx(0.3125, abs=1e-12)
    assert weighted.variance == pytest.approx(0.03875, abs=1e-12)
    # Weights equal to the sizes are no weights at all.
    assert stratified_rate([(1, 4, 100), (2, 4, 50)], weights=[100, 50]) == stratified_rate(
        [(1, 4, 100), (2, 4, 50)]
    )
    with pytest.raises(ValueError, match="2 strata need as many weights, each a finite number above 0"):
        stratified_rate([(1, 4, 100), (2, 4, 100)], weights=[1.0])
    with pytest.raises(ValueError, match="2 strata need as many weights"):
        stratified_rate([(1, 4, 100), (2, 4, 100)], weights=[1.0, math.inf])


def test_a_domain_rate_weights_each_stratum_by_the_domains_estimated_size():
    # 3 of 4 English items answered (1 yes), 2 of 2 French (2 yes), from 90
    # and 10: sizes 90·3/4 = 67.5 and 10, so the rate is (67.5/3 + 10)/77.5.
    domain = stratified_domain_rate([(1, 3, 4, 90), (2, 2, 2, 10)])
    assert domain == stratified_rate([(1, 3, 67.5), (2, 2, 10.0)])
    assert domain.value == pytest.approx(32.5 / 77.5, abs=1e-12)
    assert domain.unrepresented == 0.0
    # Multipliers scale the weights.
    tripled = stratified_domain_rate([(1, 3, 4, 90), (2, 2, 2, 10)], multipliers=[1.0, 3.0])
    assert tripled == stratified_rate([(1, 3, 67.5), (2, 2, 10.0)], weights=[67.5, 30.0])
    with pytest.raises(ValueError, match="the domain holds no sampled item"):
        stratified_domain_rate([(0, 0, 4, 90)])
    with pytest.raises(ValueError, match=r"stratum 1 \(counting from 1\) has 5 items of the domain of 4"):
        stratified_domain_rate([(1, 5, 4, 90)])
    with pytest.raises(ValueError, match="2 strata need as many multipliers, not 1"):
        stratified_domain_rate([(1, 3, 4, 90), (2, 2, 2, 10)], multipliers=[1.0])


def test_a_stratum_with_no_item_of_the_domain_gets_worst_case_bounds():
    # Dropping the stratum would let the other speak for all of it. Here the
    # French stratum's 2 sampled items are both outside the domain, but its 8
    # unsampled items may all be in it, at any rate: A = 67.5, M = 8, share
    # 8/75.5, and the English interval [L, U] becomes
    # [L·67.5/75.5, (U·67.5 + 8)/75.5] (Horowitz and Manski 2000).
    represented = stratified_rate([(1, 3, 67.5)])
    bounded = stratified_domain_rate([(1, 3, 4, 90), (0, 0, 2, 10)])
    assert bounded.value == represented.value
    assert bounded.unrepresented == pytest.approx(8 / 75.5, abs=1e-12)
    assert bounded.low == pytest.approx(represented.low * 67.5 / 75.5, abs=1e-12)
    assert bounded.high == pytest.approx((represented.high * 67.5 + 8) / 75.5, abs=1e-12)
    # A stratum read whole has nothing unsampled: its empty domain is known to be empty.
    assert stratified_domain_rate([(1, 3, 4, 90), (0, 0, 10, 10)]) == represented
