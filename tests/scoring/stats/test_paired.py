"""Paired figures and sample sizes against examples worked by hand."""

import itertools
import math

import pytest
from scipy.stats import binom
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from scoring.stats.paired import (
    detectable_difference,
    gate_pass_chance,
    mcnemar_power,
    newcombe_paired,
    noninferiority_bound,
    paired,
    pairs_to_settle,
    settle_chance,
    size_gate,
    size_independent,
    size_paired,
    size_paired_connor,
    tango_paired,
)


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
    # Newcombe, candidate (8/10) minus baseline (4/10). Wilson 8/10: 0.490162 to
    # 0.943318; 4/10: 0.168180 to 0.687326. ad - bc = 3·1 - 5·1 = -2 is negative,
    # so phi stays uncorrected: -2/sqrt(8·2·4·6) = -0.102062.
    # low  = 0.4 - sqrt(0.309838² + 2·0.102062·0.309838·0.287326 + 0.287326²)
    #      = 0.4 - sqrt(0.095999 + 0.018172 + 0.082556) = 0.4 - 0.443540 = -0.043540
    # high = 0.4 + sqrt(0.143318² + 2·0.102062·0.143318·0.231820 + 0.231820²)
    #      = 0.4 + sqrt(0.020540 + 0.006782 + 0.053740) = 0.4 + 0.284714 = 0.684714
    # (Wald gave 0.4 ± 1.96·sqrt(0.044): -0.011 to 0.811.)
    assert result.low == pytest.approx(-0.043540, abs=1e-5)
    assert result.high == pytest.approx(0.684714, abs=1e-5)
    assert result.interval_method == "Newcombe hybrid score (method 10)"


def test_it_has_no_figures_without_common_questions():
    result = paired({"a": True}, {"b": False})
    assert (result.n, result.difference, result.p_value) == (0, None, None)
    assert (result.low, result.high) == (None, None)


def test_it_reproduces_newcombes_published_interval():
    # The published table (Cavo et al. 2012, complete response before and after
    # consolidation therapy): difference (6 - 16)/161 = -0.0621, method 10 gives
    # -0.1186 to -0.0046 where Wald gives -0.1184 to -0.0058. Wilson 65/161:
    # 0.331037 to 0.480904; 75/161: 0.390481 to 0.542789; Newcombe's phi
    # (59·80 - 6·16 - 161/2)/sqrt(65·96·75·86) = 4543.5/6344.1 = 0.716174.
    low, high = newcombe_paired(59, 6, 16, 80)
    assert (round(low, 4), round(high, 4)) == (-0.1186, -0.0046)
    assert (low, high) == pytest.approx((-0.118621, -0.004625), abs=1e-6)
    assert mcnemar([[59, 6], [16, 80]], exact=True).pvalue == pytest.approx(0.052479, abs=1e-6)


def test_it_combines_the_wilson_limits_independently_when_phi_is_within_its_correction():
    # Bentur et al. (2009): ad - bc = 12 - 7 = 5 is within n/2 = 10.5, so phi is 0
    # and the limits are the independent square-and-add of Wilson 2/21 and 8/21.
    p1, p2 = 2 / 21, 8 / 21
    low1, high1 = proportion_confint(2, 21, method="wilson")
    low2, high2 = proportion_confint(8, 21, method="wilson")
    low, high = newcombe_paired(1, 1, 7, 12)
    assert low == pytest.approx(p1 - p2 - math.hypot(p1 - low1, high2 - p2), abs=1e-12)
    assert high == pytest.approx(p1 - p2 + math.hypot(high1 - p1, p2 - low2), abs=1e-12)
    assert (round(low, 4), round(high, 4)) == (-0.5069, -0.0256)


@pytest.mark.parametrize(
    "table", [(5, 0, 0, 5), (3, 0, 0, 7), (10, 0, 0, 0), (0, 0, 0, 10), (2.5, 0, 0, 0.5)]
)
def test_it_gives_a_real_interval_around_0_without_discordant_pairs(table):
    low, high = newcombe_paired(*table)
    assert low < 0 < high
    assert high - low > 0.05


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ((0, 0, 10, 0), (-1.0, -0.607509)),
        ((5, 0, 4, 0), (-0.733349, -0.050931)),
        ((0, 10, 0, 0), (0.607509, 1.0)),
    ],
)
def test_it_stays_within_minus_1_and_1_when_every_discordant_pair_goes_one_way(table, expected):
    low, high = newcombe_paired(*table)
    assert -1.0 <= low < high <= 1.0
    assert (low, high) == pytest.approx(expected, abs=1e-6)


