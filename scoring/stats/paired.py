"""Comparing two versions on the questions both answered, and planning
sample sizes (spec 002: intervals, sample sizes, the paired design).

McNemar's exact test and the power of two independent samples come from
statsmodels; the Wilson intervals are scoring.stats.rates' own. What no
well-kept Python library ships is written out below with its sources and
tested on published examples: Newcombe's hybrid score interval for a
difference of paired proportions, Tango's score interval for the same
difference (with a continuity correction, the gate's bound), the exact power
of McNemar's exact test (a sum over the binomial, checked against
statsmodels' test on every table), and Connor's approximate size beside it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np
from scipy.optimize import brentq
from scipy.stats import binom, norm
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_effectsize

from scoring.stats.rates import pin_edges, wilson_interval

NEWCOMBE_METHOD = "Newcombe hybrid score (method 10)"
TANGO_METHOD = "Tango score, continuity-corrected by half a pair"
GATE_BOUND_METHOD = (
    "the lower of Newcombe's lower limit and Tango's score lower limit continuity-corrected by half "
    "a pair (one-sided 97.5 %)"
)
# Tango's score limits are corrected by half a pair: uncorrected, they pass a
# candidate exactly at a 2-point margin up to 2.55 % of the time (exact, over
# the sweep of bench/coverage_gate.py: 30-2,000 pairs, 0-90 % two-way
# discordance), corrected at most 2.44 % there.
GATE_CORRECTION = 0.5

# Differences smaller than this need millions of questions; planning for them
# only produces absurd figures, so the planner refuses them with a sentence.
SMALLEST_PLANNED_DIFFERENCE = 0.001
# Shares typed as percentages arrive as floats: 8.6 % - 8.5 % is 0.000999…
# in binary, and must still count as the 0.1 point it was meant to be.
_TOLERANCE = 1e-12

Table = tuple[tuple[float, float], tuple[float, float]]


@dataclass(frozen=True)
class Paired:
    """Per-question outcomes of two versions on their common questions.

    ``table`` is [[both succeed, only the baseline], [only the candidate,
    both fail]]; ``difference`` is candidate rate minus baseline rate and
    ``low``/``high`` bound it by ``interval_method``.
    """

    n: int
    table: tuple[tuple[int, int], tuple[int, int]]
    baseline_rate: float | None
    candidate_rate: float | None
    difference: float | None
    low: float | None
    high: float | None
    p_value: float | None
    interval_method: str = NEWCOMBE_METHOD

    @property
    def discordant(self) -> int:
        return self.table[0][1] + self.table[1][0]

    @property
    def discordance(self) -> float:
        """The share of paired questions on which the versions differ (0 with no pairs)."""
        return self.discordant / self.n if self.n else 0.0


def paired(baseline: Mapping[str, bool], candidate: Mapping[str, bool], *, alpha: float = 0.05) -> Paired:
    """Compare per-question successes on the questions both hold.

    Returns the table, both rates, the candidate - baseline difference with
    its Newcombe interval and McNemar's exact p; with no common question,
    only the empty table and None for every figure.
    """
    both = only_baseline = only_candidate = neither = 0
    for question_id, base_success in baseline.items():
        if question_id not in candidate:
            continue
        if candidate[question_id]:
            if base_success:
                both += 1
            else:
                only_candidate += 1
        elif base_success:
            only_baseline += 1
        else:
            neither += 1
    return paired_from_table(((both, only_baseline), (only_candidate, neither)), alpha=alpha)


def paired_from_table(table: tuple[tuple[int, int], tuple[int, int]], *, alpha: float = 0.05) -> Paired:
    """The figures of ``paired`` from its table alone ([[both succeed, only
    the baseline], [only the candidate, both fail]] over the common
    questions), for callers that count the table elsewhere, such as in a
    database. Refuses (ValueError) negative and fractional counts."""
    # Counts may come from a database as Decimal; the table holds ints.
    fractional = [cell for row in table for cell in row if cell != int(cell)]
    if fractional:
        raise ValueError(f"counts must be whole numbers; got {fractional[0]} in {table}")
    (both, only_baseline), (only_candidate, neither) = ((int(cell) for cell in row) for row in table)
    if min(both, only_baseline, only_candidate, neither) < 0:
        raise ValueError(f"counts cannot be negative; got {table}")
    table = ((both, only_baseline), (only_candidate, neither))
    n = both + only_baseline + only_candidate + neither
    if not n:
        return Paired(0, table, None, None, None, None, None, None)
    low, high = _candidate_minus_baseline(table, alpha=alpha)
    p_value = float(mcnemar([[both, only_baseline], [only_candidate, neither]], exact=True).pvalue)
    return Paired(
        n=n,
        table=table,
        baseline_rate=(both + only_baseline) / n,
        candidate_rate=(both + only_candidate) / n,
        difference=(only_candidate - only_baseline) / n,
        low=low,
        high=high,
        p_value=p_value,
    )


def _candidate_minus_baseline(table: Table, *, alpha: float) -> tuple[float, float]:
    (both, only_baseline), (only_candidate, neither) = table
    # Newcombe's p1 is the first row's margin; transposing the table makes it
    # the candidate's rate. phi is the same for a table and its transpose.
    return newcombe_paired(both, only_candidate, only_baseline, neither, alpha=alpha)


def newcombe_paired(a: float, b: float, c: float, d: float, *, alpha: float = 0.05) -> tuple[float, float]:
    """The 1 - alpha interval for p1 - p2 = (b - c)/n of the paired table
    [[a, b], [c, d]], where p1 = (a + b)/n and p2 = (a + c)/n: Newcombe's
    hybrid score interval, his method 10 (Statistics in Medicine 17, 1998,
    2635-2650).

    Counts may be fractional (a table scaled to another size). Returns
    (low, high) within [-1, 1]; refuses negative counts, an empty table and
    alpha outside (0, 1) with ValueError.
    """
    if min(a, b, c, d) < 0:
        raise ValueError(f"counts cannot be negative; got [[{a}, {b}], [{c}, {d}]]")
    _check_level("alpha", alpha)
    n = a + b + c + d
    if not n > 0:
        raise ValueError("an interval needs at least one pair; the table is empty")
    p1, p2 = (a + b) / n, (a + c) / n
    low1, high1 = _wilson(a + b, c + d, alpha=alpha)
    low2, high2 = _wilson(a + c, b + d, alpha=alpha)
    phi = _newcombe_phi(a, b, c, d)
    # Square and add: each limit of the difference combines the distances from
    # the two estimates to the Wilson limits pointing the same way, less their
    # covariance through phi. (x² - 2·phi·x·y + y² >= (x - y)² >= 0; max()
    # only absorbs rounding.)
    below = math.sqrt(max((p1 - low1) ** 2 - 2 * phi * (p1 - low1) * (high2 - p2) + (high2 - p2) ** 2, 0.0))
    above = math.sqrt(max((high1 - p1) ** 2 - 2 * phi * (high1 - p1) * (p2 - low2) + (p2 - low2) ** 2, 0.0))
    difference = p1 - p2
    return max(-1.0, difference - below), min(1.0, difference + above)


def tango_paired(
    a: float, b: float, c: float, d: float, *, alpha: float = 0.05, correction: float = 0.0
) -> tuple[float, float]:
    """The 1 - alpha interval for p1 - p2 = (b - c)/n of the paired table
    [[a, b], [c, d]] (``newcombe_paired``'s layout) by Tango's score method
    (Statistics in Medicine 17, 1998, 891-908): the differences delta whose
    score statistic (b - c - n·delta)/sqrt(n·(2·q + delta·(1 - delta))), with
    q the cell c's maximum-likelihood share under delta, lies within ±z.
    ``correction`` (in pairs) shrinks the statistic's numerator towards 0 by
    that much, as Yates's correction does; 0 is Tango's own interval.

    Unlike Newcombe's, the interval does not collapse without discordant
    pairs: for b = c = 0 its lower limit is -z²/(n + z²), the Wilson upper
    limit for 0 of n (without the correction). Counts may be fractional.
    Returns (low, high) within [-1, 1]; refuses what ``newcombe_paired``
    refuses and a negative correction with ValueError.
    """
    if min(a, b, c, d) < 0:
        raise ValueError(f"counts cannot be negative; got [[{a}, {b}], [{c}, {d}]]")
    _check_level("alpha", alpha)
    if not correction >= 0:
        raise ValueError(f"the continuity correction cannot be negative; got {correction:g}")
    n = a + b + c + d
    if not n > 0:
        raise ValueError("an interval needs at least one pair; the table is empty")
    return _tango_limit(b, c, n, alpha=alpha, correction=correction, lower=True), _tango_limit(
        b, c, n, alpha=alpha, correction=correction, lower=False
    )


@cache
def _two_sided_z(alpha: float) -> float:
    # A bisection asks for it dozens of times; scipy's ppf is slow for that.
    return float(norm.ppf(1 - alpha / 2))


def _tango_limit(b: float, c: float, n: float, *, alpha: float, correction: float, lower: bool) -> float:
    z = _two_sided_z(alpha)
    estimate = (b - c) / n
    # Just inside ±1, where the statistic is infinite: the root lies between.
    edge = 1 - 1e-12
    if lower:
        # With under half a pair between the table and -1 the corrected
        # statistic never reaches z: nothing above -1 is ruled out.
        if estimate <= -edge or tango_score(b, c, n, -edge, correction=correction) <= z:
            return -1.0
        root = brentq(lambda delta: tango_score(b, c, n, delta, correction=correction) - z, -edge, estimate)
        return max(-1.0, root)
    if estimate >= edge or tango_score(b, c, n, edge, correction=correction) >= -z:
        return 1.0
    root = brentq(lambda delta: tango_score(b, c, n, delta, correction=correction) + z, estimate, edge)
    return min(1.0, root)


def tango_score(b: float, c: float, n: float, delta: float, *, correction: float = 0.0) -> float:
    """Tango's score statistic for the hypothesis p1 - p2 = ``delta`` given the
    discordant counts b (first yes, second no) and c of n pairs, its
    numerator shrunk towards 0 by ``correction`` pairs; it falls as delta
    grows. (Tango 1998, equation 3, with q the cell c's restricted maximum
    likelihood share, the root of 2n·q² + B·q + C = 0.)"""
    quadratic_b = -b - c + (2 * n - b + c) * delta
    quadratic_c = -c * delta * (1 - delta)
    q = (math.sqrt(max(quadratic_b**2 - 8 * n * quadratic_c, 0.0)) - quadratic_b) / (4 * n)
    excess = b - c - n * delta
    numerator = math.copysign(max(abs(excess) - correction, 0.0), excess)
    variance = n * (2 * q + delta * (1 - delta))
    if variance <= 0:
        return 0.0 if numerator == 0 else math.copysign(math.inf, numerator)
    return numerator / math.sqrt(variance)


def noninferiority_bound(table: Table, *, alpha: float = 0.05) -> float:
    """The gate's lower bound for candidate - baseline on a ``Paired.table``
    (fractional counts allowed): the lower of Newcombe's lower limit and
    Tango's, corrected by half a pair (GATE_BOUND_METHOD), both two-sided
    1 - alpha. Newcombe's limit alone is too high when no pair, or almost
    none, favours the candidate: a candidate exactly 2 points worse passed a
    2-point margin up to 4.1 % of the time instead of 2.5 %. Taking the
    lower keeps the bound at or below the Newcombe interval the pages show."""
    (both, only_baseline), (only_candidate, neither) = table
    newcombe_low = _candidate_minus_baseline(table, alpha=alpha)[0]
    # Tango's b is the candidate-only count: the transpose, as for Newcombe.
    n = both + only_baseline + only_candidate + neither
    tango_low = _tango_limit(
        only_candidate, only_baseline, n, alpha=alpha, correction=GATE_CORRECTION, lower=True
    )
    return min(newcombe_low, tango_low)


def _wilson(successes: float, failures: float, *, alpha: float) -> tuple[float, float]:
    # Fractional counts are fine (a table scaled to another size). The limits
    # can miss 0 and 1 by rounding at the edges (1e-20 at 0 of 30,000);
    # pinning them keeps a one-sided table's interval ending exactly at -1 or 1.
    low, high = wilson_interval(successes, successes + failures, alpha=alpha)
    return pin_edges(low, high, none=successes == 0, all_=failures == 0)


def _newcombe_phi(a: float, b: float, c: float, d: float) -> float:
    # Method 10 estimates the correlation of the two margins by phi with
    # ad - bc shrunk by n/2 towards 0 when it is positive (to 0 when within
    # n/2), and left alone when negative. With the plain phi the published
    # table [[59, 6], [16, 80]] gives -0.1174 to -0.0059 instead of the published
    # -0.1186 to -0.0046. A margin of 0 leaves phi undefined; it is then 0.
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    if margins == 0:
        return 0.0
    n = a + b + c + d
    cross = a * d - b * c
    if cross > n / 2:
        cross -= n / 2
    elif cross > 0:
        cross = 0.0
    return cross / math.sqrt(margins)


def pairs_to_settle(
    table: tuple[tuple[int, int], tuple[int, int]],
    *,
    margin: float,
    alpha: float = 0.05,
    limit: int = 10_000_000,
) -> int | None:
    """How many paired questions would settle a non-inferiority decision on
    the candidate - baseline difference, if the shares of the four cells of
    ``table`` (the ``Paired.table`` layout) stayed as observed.

    The decision is the gate's: "pass" when ``noninferiority_bound`` is above
    -``margin`` (a share: 0.02 is 2 points) and "worse" when the Newcombe
    interval's upper limit is below 0. This is a conditional estimate: the
    observed difference and discordance are taken as the truth, and a new
    sample will differ; ``settle_chance`` says how often that many settles
    it. Returns the smallest m >= the table's n at which either holds, or
    None when no m up to ``limit`` does: with margin 0 a difference of
    exactly 0 never settles, and a difference just below 0 can need more
    questions than ``limit``. (A difference of exactly -margin < 0 does
    settle, as "worse": the upper limit closes in on -margin.) Refuses an
    empty table, a margin outside [0, 1) and alpha outside (0, 1).
    """
    (both, only_baseline), (only_candidate, neither) = table
    n = both + only_baseline + only_candidate + neither
    if min(both, only_baseline, only_candidate, neither) < 0 or n <= 0:
        raise ValueError(f"a decision needs a table of paired questions; got {table}")
    if not 0 <= margin < 1:
        raise ValueError(f"the margin must lie between 0 and 100 %; got {_percent(margin)}")
    _check_level("alpha", alpha)

    def settled(size: int) -> bool:
        scale = size / n
        scaled = tuple(tuple(cell * scale for cell in row) for row in table)
        return settles(scaled, margin=margin, alpha=alpha)

    if settled(n):
        return n
    # Double until settled, then bisect between the last size that was not
    # and the first that was. With the shares fixed both limits move towards
    # the difference as the size grows, so once settled it stays settled.
    unsettled, size = n, n
    while not settled(size):
        if size >= limit:
            return None
        unsettled, size = size, min(2 * size, limit)
    return _first_true(settled, unsettled, size)


def settles(table: Table, *, margin: float, alpha: float = 0.05) -> bool:
    """Whether the gate's decision on ``table`` is settled: a pass (its bound
    above -``margin``) or shown worse (Newcombe's upper limit below 0)."""
    if _candidate_minus_baseline(table, alpha=alpha)[1] < 0:
        return True
    return noninferiority_bound(table, alpha=alpha) > -margin


# Simulated reviews behind settle_chance: its figure is within about 2.5
# points of the exact chance (one standard error), ample for "about 48 %".
SETTLE_DRAWS = 400


def settle_chance(
    table: Table, size: int, *, margin: float, alpha: float = 0.05, draws: int = SETTLE_DRAWS, seed: int = 24
) -> float:
    """The chance that ``size`` paired questions settle the gate's decision
    (``settles``) if each question falls in the cells of ``table`` with the
    shares observed there: the share of ``draws`` simulated tables of
    ``size`` pairs (numpy, a fixed seed, so the same table always gets the
    same figure) that settle. Refuses an empty table and a size below 1."""
    cells = np.array([cell for row in table for cell in row], dtype=float)
    if cells.min() < 0 or not cells.sum() > 0 or size < 1:
        raise ValueError(f"a chance needs a table of paired questions and a size; got {table} and {size}")
    rng = np.random.default_rng(seed)
    samples = rng.multinomial(size, cells / cells.sum(), size=draws)
    tables, counts = np.unique(samples, axis=0, return_counts=True)
    settled = sum(
        int(count)
        for (both, only_baseline, only_candidate, neither), count in zip(tables.tolist(), counts, strict=True)
        if settles(((both, only_baseline), (only_candidate, neither)), margin=margin, alpha=alpha)
    )
    return settled / draws


def size_independent(p1: float, p2: float, *, alpha: float = 0.05, power: float = 0.8) -> int:
    """Answers per version to detect p1 against p2 with two independent
    samples (arcsine effect size, normal power, both by statsmodels).

    Refuses with a sentence rates not strictly between 0 and 1, a difference
    under 0.1 point, and alpha or power outside (0, 1).
    """
    _check_plan(p1, p2, alpha=alpha, power=power)
    effect = abs(proportion_effectsize(p1, p2))
    return math.ceil(NormalIndPower().solve_power(effect_size=effect, alpha=alpha, power=power, ratio=1.0))


def size_paired(p1: float, p2: float, discordant: float, *, alpha: float = 0.05, power: float = 0.8) -> int:
    """Questions to detect p1 against p2 when both versions answer the same
    questions, given the expected share of questions whose outcome differs
    between them: the size at which McNemar's exact test, the one
    ``paired`` reports (statsmodels), reaches ``power`` (``mcnemar_power``).
    Connor's normal approximation (Biometrics 43, 1987, 207-211,
    ``size_paired_connor``) promises more than the exact test gives: 391
    pairs for 2 points at 2 % discordance have 79.4 % exact power, 1,175 for
    8.5 % against 6.5 % at 6 % have 77.6 %.

    The exact power zigzags by a point or so as the size grows (the test's
    critical count moves in steps); this is the size found by bisection
    between one where the power falls short and one where it reaches
    ``power``, at which it does. Refuses with a sentence what
    ``size_independent`` refuses, and a discordant share below the
    difference or above what the two rates allow (p1 + p2 or 2 - p1 - p2,
    whichever is smaller).
    """
    delta, discordant = _check_paired_plan(p1, p2, discordant, alpha=alpha, power=power)
    # Connor's size is near: start there and widen until it brackets.
    low = high = max(1, size_paired_connor(p1, p2, discordant, alpha=alpha, power=power))
    while _power(high, delta, discordant, alpha) < power:
        low, high = high, 2 * high
    while low > 1 and _power(low, delta, discordant, alpha) >= power:
        high, low = low, max(1, low // 2)
    if _power(low, delta, discordant, alpha) >= power:
        return low
    while high - low > 1:
        middle = (low + high) // 2
        if _power(middle, delta, discordant, alpha) >= power:
            high = middle
        else:
            low = middle
    return high


def size_paired_connor(
    p1: float, p2: float, discordant: float, *, alpha: float = 0.05, power: float = 0.8
) -> int:
    """Connor's (1987) normal-approximation size for McNemar's test, n =
    (z_(1-alpha/2)·sqrt(psi) + z_power·sqrt(psi - delta²))² / delta², for
    comparison with ``size_paired``; refuses what ``size_paired`` refuses."""
    delta, discordant = _check_paired_plan(p1, p2, discordant, alpha=alpha, power=power)
    return math.ceil(_paired_size(delta, discordant, *_z_values(alpha=alpha, power=power)))


def mcnemar_power(pairs: int, p1: float, p2: float, discordant: float, *, alpha: float = 0.05) -> float:
    """The exact power of McNemar's exact test (statsmodels' ``mcnemar`` with
    exact=True, two-sided at ``alpha``) on ``pairs`` paired questions when
    the versions' rates are p1 and p2 and a share ``discordant`` of the
    questions changes outcome between them.

    Summed over the binomial, not approximated: the discordant count m is
    Binomial(pairs, discordant), and of those the ones favouring the better
    version Binomial(m, (discordant + delta)/(2·discordant)); the test
    rejects when the smaller of the two discordant counts is at most the
    largest k with 2·P(Binomial(m, 1/2) <= k) <= alpha. Refuses what
    ``size_paired`` refuses and fewer than one pair."""
    delta, discordant = _check_paired_plan(p1, p2, discordant, alpha=alpha, power=0.5)
    if pairs < 1:
        raise ValueError(f"power needs at least one pair; got {pairs}")
    return _power(int(pairs), delta, discordant, alpha)


def _power(pairs: int, delta: float, discordant: float, alpha: float) -> float:
    counts, chances, critical = _discordant_counts(pairs, discordant, alpha)
    better = min((discordant + delta) / (2 * discordant), 1.0)
    # 2·P(X <= k) <= alpha < 1 puts k below m/2, so the two tails never overlap.
    rejected = binom.cdf(critical, counts, better) + binom.sf(counts - critical - 1, counts, better)
    return float(np.sum(np.where(critical >= 0, chances * rejected, 0.0)))


@lru_cache(maxsize=32)
def _discordant_counts(pairs: int, discordant: float, alpha: float) -> tuple[np.ndarray, ...]:
    """The discordant counts m that matter to _power's sum (a chance above
    1e-13), the chance of each, and the test's critical k for each. The
    same for every difference tried: detectable_difference's bisection
    asks twelve times, and the critical values of a million pairs' few
    thousand counts took 18 ms each time (the compare page's 1.3 s)."""
    first = int(binom.ppf(1e-13, pairs, discordant))
    last = int(binom.isf(1e-13, pairs, discordant))
    counts = np.arange(max(first - 1, 0), min(last + 1, pairs) + 1)
    chances = binom.pmf(counts, pairs, discordant)
    critical = binom.ppf(alpha / 2, counts, 0.5)
    critical = np.where(2 * binom.cdf(critical, counts, 0.5) <= alpha, critical, critical - 1)
    for array in (counts, chances, critical):
        array.flags.writeable = False  # shared by every caller of the cache
    return counts, chances, critical


def gate_pass_chance(
    pairs: int, discordant: float, *, margin: float, difference: float = 0.0, alpha: float = 0.05
) -> float:
    """The chance that the gate's bound clears -``margin`` on ``pairs`` paired
    questions when candidate - baseline is truly ``difference`` and a share
    ``discordant`` of the questions changes outcome between the versions.

    Exact for the Tango part of ``noninferiority_bound``, summed over the
    trinomial of the two discordant counts: for each count favouring the
    baseline, the candidate's count from which Tango's corrected limit clears
    the margin (the statistic grows with it). The gate also holds Newcombe's
    limit to the margin, so its own chance is at most this; where
    bench/coverage_gate.py simulates the whole rule (at the margin and for
    equal versions) the two agree within the simulation's noise.
    Refuses a discordant share outside (|difference|, 1], a margin outside
    [0, 1) and fewer than one pair."""
    _check_level("alpha", alpha)
    if not 0 <= margin < 1:
        raise ValueError(f"the margin must lie between 0 and 100 %; got {_percent(margin)}")
    if not abs(difference) - _TOLERANCE <= discordant <= 1 or discordant <= 0:
        raise ValueError(
            f"the discordant share must lie above 0 %, at least the difference ({_percent(abs(difference))}) "
            f"and at most 100 %; got {_percent(discordant)}"
        )
    if pairs < 1:
        raise ValueError(f"a chance needs at least one pair; got {pairs}")
    pairs = int(pairs)
    only_baseline = max((discordant - difference) / 2, 0.0)
    only_candidate = max((discordant + difference) / 2, 0.0)
    z = _two_sided_z(alpha)
    first = int(binom.ppf(1e-13, pairs, only_baseline))
    last = int(binom.isf(1e-13, pairs, only_baseline))
    share = min(only_candidate / (1 - only_baseline), 1.0) if only_baseline < 1 else 0.0

    def clears(count: int, against: int) -> bool:
        return tango_score(count, against, pairs, -margin, correction=GATE_CORRECTION) > z

    counts, smallests, smallest = [], [], None
    for against in range(max(first - 1, 0), min(last + 1, pairs) + 1):
        rest = pairs - against
        # The statistic falls as the baseline's count grows, so the smallest
        # candidate count that clears never falls: walk up from the last one.
        if smallest is None:
            if not clears(rest, against):
                continue
            low, high = -1, rest
            while high - low > 1:
                middle = (low + high) // 2
                if clears(middle, against):
                    high = middle
                else:
                    low = middle
            smallest = high
        else:
            while smallest <= rest and not clears(smallest, against):
                smallest += 1
            if smallest > rest:
                break
        counts.append(against)
        smallests.append(smallest)
    if not counts:
        return 0.0
    against_counts = np.array(counts)
    chances = binom.pmf(against_counts, pairs, only_baseline)
    chance = float(np.sum(chances * binom.sf(np.array(smallests) - 1, pairs - against_counts, share)))
    return min(chance, 1.0)


def size_gate(
    discordant: float, *, margin: float, difference: float = 0.0, alpha: float = 0.05, power: float = 0.8
) -> int | None:
    """Paired questions at which the gate passes with chance ``power``
    (``gate_pass_chance``) when candidate - baseline is truly ``difference``
    (0: versions equal) at the discordant share given; None when the
    difference is not above -``margin`` (the gate must then not pass) or
    no size up to ten million reaches it. The chance zigzags a little with
    the size; this is where bisection finds it reaching ``power``."""
    _check_level("power", power)
    if not difference > -margin:
        return None

    def reaches(size: int) -> bool:
        return gate_pass_chance(size, discordant, margin=margin, difference=difference, alpha=alpha) >= power

    gap = difference + margin
    # The normal approximation's size is near; widen from there until it brackets.
    start = (_two_sided_z(alpha) + norm.ppf(power)) ** 2 * discordant / gap**2
    low = high = max(1, math.ceil(start))
    while not reaches(high):
        if high >= 10_000_000:
            return None
        low, high = high, min(2 * high, 10_000_000)
    while low > 1 and reaches(low):
        high, low = low, max(1, low // 2)
    if reaches(low):
        return low
    return _first_true(reaches, low, high)


def _first_true(holds, low: int, high: int) -> int:
    """The smallest size in (low, high] where ``holds`` turns true, by
    bisection, given that it is false at ``low`` and true at ``high``."""
    while high - low > 1:
        middle = (low + high) // 2
        if holds(middle):
            high = middle
        else:
            low = middle
    return high


def _check_paired_plan(
    p1: float, p2: float, discordant: float, *, alpha: float, power: float
) -> tuple[float, float]:
    _check_plan(p1, p2, alpha=alpha, power=power)
    delta = abs(p1 - p2)
    # b - c is the difference and b + c can hold at most every question on
    # which one version succeeds, or every one on which one fails.
    most = min(p1 + p2, 2 - p1 - p2)
    if not delta - _TOLERANCE <= discordant <= most + _TOLERANCE:
        raise ValueError(
            f"the discordant share (questions whose outcome differs between the versions) must lie "
            f"between the difference, {_percent(delta)}, and {_percent(most)}, the most that rates of "
            f"{_percent(p1)} and {_percent(p2)} allow; got {_percent(discordant)}"
        )
    return delta, min(max(discordant, delta), 1.0)


def _z_values(*, alpha: float, power: float) -> tuple[float, float]:
    # Worked out once per plan: scipy's ppf costs a fraction of a millisecond,
    # and a bisection calls for the size sixty times.
    return norm.ppf(1 - alpha / 2), norm.ppf(power)


def _paired_size(delta: float, discordant: float, z_alpha: float, z_beta: float) -> float:
    return (z_alpha * math.sqrt(discordant) + z_beta * math.sqrt(discordant - delta**2)) ** 2 / delta**2


# Below this observed discordance the detectable difference is worked out as if
# it were this: a comparison that saw no disagreement has not shown none exists.
DISCORDANCE_FLOOR = 0.05


def detectable(result: Paired) -> float | None:
    """The smallest difference ``result``'s paired questions can detect at
    their observed discordance (at least DISCORDANCE_FLOOR); None with no pairs."""
    return detectable_difference(result.n, max(result.discordance, DISCORDANCE_FLOOR)) if result.n else None


def detectable_difference(
    pairs: int, discordant: float, *, alpha: float = 0.05, power: float = 0.8
) -> float | None:
    """The smallest difference (a share, 0-1) that ``pairs`` paired questions
    can detect with McNemar's exact test at ``power`` (``mcnemar_power``),
    given the observed discordant share; None when none can (no pairs, no
    discordant share, or too few pairs for even the largest, when every
    discordant pair goes one way).

    Refuses with a sentence a discordant share above 100 % and alpha or
    power outside (0, 1).
    """
    _check_level("alpha", alpha)
    _check_level("power", power)
    if pairs < 1:
        return None
    if not discordant <= 1:
        raise ValueError(f"the discordant share cannot exceed 100 %; got {_percent(discordant)}")
    if discordant <= 0:
        return None
    pairs = int(pairs)
    low, high = 0.0, discordant
    if _power(pairs, high, discordant, alpha) < power:
        return None
    # Bisection to a hundredth of a point: the power grows with the difference.
    while high - low > 1e-4:
        middle = (low + high) / 2
        if _power(pairs, middle, discordant, alpha) < power:
            low = middle
        else:
            high = middle
    return high


def _check_plan(p1: float, p2: float, *, alpha: float, power: float) -> None:
    for value in (p1, p2):
        if not 0 < value < 1:
            raise ValueError(f"rates must lie strictly between 0 % and 100 %; got {_percent(value)}")
    if abs(p1 - p2) < SMALLEST_PLANNED_DIFFERENCE - _TOLERANCE:
        raise ValueError(
            f"a difference under 0.1 point cannot be planned for: {_percent(p1)} against "
            f"{_percent(p2)} would need more questions than any review can grade"
        )
    _check_level("alpha", alpha)
    _check_level("power", power)


def _check_level(name: str, value: float) -> None:
    # `not 0 < value < 1` also catches NaN, which compares false to everything.
    if not 0 < value < 1:
        raise ValueError(f"{name} must lie strictly between 0 and 1; got {value:g}")


def _percent(share: float) -> str:
    return f"{share * 100:g} %"
