"""The mean of model-grader scores in [0, 1] with its interval (issue 24,
point 6: a judge's mean score was shown bare, as 0.704).

A score in [0, 1] varies at most as much as a pass or fail with the same
mean: its variance is at most m(1 - m) (the Bhatia-Davis inequality,
Bhatia and Davis 2000, Amer. Math. Monthly 107:353-357). So the mean is
treated as a rate of fractional successes: the cluster-robust variance of
scoring.stats.rates (answers clustered by question, Miller 2024, "Adding
error bars to evals"), the effective n it gives (at most n), and Wilson's
interval on that n. On unclustered scores that is Wilson's interval on n,
at least as wide as a pass rate's with the same mean would need, and never
a point: scores that are all 1 still get [0.84, 1] on 20 answers.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from scoring.stats.rates import ClusterSums, check_alpha, effective_n, pin_edges, wilson_interval

MEAN_METHOD = "Wilson on the effective n (scores in [0, 1])"


@dataclass(frozen=True, slots=True)
class Mean:
    """The mean of n scores with its interval; ``effective_n`` is set when
    the scores fall in clusters (a question's attempts) and are worth fewer
    independent draws, ``clusters`` how many."""

    value: float
    n: int
    low: float
    high: float
    effective_n: float | None = None
    clusters: int | None = None


def score_mean(
    scores: Sequence[float], clusters: Sequence[Hashable] | None = None, *, alpha: float = 0.05
) -> Mean | None:
    """The mean of ``scores`` (each in [0, 1]) with its 1 - alpha interval,
    cluster-robust when ``clusters`` names each score's cluster (the
    answer's question), in the same order. None when there is no score.

    Refuses (ValueError) a score outside [0, 1] or not a number, clusters
    not one per score, and alpha outside (0, 1)."""
    check_alpha(alpha)
    scores = list(scores)
    for position, score in enumerate(scores):
        if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 1:
            raise ValueError(f"a score lies in [0, 1]; score {position} is {score!r}")
    if clusters is not None and len(clusters) != len(scores):
        raise ValueError(f"{len(clusters)} clusters for {len(scores)} scores: give one cluster per score")
    if not scores:
        return None
    n = len(scores)
    total = math.fsum(scores)
    mean = total / n
    keys = list(clusters) if clusters is not None else list(range(n))
    sums: dict[Hashable, float] = {}
    counts: dict[Hashable, int] = {}
    for key, score in zip(keys, scores, strict=True):
        sums[key] = sums.get(key, 0.0) + score
        counts[key] = counts.get(key, 0) + 1
    by_cluster = ClusterSums.of(k=list(sums.values()), n=[counts[key] for key in sums])
    effective = effective_n(total, n, by_cluster)
    draws = min(effective, float(n))
    low, high = wilson_interval(mean * draws, draws, alpha=alpha)
    low, high = pin_edges(max(low, 0.0), min(high, 1.0), none=total == 0, all_=total == n)
    if effective < n:
        return Mean(mean, n, low, high, effective_n=round(effective, 2), clusters=by_cluster.clusters)
    return Mean(mean, n, low, high)