def test_it_accepts_fractional_counts():
    # The published table scaled by 1.5: proportions fixed, so a narrower interval
    # around the same -0.0621.
    low, high = newcombe_paired(59 * 1.5, 6 * 1.5, 16 * 1.5, 80 * 1.5)
    assert -0.118621 < low < -10 / 161 < high < -0.004625


def test_it_refuses_an_empty_or_negative_table():
    with pytest.raises(ValueError, match="table is empty"):
        newcombe_paired(0, 0, 0, 0)
    with pytest.raises(ValueError, match="cannot be negative"):
        newcombe_paired(1, -1, 0, 0)


def _scaled_interval(table, size):
    # candidate - baseline: Newcombe's p1 is the first row's margin, so the
    # Paired layout ((both, only_baseline), (only_candidate, neither)) is transposed.
    (both, only_baseline), (only_candidate, neither) = table
    scale = size / (both + only_baseline + only_candidate + neither)
    return newcombe_paired(both * scale, only_candidate * scale, only_baseline * scale, neither * scale)


def _settled(table, size, margin):
    # The gate's rule: its bound above -margin, or Newcombe's interval below 0.
    scale = size / sum(map(sum, table))
    scaled = tuple(tuple(cell * scale for cell in row) for row in table)
    return noninferiority_bound(scaled) > -margin or _scaled_interval(table, size)[1] < 0


def test_it_finds_how_many_pairs_settle_a_drop_of_2_4_points():
    # 169 paired questions, 4 newly failed: -2.4 points against a 2-point margin.
    table = ((165, 4), (0, 0))
    low, high = _scaled_interval(table, 169)
    assert low < -0.02
    assert high >= 0
    needed = pairs_to_settle(table, margin=0.02)
    assert needed == 197
    low, high = _scaled_interval(table, needed)
    assert high < 0  # settled as worse: 4/169 of the pairs newly failing is a real drop
    assert not _settled(table, needed - 1, 0.02)


def test_it_settles_a_difference_of_exactly_minus_the_margin_as_worse():
    # 4 newly failed, 2 newly passed of 200: -1 point against a 1-point margin. The
    # lower limit never clears -margin, but the upper one closes in on -1 point.
    table = ((96, 4), (2, 98))
    needed = pairs_to_settle(table, margin=0.01)
    assert needed == 1179
    low, high = _scaled_interval(table, needed)
    assert low <= -0.01 and high < 0
    assert not _settled(table, needed - 1, 0.01)


def test_it_returns_the_current_size_when_already_settled():
    # 0 newly failed of 1,000: the lower limit is already above -2 points.
    table = ((900, 0), (0, 100))
    assert _scaled_interval(table, 1000)[0] > -0.02
    assert pairs_to_settle(table, margin=0.02) == 1000


def test_it_says_none_when_no_size_would_settle():
    # With no margin, a difference of exactly 0 keeps 0 inside the interval at every size.
    assert pairs_to_settle(((5, 3), (3, 5)), margin=0.0) is None
    # Half a point of margin and a difference of -0.1 point among 10 % discordant
    # pairs would take about 390,000 pairs; a limit below that gives None.
    assert pairs_to_settle(((500, 51), (50, 399)), margin=0.0005, limit=100_000) is None
    assert pairs_to_settle(((500, 51), (50, 399)), margin=0.0005) == 387_993
    assert pairs_to_settle(((165, 4), (0, 0)), margin=0.02, limit=180) is None


def test_it_refuses_a_decision_without_pairs_or_with_a_bad_margin():
    with pytest.raises(ValueError, match="table of paired questions"):
        pairs_to_settle(((0, 0), (0, 0)), margin=0.02)
    with pytest.raises(ValueError, match="margin must lie between 0 and 100 %; got -2 %"):
        pairs_to_settle(((165, 4), (0, 0)), margin=-0.02)


