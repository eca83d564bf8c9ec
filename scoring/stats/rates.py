"""Rates with their intervals. Counts are the data; a rate is shown with its
denominator and a confidence interval.

Wilson's interval, which every run's every slice needs, is computed here
(``wilson_interval``, checked against statsmodels' in the tests, and the one
every other Wilson interval of the library calls: Newcombe's paired interval,
the cluster-robust rate of repeats, a judge's win rate): importing
statsmodels, and scipy with it, costs more than half a second, longer than
scoring a small run. The other methods come from statsmodels, imported when
one is asked for."""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from statistics import NormalDist

# Our names, statsmodels' names and how people write them.
INTERVAL_METHODS = {"wilson": "wilson", "jeffreys": "jeffreys", "agresti_coull": "agresti_coull"}
INTERVAL_LABELS = {"wilson": "Wilson", "jeffreys": "Jeffreys", "agresti_coull": "Agresti–Coull"}

STRATIFIED_METHOD = (
    "stratified, Clopper–Pearson on the effective n (Korn–Graubard), "
    "each stratum's variance at least its Agresti–Coull share's"
)


CLUSTER_METHOD = "cluster-robust by question, Wilson on the effective n"


@dataclass(frozen=True, slots=True)
class Rate:
    """k of n with its interval. ``effective_n`` is set when the n units were
    sampled in clusters (a question's attempts, an answer's numbers) and are
    worth fewer independent draws; the interval was made on that many."""

    k: int
    n: int
    low: float
    high: float
    effective_n: float | None = None
    clusters: int | None = None

    @property
    def value(self) -> float:
        return self.k / self.n

    @property
    def clustered(self) -> bool:
        return self.effective_n is not None


