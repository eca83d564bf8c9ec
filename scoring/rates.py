"""Rates with their intervals. Counts are the data; a rate is shown with its
denominator and a confidence interval, computed by statsmodels."""

from __future__ import annotations

from dataclasses import dataclass

from statsmodels.stats.proportion import proportion_confint

# Our names, statsmodels' names and how people write them.
INTERVAL_METHODS = {"wilson": "wilson", "jeffreys": "jeffreys", "agresti_coull": "agresti_coull"}
INTERVAL_LABELS = {"wilson": "Wilson", "jeffreys": "Jeffreys", "agresti_coull": "Agresti–Coull"}


@dataclass(frozen=True, slots=True)
class Rate:
    k: int
    n: int
    low: float
    high: float

    @property
    def value(self) -> float:
        return self.k / self.n


def rate(k: int, n: int, *, method: str = "wilson", alpha: float = 0.05) -> Rate:
    """k of n with its 1 - alpha interval; refuses n = 0 and k outside 0..n."""
    if n <= 0 or not 0 <= k <= n:
        raise ValueError(f"a rate needs 0 <= k <= n and n > 0, not k={k}, n={n}")
    if method not in INTERVAL_METHODS:
        raise ValueError(f"unknown interval method {method!r}; use one of {', '.join(INTERVAL_METHODS)}")
    low, high = proportion_confint(k, n, alpha=alpha, method=INTERVAL_METHODS[method])
    return Rate(k=k, n=n, low=max(0.0, float(low)), high=min(1.0, float(high)))