@pytest.mark.parametrize(
    "table",
    [((165, 4), (0, 0)), ((59, 6), (16, 80)), ((5, 0), (0, 5)), ((3, 1), (5, 1)), ((1, 1), (7, 12))],
)
def test_it_narrows_the_interval_as_the_scaled_table_grows(table):
    # pairs_to_settle bisects on the size, which is sound only if, with the shares
    # fixed, the lower limit never falls and the upper never rises as it grows.
    n = sum(map(sum, table))
    sizes = [*range(n, n + 2000), 10**4, 10**5, 10**6, 10**7]
    limits = [_scaled_interval(table, size) for size in sizes]
    lows, highs = [low for low, _ in limits], [high for _, high in limits]
    assert all(later >= earlier - 1e-15 for earlier, later in itertools.pairwise(lows))
    assert all(later <= earlier + 1e-15 for earlier, later in itertools.pairwise(highs))
    # And so must the gate's bound, which the settling rule holds to the margin.
    total = sum(map(sum, table))
    bounds = [
        noninferiority_bound(tuple(tuple(cell * size / total for cell in row) for row in table))
        for size in sizes[::50]
    ]
    assert all(later >= earlier - 1e-12 for earlier, later in itertools.pairwise(bounds))


def test_it_plans_the_specs_example_with_two_independent_samples():
    # Spec 002: 8.5 % to 6.5 % needs "about 2,716" per group by the normal
    # approximation; statsmodels' arcsine effect size gives 2,711.
    needed = size_independent(0.085, 0.065)
    assert needed == 2711
    assert abs(needed - 2716) / 2716 < 0.01


def test_it_plans_a_paired_design_by_mcnemars_exact_power():
    # 2 points at 2 % discordance: every discordant pair favours one version,
    # and McNemar's exact test rejects once 6 are seen (2/2^6 = 0.031 <= 0.05;
    # 2/2^5 = 0.0625 is not), so its power on n pairs is P(Binomial(n, 0.02) >= 6).
    # Connor's approximation, (1.959964·sqrt(.02) + 0.841621·sqrt(.02 - .0004))²
    # / .0004 = 390.08, asks for 391 pairs, where that power is 79.45 %.
    assert size_paired_connor(0.5, 0.48, 0.02) == 391
    assert mcnemar_power(391, 0.5, 0.48, 0.02) == pytest.approx(binom.sf(5, 391, 0.02), abs=1e-12)
    assert round(mcnemar_power(391, 0.5, 0.48, 0.02), 4) == 0.7945
    assert size_paired(0.5, 0.48, 0.02) == 394
    assert binom.sf(5, 393, 0.02) < 0.8 <= binom.sf(5, 394, 0.02)
    # Spec 002's 8.5 % against 6.5 % at 6 % discordance: Connor's 1,175 pairs
    # (1.959964·sqrt(.06) + 0.841621·sqrt(.06 - .0004))² / .0004 = 1174.97 have
    # 77.6 % exact power; 1,244 reach 80 %.
    assert size_paired_connor(0.085, 0.065, 0.06) == 1175
    assert round(mcnemar_power(1175, 0.085, 0.065, 0.06), 3) == 0.776
    assert size_paired(0.085, 0.065, 0.06) == 1244
    assert mcnemar_power(1244, 0.085, 0.065, 0.06) >= 0.8 > mcnemar_power(1243, 0.085, 0.065, 0.06)
    with pytest.raises(ValueError, match="discordant share"):
        size_paired(0.5, 0.3, 0.1)


def test_its_power_is_the_rejection_rate_of_statsmodels_mcnemar_over_every_table():
    # 30 pairs, rates 60 % and 45 %, 25 % discordant: the discordant cells are
    # (b, c) with b favouring the first version; sum the trinomial chance of
    # every table statsmodels' exact McNemar rejects at 5 %.
    pairs, first, second = 30, (0.25 + 0.15) / 2, (0.25 - 0.15) / 2
    rejected = 0.0
    for b in range(pairs + 1):
        for c in range(pairs - b + 1):
            if mcnemar([[0, b], [c, pairs - b - c]], exact=True).pvalue <= 0.05:
                rejected += (
                    math.comb(pairs, b)
                    * math.comb(pairs - b, c)
                    * first**b
                    * second**c
                    * (1 - first - second) ** (pairs - b - c)
                )
    assert mcnemar_power(pairs, 0.6, 0.45, 0.25) == pytest.approx(rejected, abs=1e-12)


