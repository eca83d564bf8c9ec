"""Rates at the edges and the stratified rate, against examples worked by hand."""

import pytest
from statsmodels.stats.proportion import proportion_confint

from scoring.stats.rates import (
    INTERVAL_METHODS,
    WeightedRate,
    rate,
    severity_weighted_rate,
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
    # variance = 0.09·(1 - 20/300)·0.21/19 = 0.000928421
    #          + 0.09·(1 - 10/300)·0.16/9  = 0.001546667
    #          + 0.16·(1 - 5/400)·0.24/4   = 0.009480000
    #          = 4259/356250 = 0.011955088
    # n_eff = 0.39·0.61/0.011955088 = 19.899478, under the 35 sampled;
    # k_eff = 0.39·19.899478 = 7.760796.
    # Wilson: z²/n_eff = 0.193043; centre (0.39 + 0.096522)/1.193043 = 0.407799;
    # half-width 1.959964·sqrt(0.011955088 + 0.002425)/1.193043 = 0.197005;
    # 0.210794 to 0.604804.
    result = stratified_rate([(6, 20, 300), (2, 10, 300), (3, 5, 400)])
    assert result.value == pytest.approx(0.39, abs=1e-9)
    assert result.variance == pytest.approx(4259 / 356250, abs=1e-9)
    assert result.effective_n == pytest.approx(0.39 * 0.61 / (4259 / 356250), abs=1e-9)
    assert result.n == 35
    low, high = proportion_confint(0.39 * result.effective_n, result.effective_n, method="wilson")
    assert (result.low, result.high) == pytest.approx((low, high), abs=1e-12)
    assert (result.low, result.high) == pytest.approx((0.210794, 0.604804), abs=1e-6)
    assert result.method == "stratified, Wilson on the effective n"


def test_it_takes_a_census_at_its_actual_size():
    # Every stratum read in full: no sampling variance, so n_eff is the 30 items.
    # p = (10/30)·(3/10) + (20/30)·(5/20) = 8/30, and k_eff = 8.
    result = stratified_rate([(3, 10, 10), (5, 20, 20)])
    assert (result.variance, result.effective_n, result.n) == (0.0, 30.0, 30)
    assert result.value == pytest.approx(8 / 30, abs=1e-12)
    assert (result.low, result.high) == pytest.approx(proportion_confint(8, 30, method="wilson"), abs=1e-12)


def test_it_gives_nearly_plain_wilson_for_one_stratum_from_a_huge_population():
    # One stratum, f = 2e-10: variance p(1 - p)/(n - 1), so n_eff = 199 of the 200,
    # and the interval is within 0.0002 of Wilson's 17 of 200.
    result = stratified_rate([(17, 200, 10**12)])
    plain = rate(17, 200)
    assert result.value == pytest.approx(0.085, abs=1e-12)
    assert result.effective_n == pytest.approx(199, abs=1e-6)
    assert (result.low, result.high) == pytest.approx((plain.low, plain.high), abs=2e-4)
    assert (round(result.low * 100, 1), round(result.high * 100, 1)) == (5.4, 13.2)


def test_it_bounds_the_stratified_interval_at_the_edges():
    nothing = stratified_rate([(0, 10, 100), (0, 1, 5), (0, 300, 30_000)])
    assert (nothing.value, nothing.low, nothing.variance, nothing.effective_n) == (0.0, 0.0, 0.0, 311.0)
    assert 0.0 < nothing.high < 0.02
    everything = stratified_rate([(10, 10, 100), (1, 1, 5), (300, 300, 30_000)])
    assert (everything.value, everything.high) == (1.0, 1.0)
    assert 0.98 < everything.low < 1.0


def test_it_counts_a_stratum_of_one_as_adding_no_variance():
    # 1 of 1 from 50: p_h(1 - p_h) = 0. Only the first stratum varies:
    # 0.5²·(1 - 10/100)·0.25/9 = 0.00625.
    result = stratified_rate([(5, 10, 100), (1, 1, 100)])
    assert result.value == pytest.approx(0.75, abs=1e-12)
    assert result.variance == pytest.approx(0.00625, abs=1e-12)


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