def check_alpha(alpha: float) -> None:
    """Refuse (ValueError) an alpha that is not strictly between 0 and 1 (NaN included)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1; got {alpha:g}")


def rate(
    k: int, n: int, *, method: str = "wilson", alpha: float = 0.05, clusters: ClusterSums | None = None
) -> Rate:
    """k of n with its 1 - alpha interval, which starts at exactly 0 when
    k = 0 and ends at exactly 1 when k = n.

    With ``clusters`` (how the n units fall into clusters: attempts by
    question, numbers and citations by answer) the interval is the method's
    on the effective number of units (``effective_n``), and the Rate carries
    it when it is below n; units that are each their own cluster give the
    plain interval. Refuses n = 0, k outside 0..n, alpha outside (0, 1), an
    unknown method and cluster sums that cannot come from these counts."""
    check_alpha(alpha)
    if n <= 0 or not 0 <= k <= n:
        raise ValueError(f"a rate needs 0 <= k <= n and n > 0, not k={k}, n={n}")
    if method not in INTERVAL_METHODS:
        raise ValueError(f"unknown interval method {method!r}; use one of {', '.join(INTERVAL_METHODS)}")
    effective = effective_n(k, n, clusters) if clusters is not None else float(n)
    draws = effective if effective < n else n
    successes = k * draws / n
    if method == "wilson":
        low, high = wilson_interval(successes, draws, alpha=alpha)
    else:
        from statsmodels.stats.proportion import proportion_confint

        low, high = proportion_confint(successes, draws, alpha=alpha, method=INTERVAL_METHODS[method])
    low, high = pin_edges(float(low), float(high), none=k == 0, all_=k == n)
    if effective < n:
        return Rate(k=k, n=n, low=low, high=high, effective_n=round(effective, 2), clusters=clusters.clusters)
    return Rate(k=k, n=n, low=low, high=high)


def counted_rate(
    counts: Mapping, *, method: str = "wilson", alpha: float = 0.05, complement: bool = False
) -> Rate:
    """The rate of stored counts {"k", "n", "clusters"?} (a slice's measure)
    with its interval, clustered when the counts say how their units fall
    into clusters: the one way every page, export, API answer and the CLI
    turn counts into a figure. With ``complement``, the rate of n - k (a
    failure measure's success rate); its effective n is the same."""
    sums = ClusterSums(**counts["clusters"]) if counts.get("clusters") else None
    k, n = counts["k"], counts["n"]
    if complement:
        k, sums = n - k, sums.complement() if sums else None
    return rate(k, n, method=method, alpha=alpha, clusters=sums)


@dataclass(frozen=True, slots=True)
class ClusterSums:
    """What the cluster-robust variance of a rate needs to know of how its
    units fall into clusters: how many clusters hold a unit, and the sums
    over clusters of k², k·n and n² (k successes of n units in each). Sums of
    disjoint sets of clusters add up (``+``); two sets sharing a cluster do
    not, since its k and n must be added before squaring."""

    clusters: int
    k2: int
    kn: int
    n2: int

    @classmethod
    def of(cls, k: Sequence[int], n: Sequence[int]) -> ClusterSums:
        """The sums for clusters with k[i] successes of n[i] units."""
        k, n = list(k), list(n)
        # map, not a generator: a scoring chunk sums a million of these.
        return cls(
            clusters=len(n) - n.count(0),
            k2=sum(map(operator.mul, k, k)),
            kn=sum(map(operator.mul, k, n)),
            n2=sum(map(operator.mul, n, n)),
        )

    def __add__(self, other: ClusterSums) -> ClusterSums:
        return ClusterSums(
            self.clusters + other.clusters, self.k2 + other.k2, self.kn + other.kn, self.n2 + other.n2
        )

    def complement(self) -> ClusterSums:
        """The sums for the failures n - k of the same clusters."""
        return ClusterSums(self.clusters, self.n2 - 2 * self.kn + self.k2, self.n2 - self.kn, self.n2)

    def as_dict(self) -> dict[str, int]:
        return {"clusters": self.clusters, "k2": self.k2, "kn": self.kn, "n2": self.n2}


def cluster_variance(k: int, n: int, clusters: ClusterSums) -> float:
    """The cluster-robust (sandwich) variance of the rate k/n: the variance
    statsmodels gives the constant of ``OLS(y, 1).fit(cov_type="cluster")``
    over the n units, with its small-sample factor G/(G - 1), written from
    the cluster sums so that the units need not be spelled out (the tests
    check it against statsmodels): G/(G - 1) · Σ(k_g - p·n_g)² / n²."""
    p = k / n
    squares = clusters.k2 - 2 * p * clusters.kn + p * p * clusters.n2
    groups = clusters.clusters
    return groups / (groups - 1) * max(squares, 0.0) / (n * n)


def effective_n(k: int, n: int, clusters: ClusterSums) -> float:
    """How many independent units k of n clustered units are worth:
    p(1 - p) over the cluster-robust variance (Miller 2024, "Adding error
    bars to evals"), at most n. Never below n²/Σn², what clusters alike
    within (each all successes or all failures) would be worth, which is
    also the figure when the variance cannot be estimated: fewer than two
    clusters, or no success or no failure at all (a share of 0 or 1 carries
    no sign of how alike a cluster's units are)."""
    if (
        clusters.n2 < n
        or clusters.kn > clusters.n2
        or clusters.k2 > clusters.kn
        or not 0 < clusters.clusters <= n
    ):
        raise ValueError(f"cluster sums {clusters.as_dict()} cannot come from {k} successes of {n} units")
    alike = n * n / clusters.n2
    if clusters.clusters < 2 or k in (0, n):
        return min(alike, float(n))
    variance = cluster_variance(k, n, clusters)
    p = k / n
    estimate = p * (1 - p) / variance if variance > 0 else float(n)
    return min(max(estimate, alike), float(n))


@cache
def _critical_value(alpha: float) -> float:
    return NormalDist().inv_cdf(1 - alpha / 2)


def wilson_interval(successes: float, n: float, *, alpha: float = 0.05) -> tuple[float, float]:
    """Wilson's score interval for ``successes`` of ``n`` (both may be
    fractional, as an effective sample size makes them), computed as
    statsmodels' ``proportion_confint(method="wilson")`` does, term for term."""
    z = _critical_value(alpha)
    z2 = z * z
    share = successes / n
    denominator = 1 + z2 / n
    centre = (share + z2 / (2 * n)) / denominator
    half = z * math.sqrt(share * (1 - share) / n + z2 / (4 * n * n)) / denominator
    return centre - half, centre + half


def pin_edges(low: float, high: float, *, none: bool, all_: bool) -> tuple[float, float]:
    """An interval's ends kept within [0, 1], exactly 0 (1) when nothing (everything) succeeded."""
    # When nothing (everything) succeeded, no rate below 0 (above 1) is
    # possible, so that end of the interval is the boundary itself. statsmodels'
    # Jeffreys interval is equal-tailed and stops short of it (Brown, Cai and
    # DasGupta 2001 pin it there, as here), and Wilson misses it by rounding:
    # 1.4e-20 at 0 of 30,000, 0.9999999999999998 at n of n.
    return (0.0 if none else max(0.0, low)), (1.0 if all_ else min(1.0, high))


@dataclass(frozen=True, slots=True)
class WeightedRate:
    """A stratified estimate of a rate with its interval: ``n`` items were
    sampled, worth ``effective_n`` simple random draws; ``variance`` is the
    estimate's; ``method`` names how the interval was made."""

    value: float
    low: float
    high: float
    n: int
    effective_n: float
    variance: float
    method: str = STRATIFIED_METHOD
    # The share of the weight in strata with no item of the figure's domain,
    # which its interval allows to hold anything (stratified_domain_rate).
    unrepresented: float = 0.0


def stratified_rate(
    strata: Sequence[tuple[int, int, float]],
    *,
    alpha: float = 0.05,
    weights: Sequence[float] | None = None,
) -> WeightedRate:
    """The population rate estimated from a stratified sample, with a 1 - alpha
    interval that stays honest when a stratum has one sampled item or a
    sampled share of 0 or 1.

    Each stratum is (k_h successes, n_h items sampled, N_h items in the
    stratum). The rate is sum W_h·p_h with W_h = N_h/N and p_h = k_h/n_h.
    Its variance is sum W_h²·(1 - f_h)·v_h with f_h = n_h/N_h, where v_h,
    the variance of p_h, is the usual p_h(1 - p_h)/(n_h - 1) but never
    below p̃_h(1 - p̃_h)/n_h, the binomial variance at Agresti and Coull's
    adjusted share p̃_h = (k_h + z²/2)/(n_h + z²) (The American Statistician
    52, 1998, 119-126; z the normal quantile of 1 - alpha/2). Without that
    floor a stratum of one item, or one whose items all succeeded (or all
    failed), adds no variance at all: one item carrying 98 % of the weight
    gave 98.4 % [93.7, 99.6], and the interval covered 70 % of the time with
    one item per stratum (issue 24).

    The interval is Korn and Graubard's (Survey Methodology 24, 1998,
    193-201): Clopper and Pearson's exact interval on the effective sample
    size n* = p̃(1 - p̃)/variance (p̃ = sum W_h·p̃_h, so that n* stays defined
    when the rate is 0 or 1), capped at the n items sampled, with p·n*
    successes; statsmodels' ``proportion_confint(method="beta")``, widened
    where needed to hold the normal interval value ± z·sqrt(variance). Their
    degrees-of-freedom adjustment is left out: the floor already keeps the
    interval conservative, and with one item per stratum the design has no
    degrees of freedom left, so the adjustment would give [0, 1]
    (bench/coverage_strata.py gives its coverage over a grid of designs).
    One stratum from a population far larger than its sample gives Clopper
    and Pearson's interval on its n, or the normal one where that reaches
    further; a census (every f_h = 1) has no sampling
    variance, and gives theirs on the n items read. The interval starts at
    exactly 0 when no stratum has a success and ends at exactly 1 when every
    sampled item succeeded.

    With ``weights``, stratum h counts in the rate by weights[h] instead of
    its size N_h (its size times a severity weight, say: W_h is then
    weights[h]/sum weights); N_h still gives its finite-population correction.

    Refuses (ValueError) no strata, alpha outside (0, 1), and strata, named
    by position counting from 1, with no items sampled, with k_h outside
    0..n_h or with fewer items than were sampled from them; and weights that
    are not one finite number above 0 for each stratum.
    """
    if not strata:
        raise ValueError("a stratified rate needs at least one stratum")
    check_alpha(alpha)
    empty = [str(position) for position, (_, n_h, _) in enumerate(strata, start=1) if n_h == 0]
    if empty:
        raise ValueError(
            f"stratum {', '.join(empty)} (counting from 1) has no sampled items; "
            "drop it or sample from it before estimating the rate"
        )
    for position, (k_h, n_h, population_h) in enumerate(strata, start=1):
        if not 0 <= k_h <= n_h <= population_h:
            raise ValueError(
                f"stratum {position} (counting from 1) needs 0 <= successes <= sampled <= its size; "
                f"got {k_h}, {n_h}, {population_h}"
            )
    if weights is None:
        weights = [population_h for _, _, population_h in strata]
    elif len(weights) != len(strata) or not all(math.isfinite(w) and w > 0 for w in weights):
        raise ValueError(f"{len(strata)} strata need as many weights, each a finite number above 0")
    z2 = _critical_value(alpha) ** 2
    total = sum(weights)
    value = 0.0
    adjusted = 0.0
    variance = 0.0
    for (k_h, n_h, population_h), stratum_weight in zip(strata, weights, strict=True):
        weight = stratum_weight / total
        share = k_h / n_h
        adjusted_share = (k_h + z2 / 2) / (n_h + z2)
        value += weight * share
        adjusted += weight * adjusted_share
        floor = adjusted_share * (1 - adjusted_share) / n_h
        estimate = share * (1 - share) / (n_h - 1) if n_h > 1 else 0.0
        variance += weight**2 * (1 - n_h / population_h) * max(estimate, floor)
    none = all(k_h == 0 for k_h, _, _ in strata)
    all_ = all(k_h == n_h for k_h, n_h, _ in strata)
    # Sum W_h·p_h can land a hair off 0 or 1 in binary; the counts say which.
    value = 0.0 if none else 1.0 if all_ else min(max(value, 0.0), 1.0)
    n = sum(n_h for _, n_h, _ in strata)
    effective_n = float(n) if variance <= 0 else min(float(n), adjusted * (1 - adjusted) / variance)
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(value * effective_n, effective_n, alpha=alpha, method="beta")
    # The effective-n interval borrows the binomial's variance, which shrinks
    # toward 0 and 1; a weighted sum whose variance comes from a heavy stratum
    # of few items does not shrink so (one item carrying 6 % of the weight,
    # shares near 1: coverage 0.91 on that side). So the interval is never
    # narrower than the normal one on the same variance.
    half = math.sqrt(z2 * variance)
    low, high = min(float(low), value - half), max(float(high), value + half)
    low, high = pin_edges(low, high, none=none, all_=all_)
    return WeightedRate(value=value, low=low, high=high, n=n, effective_n=effective_n, variance=variance)


SEVERITY_METHOD = "severity-weighted, Wilson on Kish's effective n"


def severity_weighted_rate(
    failures: Sequence[bool], weights: Sequence[float], *, alpha: float = 0.05
) -> WeightedRate:
    """The share of failures when each item counts by its weight (spec 002:
    weight by where the answer goes), with a 1 - alpha interval.

    The rate is sum w·x / sum w. Unequal weights make the items worth fewer
    simple draws: Kish's effective size (sum w)² / sum w², and the interval is
    Wilson's on that many draws. Equal weights give the unweighted rate and
    its Wilson interval. Refuses (ValueError) no items, lists of different
    lengths, a failure that is not True or False, a weight that is not a
    finite number above 0, and alpha outside (0, 1).
    """
    check_alpha(alpha)
    if not failures:
        raise ValueError("a severity-weighted rate needs at least one item")
    if len(failures) != len(weights):
        raise ValueError(f"{len(failures)} items but {len(weights)} weights")
    for position, failed in enumerate(failures, start=1):
        # A string such as "False" is truthy: it would count as a failure.
        if not isinstance(failed, bool):
            raise ValueError(f"item {position} (counting from 1) is {failed!r}, not True or False")
    if any(not (math.isfinite(weight) and weight > 0) for weight in weights):
        raise ValueError("every weight must be above 0 and finite")
    total = sum(weights)
    value = sum(weight for failed, weight in zip(failures, weights, strict=True) if failed) / total
    effective_n = total**2 / sum(weight**2 for weight in weights)
    none, all_ = not any(failures), all(failures)
    value = 0.0 if none else 1.0 if all_ else value
    low, high = wilson_interval(value * effective_n, effective_n, alpha=alpha)
    low, high = pin_edges(float(low), float(high), none=none, all_=all_)
    return WeightedRate(
        value=value,
        low=low,
        high=high,
        n=len(failures),
        effective_n=effective_n,
        variance=value * (1 - value) / effective_n,
        method=SEVERITY_METHOD,
    )


def stratified_domain_rate(
    strata: Sequence[tuple[int, int, int, float]],
    *,
    alpha: float = 0.05,
    multipliers: Sequence[float] | None = None,
) -> WeightedRate:
    """The rate within a domain of a stratified sample (its settled items,
    the items that answered a rubric question), weighted by the strata, with
    ``stratified_rate``'s interval.

    Each stratum is (k_h successes, d_h items of the domain, n_h items
    sampled, N_h items in the stratum). The domain's size in the stratum is
    estimated as N_h·d_h/n_h, which gives the usual domain (ratio) estimate
    sum (N_h/n_h)·k_h / sum (N_h/n_h)·d_h of a stratified sample; the
    interval treats those sizes as known (bench/coverage_strata.py checks
    it with domains of random size).
    ``multipliers`` (a severity weight for each) scale each stratum's weight
    in the rate, not its finite-population correction.

    A stratum with sampled items but none of the domain says nothing of the
    domain there, yet the domain may hold up to N_h - n_h of its unsampled
    items, at any rate: dropping the stratum would speak for the strata that
    answered as if they were all. So its weight M_h = (N_h - n_h) times its
    multiplier gets Horowitz and Manski's worst-case bounds (Journal of the
    American Statistical Association 95, 2000, 77-84): with A the weight of
    the represented strata and [L, U] their interval, the interval is
    [A·L/(A + M), (A·U + M)/(A + M)], M = sum M_h, and ``unrepresented`` is
    M/(A + M). The rate shown stays the represented strata's estimate.

    Refuses (ValueError) a domain with no item at all, d_h outside 0..n_h,
    and what ``stratified_rate`` refuses."""
    if multipliers is not None and len(multipliers) != len(strata):
        raise ValueError(f"{len(strata)} strata need as many multipliers, not {len(multipliers)}")
    cells = []
    weights = []
    missing = 0.0
    for position, (k_h, d_h, n_h, population_h) in enumerate(strata):
        if not 0 <= d_h <= n_h:
            raise ValueError(
                f"stratum {position + 1} (counting from 1) has {d_h} items of the domain of {n_h} sampled"
            )
        multiplier = multipliers[position] if multipliers is not None else 1.0
        if d_h:
            # Multiplied before dividing, so a stratum taken whole gives exactly its items.
            size = population_h * d_h / n_h
            cells.append((k_h, d_h, size))
            weights.append(size * multiplier)
        else:
            missing += (population_h - n_h) * multiplier
    if not cells:
        raise ValueError("the domain holds no sampled item")
    represented = stratified_rate(cells, alpha=alpha, weights=weights if multipliers is not None else None)
    if missing <= 0:
        return represented
    share = missing / (sum(weights) + missing)
    return replace(
        represented,
        low=represented.low * (1 - share),
        high=represented.high * (1 - share) + share,
        unrepresented=share,
    )
