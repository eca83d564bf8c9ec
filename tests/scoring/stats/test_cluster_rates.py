"""Rates of clustered units (a question's attempts, an answer's numbers):
the cluster-robust variance against statsmodels' own, and the figures that
must not move when nothing is clustered."""

import numpy as np
import pytest
import statsmodels.api as sm

from scoring.stats.rates import (
    ClusterSums,
    cluster_variance,
    counted_rate,
    effective_n,
    rate,
    wilson_interval,
)

# Eight questions asked unequally often (1 to 5 attempts), some always right,
# some always wrong, some mixed: what a real repeated run looks like.
SUCCESSES = [3, 0, 1, 5, 2, 0, 1, 4]
ATTEMPTS = [3, 2, 1, 5, 4, 1, 3, 4]


def units(successes, attempts):
    y, groups = [], []
    for cluster, (k, n) in enumerate(zip(successes, attempts, strict=True)):
        y += [1] * k + [0] * (n - k)
        groups += [cluster] * n
    return np.array(y, dtype=float), np.array(groups)


def test_the_cluster_variance_is_statsmodels_cluster_robust_variance_of_the_mean():
    y, groups = units(SUCCESSES, ATTEMPTS)
    fit = sm.OLS(y, np.ones_like(y)).fit(cov_type="cluster", cov_kwds={"groups": groups})
    # statsmodels' default also scales by (N - 1)/(N - K), 1 for a constant alone.
    sums = ClusterSums.of(SUCCESSES, ATTEMPTS)
    assert cluster_variance(sum(SUCCESSES), sum(ATTEMPTS), sums) == pytest.approx(
        fit.cov_params()[0, 0], rel=1e-12
    )


def test_a_clustered_rate_is_wilson_on_what_its_units_are_worth():
    k, n = sum(SUCCESSES), sum(ATTEMPTS)
    sums = ClusterSums.of(SUCCESSES, ATTEMPTS)
    worth = effective_n(k, n, sums)
    p = k / n
    assert worth == pytest.approx(p * (1 - p) / cluster_variance(k, n, sums))
    assert worth < n
    result = rate(k, n, clusters=sums)
    assert (result.k, result.n, result.clusters, result.effective_n) == (k, n, 8, round(worth, 2))
    assert (result.low, result.high) == pytest.approx(wilson_interval(p * worth, worth))
    plain = rate(k, n)
    assert result.low < plain.low and result.high > plain.high


def test_units_each_their_own_cluster_keep_the_plain_figure():
    # Spec 002's worked value, 17 of 200 -> 5.4 % to 13.2 %, with every answer its own cluster.
    sums = ClusterSums.of([1] * 17 + [0] * 183, [1] * 200)
    result = rate(17, 200, clusters=sums)
    assert (result.effective_n, result.clusters, result.clustered) == (None, None, False)
    assert (round(result.low, 3), round(result.high, 3)) == (0.054, 0.132)
    assert result == rate(17, 200)


def test_clusters_alike_within_are_worth_one_unit_each_in_equal_sizes():
    # Four questions of three attempts, two always right and two always wrong.
    sums = ClusterSums.of([3, 3, 0, 0], [3, 3, 3, 3])
    assert effective_n(6, 12, sums) == pytest.approx(4.0)


def test_a_share_of_0_or_1_or_a_single_cluster_falls_back_to_the_alike_floor():
    assert effective_n(0, 6, ClusterSums.of([0, 0], [3, 3])) == pytest.approx(2.0)
    assert effective_n(6, 6, ClusterSums.of([3, 3], [3, 3])) == pytest.approx(2.0)
    assert effective_n(2, 3, ClusterSums.of([2], [3])) == pytest.approx(1.0)
    assert rate(0, 6, clusters=ClusterSums.of([0, 0], [3, 3])).low == 0.0


def test_the_success_rate_of_a_failure_count_has_the_same_effective_n():
    sums = ClusterSums.of(SUCCESSES, ATTEMPTS)
    failures = ClusterSums.of([n - k for k, n in zip(SUCCESSES, ATTEMPTS, strict=True)], ATTEMPTS)
    assert sums.complement() == failures
    k, n = sum(SUCCESSES), sum(ATTEMPTS)
    counts = {"k": n - k, "n": n, "clusters": failures.as_dict()}
    assert counted_rate(counts, complement=True) == rate(k, n, clusters=sums)


def test_sums_of_disjoint_clusters_add_up():
    left = ClusterSums.of(SUCCESSES[:3], ATTEMPTS[:3])
    right = ClusterSums.of(SUCCESSES[3:], ATTEMPTS[3:])
    assert left + right == ClusterSums.of(SUCCESSES, ATTEMPTS)


def test_counts_without_cluster_sums_give_the_plain_rate():
    assert counted_rate({"k": 17, "n": 200}) == rate(17, 200)


@pytest.mark.parametrize(
    "sums",
    [
        ClusterSums(clusters=3, k2=1, kn=1, n2=5),  # Σn² below n: more units than 6
        ClusterSums(clusters=9, k2=2, kn=4, n2=12),  # more clusters than units
        ClusterSums(clusters=2, k2=9, kn=4, n2=12),  # Σk² above Σkn
    ],
)
def test_it_refuses_cluster_sums_these_counts_cannot_have(sums):
    with pytest.raises(ValueError, match="cannot come from"):
        rate(2, 6, clusters=sums)
