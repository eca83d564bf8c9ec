"""The release gate as a non-inferiority decision: moved to scoring.stats.gate.

Kept so that ``from scoring.gate import ...`` goes on working (the Django app
and the benches import it); new code imports scoring.stats.gate."""

from scoring.stats.gate import (
    ALPHA,
    BOUND,
    CANNOT_JUDGE,
    DEFAULT_MARGIN_POINTS,
    EXIT_CODES,
    FAIL,
    INCONCLUSIVE,
    MULTIPLICITY,
    PASS,
    MeasureVerdict,
    judge_measure,
    judge_p90,
    judge_timeouts,
    measure_report,
    overall,
    points,
)

__all__ = [
    "ALPHA",
    "BOUND",
    "CANNOT_JUDGE",
    "DEFAULT_MARGIN_POINTS",
    "EXIT_CODES",
    "FAIL",
    "INCONCLUSIVE",
    "MULTIPLICITY",
    "PASS",
    "MeasureVerdict",
    "judge_measure",
    "judge_p90",
    "judge_timeouts",
    "measure_report",
    "overall",
    "points",
]
