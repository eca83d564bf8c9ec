"""Comparing two versions on the questions both answered, and planning
sample sizes (spec 002: intervals, sample sizes, the paired design).

McNemar's exact test and the power of two independent samples come from
statsmodels; the paired-design size follows Connor (1987), which no
well-kept library ships, and is written out below with its source.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from scipy.stats import norm
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_effectsize


@dataclass(frozen=True)
class Paired:
    """Per-question outcomes of two versions on their common questions.

    ``table`` is [[both succeed, only the baseline], [only the candidate,
    both fail]]; ``difference`` is candidate rate minus baseline rate.
    """

    n: int
    table: tuple[tuple[int, int], tuple[int, int]]
    baseline_rate: float | None
    candidate_rate: float | None
    difference: float | None
    low: float | None
    high: float | None
    p_value: float | None

    @property
    def discordant(self) -> int:
        return self.table[0][1] + self.table[1][0]


def paired(baseline: Mapping[str, bool], candidate: Mapping[str, bool], *, alpha: float = 0.05) -> Paired:
    """Compare per-question successes on the questions both hold."""
    common = sorted(set(baseline) & set(candidate))
    both = sum(baseline[q] and candidate[q] for q in common)
    only_baseline = sum(baseline[q] and not candidate[q] for q in common)
    only_candidate = sum(candidate[q] and not baseline[q] for q in common)
    neither = len(common) - both - only_baseline - only_candidate
    table = ((both, only_baseline), (only_candidate, neither))
    n = len(common)
    if not n:
        return Paired(0, table, None, None, None, None, None, None)
    difference = (only_candidate - only_baseline) / n
    # Wald interval for a difference of paired proportions (Agresti, Categorical
    # Data Analysis, 10.1.2); statsmodels offers none for the paired case.
    z = norm.ppf(1 - alpha / 2)
    spread = math.sqrt(max((only_candidate + only_baseline) / n - difference**2, 0.0) / n)
    p_value = float(mcnemar([[both, only_baseline], [only_candidate, neither]], exact=True).pvalue)
    return Paired(
        n=n,
        table=table,
        baseline_rate=(both + only_baseline) / n,
        candidate_rate=(both + only_candidate) / n,
        difference=difference,
        low=float(max(-1.0, difference - z * spread)),
        high=float(min(1.0, difference + z * spread)),
        p_value=p_value,
    )


def size_independent(p1: float, p2: float, *, alpha: float = 0.05, power: float = 0.8) -> int:
    """Answers per version to detect p1 against p2 with two independent samples."""
    effect = abs(proportion_effectsize(p1, p2))
    if effect == 0:
        raise ValueError("the two rates are the same: no difference to detect")
    return math.ceil(NormalIndPower().solve_power(effect_size=effect, alpha=alpha, power=power, ratio=1.0))


def size_paired(p1: float, p2: float, discordant: float, *, alpha: float = 0.05, power: float = 0.8) -> int:
    """Questions to detect p1 against p2 when both versions answer the same
    questions, given the expected share of questions whose outcome differs
    between them (McNemar's test; Connor, Biometrics 43, 1987, 207-211)."""
    delta = abs(p1 - p2)
    if delta == 0:
        raise ValueError("the two rates are the same: no difference to detect")
    if not delta <= discordant <= 1:
        raise ValueError("the discordant share is at least the difference and at most 1")
    return math.ceil(_paired_size(delta, discordant, alpha=alpha, power=power))


def _paired_size(delta: float, discordant: float, *, alpha: float, power: float) -> float:
    z_alpha, z_beta = norm.ppf(1 - alpha / 2), norm.ppf(power)
    return (z_alpha * math.sqrt(discordant) + z_beta * math.sqrt(discordant - delta**2)) ** 2 / delta**2


def detectable_difference(
    pairs: int, discordant: float, *, alpha: float = 0.05, power: float = 0.8
) -> float | None:
    """The smallest difference (a share, 0-1) that ``pairs`` paired questions
    can detect, given the observed discordant share; None when none can."""
    if pairs < 1 or discordant <= 0:
        return None
    low, high = 1e-4, discordant
    if _paired_size(high, discordant, alpha=alpha, power=power) > pairs:
        return None
    for _ in range(60):  # bisection: the needed size falls as the difference grows
        middle = (low + high) / 2
        if _paired_size(middle, discordant, alpha=alpha, power=power) > pairs:
            low = middle
        else:
            high = middle
    return high


def weighted_rate(successes: list[bool], weights: list[float]) -> float | None:
    """The share of successes with each item weighted (stratum weights)."""
    total = sum(weights)
    if not total:
        return None
    return sum(w for s, w in zip(successes, weights, strict=True) if s) / total