def test_it_plans_a_difference_of_exactly_0_1_point_typed_as_percentages():
    assert size_independent(0.086, 0.085) > 1_000_000


@pytest.mark.parametrize("plan", [size_independent, lambda p1, p2: size_paired(p1, p2, 0.1)])
@pytest.mark.parametrize(
    ("p1", "p2", "shown"),
    [
        (1.0, 0.9, "100 %"),
        (0.9, 0.0, "0 %"),
        (0.5, -0.05, "-5 %"),
        (85, 0.5, "8500 %"),
        (math.nan, 0.5, "nan %"),
    ],
)
def test_it_refuses_rates_outside_0_and_100_percent(plan, p1, p2, shown):
    with pytest.raises(ValueError, match=f"^rates must lie strictly between 0 % and 100 %; got {shown}$"):
        plan(p1, p2)


@pytest.mark.parametrize("plan", [size_independent, lambda p1, p2: size_paired(p1, p2, 0.1)])
def test_it_refuses_a_difference_under_0_1_point(plan):
    with pytest.raises(
        ValueError, match=r"^a difference under 0\.1 point cannot be planned for: 8\.5 % against 8\.45 %"
    ):
        plan(0.085, 0.0845)
    with pytest.raises(
        ValueError, match=r"^a difference under 0\.1 point cannot be planned for: 50 % against 50 %"
    ):
        plan(0.5, 0.5)


