"""Severity weights (spec 002): weight an error by where the answer goes,
and keep the unweighted rate beside it so the weighting stays visible."""

from __future__ import annotations

from reviewapp.core.errors import ApplicationError
from reviewapp.models import SeverityWeights

MAX_WEIGHT = 1000.0


def parse_weights(text: str) -> dict[str, float]:
    """``value = weight`` lines as a mapping; refuses (ApplicationError, naming
    the line) a line without both, a weight that is not a number above 0 and
    at most MAX_WEIGHT, and a value given twice."""
    weights: dict[str, float] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        value, equals, weight = line.rpartition("=")
        value = value.strip()
        if not equals or not value:
            raise ApplicationError(f"weights, line {number}: write value = weight, such as finance = 3")
        try:
            parsed = float(weight)
        except ValueError:
            parsed = None
        if parsed is None or not 0 < parsed <= MAX_WEIGHT:
            raise ApplicationError(
                f"weights, line {number}: the weight of {value!r} is a number above 0 and at most "
                f"{MAX_WEIGHT:g}, not {weight.strip()!r}"
            )
        if value in weights:
            raise ApplicationError(f"weights, line {number}: {value!r} is weighted twice")
        weights[value] = parsed
    return weights


def severity_weights_save(
    *, field: str, weights_text: str, default_weight: float = 1.0, created_by=None
) -> SeverityWeights:
    """Put new severity weights in force (the earlier ones are kept as the
    record). Refuses an unknown field, bad weight lines and a default weight
    that is not above 0."""
    if field not in SeverityWeights.Field.values:
        raise ApplicationError(f"field: weigh by {' or '.join(SeverityWeights.Field.values)}")
    if not 0 < default_weight <= MAX_WEIGHT:
        raise ApplicationError(f"default_weight: a number above 0 and at most {MAX_WEIGHT:g}")
    return SeverityWeights.objects.create(
        field=field,
        weights=parse_weights(weights_text),
        default_weight=default_weight,
        created_by=created_by,
    )


