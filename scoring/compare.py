"""The paired comparison of two versions and sample-size planning: moved to scoring.stats.paired.

Kept so that ``from scoring.compare import ...`` goes on working (the Django app
and the benches import it); new code imports scoring.stats.paired."""

from scoring.stats.paired import (
    NEWCOMBE_METHOD,
    SMALLEST_PLANNED_DIFFERENCE,
    Paired,
    Table,
    detectable_difference,
    newcombe_paired,
    paired,
    paired_from_table,
    pairs_to_settle,
    size_independent,
    size_paired,
)

__all__ = [
    "NEWCOMBE_METHOD",
    "SMALLEST_PLANNED_DIFFERENCE",
    "Paired",
    "Table",
    "detectable_difference",
    "newcombe_paired",
    "paired",
    "paired_from_table",
    "pairs_to_settle",
    "size_independent",
    "size_paired",
]