@pytest.mark.parametrize(
    ("discordant", "shown"),
    [(0.01, "1 %"), (0.2, "20 %"), (1.5, "150 %"), (-0.1, "-10 %"), (math.nan, "nan %")],
)
def test_it_refuses_a_discordant_share_the_rates_do_not_allow(discordant, shown):
    # 8.5 % and 6.5 %: the versions differ on at least 2 % of questions (the
    # difference) and at most 15 % (every success of either on a question the
    # other fails).
    with pytest.raises(
        ValueError,
        match=(
            r"^the discordant share \(questions whose outcome differs between the versions\) must lie "
            rf"between the difference, 2 %, and 15 %, the most that rates of 8\.5 % and 6\.5 % allow; got {shown}$"
        ),
    ):
        size_paired(0.085, 0.065, discordant)
    assert size_paired(0.085, 0.065, 0.15) > size_paired(0.085, 0.065, 0.02)


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"alpha": 0.0}, "alpha must lie strictly between 0 and 1; got 0"),
        ({"alpha": 5.0}, "alpha must lie strictly between 0 and 1; got 5"),
        ({"power": 1.0}, "power must lie strictly between 0 and 1; got 1"),
        ({"power": 80.0}, "power must lie strictly between 0 and 1; got 80"),
        ({"power": -0.2}, "power must lie strictly between 0 and 1; got -0.2"),
    ],
)
def test_it_refuses_alpha_or_power_outside_0_and_1(keywords, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        size_independent(0.085, 0.065, **keywords)
    with pytest.raises(ValueError, match=f"^{message}$"):
        size_paired(0.085, 0.065, 0.06, **keywords)
    with pytest.raises(ValueError, match=f"^{message}$"):
        detectable_difference(200, 0.1, **keywords)


def test_it_says_what_a_number_of_pairs_can_resolve():
    smallest = detectable_difference(200, 0.1)
    assert size_paired(0.5, 0.5 + smallest * 1.001, 0.1) <= 200
    assert size_paired(0.5, 0.5 + smallest * 0.9, 0.1) > 200
    assert detectable_difference(0, 0.1) is None
    assert detectable_difference(200, 0.0) is None
    with pytest.raises(ValueError, match=r"^the discordant share cannot exceed 100 %; got 120 %$"):
        detectable_difference(200, 1.2)


@pytest.mark.parametrize(
    ("table", "level", "expected"),
    [
        # Tango (1998), his example: 44 pairs, one discordant, 90 % interval.
        ((43, 0, 1, 0), 0.90, (-0.096, 0.037)),
        # Fagerland, Lydersen and Laake (2014), airway hyper-responsiveness (Bentur et al. 2009).
        ((1, 1, 7, 12), 0.95, (-0.517, -0.026)),
        # Agresti and Min (2005).
        ((53, 16, 8, 9), 0.95, (-0.020, 0.207)),
    ],
)
def test_it_reproduces_tangos_published_intervals(table, level, expected):
    low, high = tango_paired(*table, alpha=1 - level)
    assert (round(low, 3), round(high, 3)) == expected


def test_its_tango_interval_is_wilsons_for_0_of_n_without_discordant_pairs():
    # With b = c = 0 the restricted share of c is -delta and the statistic is
    # sqrt(n·t/(1 - t)) at delta = -t, so the lower limit is -z²/(n + z²):
    # 3.8415/172.8415 = 2.2225 points at 169 pairs (Newcombe: ±1.15).
    low, high = tango_paired(84, 0, 0, 85)
    z2 = 1.959963984540054**2
    assert low == pytest.approx(-z2 / (169 + z2), abs=1e-9) and high == pytest.approx(-low, abs=1e-9)
    # Half a pair of correction: (169·t - 1/2)² = z²·169·t·(1 - t), t = 2.7702 points.
    corrected, _ = tango_paired(84, 0, 0, 85, correction=0.5)
    t = -corrected
    assert (169 * t - 0.5) ** 2 == pytest.approx(z2 * 169 * t * (1 - t), rel=1e-9)
    assert round(corrected, 6) == -0.027702


def test_its_gate_bound_is_the_lower_of_newcombes_and_tangos_corrected_limit():
    # Candidate - baseline: Newcombe's limit collapses without discordant pairs,
    # Tango's does not; the bound is never above the Newcombe interval shown.
    assert noninferiority_bound(((84, 0), (0, 85))) == pytest.approx(-0.027702, abs=1e-6)
    newcombe_low, _ = newcombe_paired(59, 16, 6, 80)  # the published table, candidate first
    assert noninferiority_bound(((59, 6), (16, 80))) <= newcombe_low
    assert noninferiority_bound(((59, 6), (16, 80))) == pytest.approx(
        min(newcombe_low, tango_paired(59, 16, 6, 80, correction=0.5)[0])
    )


def test_it_says_how_often_the_pairs_to_settle_would_settle_it():
    # 4 of 169 newly failed; 197 pairs settle it if the shares stay, but pairs
    # drawn with those shares settle it about half the time (fixed seed).
    table = ((165, 4), (0, 0))
    assert settle_chance(table, 197, margin=0.02) == 203 / 400
    assert settle_chance(table, 197, margin=0.02) == settle_chance(table, 197, margin=0.02)
    with pytest.raises(ValueError, match="a chance needs a table"):
        settle_chance(((0, 0), (0, 0)), 10, margin=0.02)


def test_its_gate_chance_sums_tangos_corrected_limit_over_every_table():
    # 40 pairs, 30 % discordant, versions equal, a 10-point margin: sum the
    # trinomial chance of every table whose corrected Tango limit clears -10
    # points (Tango's b is the candidate-only count).
    pairs, each = 40, 0.15
    passed = 0.0
    for against in range(pairs + 1):
        for favour in range(pairs - against + 1):
            low, _ = tango_paired(0, favour, against, pairs - against - favour, correction=0.5)
            if low > -0.1:
                passed += (
                    math.comb(pairs, against)
                    * math.comb(pairs - against, favour)
                    * each ** (against + favour)
                    * (1 - 2 * each) ** (pairs - against - favour)
                )
    assert gate_pass_chance(pairs, 0.3, margin=0.1) == pytest.approx(passed, abs=1e-9)


def test_it_plans_the_pairs_the_gate_needs_to_pass_equal_versions():
    # At 2 % discordance Connor's McNemar size for 2 points is 391; the gate,
    # with its bound, passes equal versions with 80 % chance only from 572.
    needed = size_gate(0.02, margin=0.02)
    assert needed == 572
    assert (
        gate_pass_chance(needed, 0.02, margin=0.02) >= 0.8 > gate_pass_chance(needed - 1, 0.02, margin=0.02)
    )
    assert size_gate(0.1, margin=0.02, difference=-0.02) is None  # at the margin it must not pass
    with pytest.raises(ValueError, match="at least the difference"):
        gate_pass_chance(100, 0.01, margin=0.02, difference=0.02)
