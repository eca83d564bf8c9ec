"""Rates with their intervals: moved to scoring.stats.rates.

Kept so that ``from scoring.rates import ...`` goes on working (the Django app
and the benches import it); new code imports scoring.stats.rates."""

from scoring.stats.rates import (
    INTERVAL_LABELS,
    INTERVAL_METHODS,
    SEVERITY_METHOD,
    STRATIFIED_METHOD,
    Rate,
    WeightedRate,
    rate,
    severity_weighted_rate,
    stratified_rate,
    wilson_interval,
)

__all__ = [
    "INTERVAL_LABELS",
    "INTERVAL_METHODS",
    "SEVERITY_METHOD",
    "STRATIFIED_METHOD",
    "Rate",
    "WeightedRate",
    "rate",
    "severity_weighted_rate",
    "stratified_rate",
    "wilson_interval",
]
