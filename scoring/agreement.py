"""Agreement between readers on nominal ratings: percent agreement, Cohen's
kappa (two readers), Fleiss' kappa (more) and Krippendorff's alpha (nominal,
missing ratings allowed), each with the number of items it rests on.

Statistics come from statsmodels and krippendorff; this module only shapes
the data for them and says when a figure cannot be computed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import krippendorff
import numpy as np
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa

# Below this alpha the readers do not yet measure the same thing (a common
# floor for tentative conclusions, after Krippendorff).
ALPHA_FLOOR = 0.667


@dataclass(frozen=True)
class Figure:
    value: float | None
    items: int
    note: str = ""


@dataclass(frozen=True)
class Agreement:
    percent: Figure
    cohen: Figure
    fleiss: Figure
    alpha: Figure

    @property
    def figures(self) -> tuple[Figure, Figure, Figure, Figure]:
        return (self.percent, self.cohen, self.fleiss, self.alpha)

    @property
    def below_floor(self) -> bool:
        return self.alpha.value is not None and self.alpha.value < ALPHA_FLOOR


def agreement(ratings: Sequence[Sequence[str | None]]) -> Agreement:
    """Agreement over items, each a list of the readers' ratings (None where
    a reader gave none). Items with fewer than two ratings are left out."""
    rated = [[r for r in item if r is not None] for item in ratings]
    paired = [item for item in rated if len(item) >= 2]
    categories = sorted({r for item in rated for r in item})
    code = {category: index for index, category in enumerate(categories)}

    percent = Figure(
        sum(len(set(item)) == 1 for item in paired) / len(paired) if paired else None,
        len(paired),
        "" if paired else "no item has two ratings",
    )

    two = [item for item in paired if len(item) == 2]
    if two and len(two) == len(paired):
        table = np.zeros((len(categories), len(categories)))
        for first, second in two:
            table[code[first], code[second]] += 1
        cohen = _figure(lambda: cohens_kappa(table, return_results=False), len(two))
    else:
        cohen = Figure(None, len(two), "needs exactly two ratings on every item")

    sizes = {len(item) for item in paired}
    if paired and len(sizes) == 1:
        counts, _ = aggregate_raters(np.array([[code[r] for r in item] for item in paired]))
        fleiss = _figure(lambda: fleiss_kappa(counts, method="fleiss"), len(paired))
    else:
        fleiss = Figure(None, len(paired), "needs the same number of ratings on every item")

    if paired and len(categories) > 1:
        readers = max(len(item) for item in ratings)
        data = np.full((readers, len(ratings)), np.nan)
        for column, item in enumerate(ratings):
            for row, rating in enumerate(item):
                if rating is not None:
                    data[row, column] = code[rating]
        alpha = _figure(
            lambda: krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"),
            len(paired),
        )
    else:
        alpha = Figure(
            None, len(paired), "every rating is the same category" if paired else "no item has two ratings"
        )
    return Agreement(percent=percent, cohen=cohen, fleiss=fleiss, alpha=alpha)


def _figure(compute, items: int) -> Figure:
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            value = float(compute())
    except (ZeroDivisionError, ValueError, FloatingPointError):
        return Figure(None, items, "not defined for these ratings")
    if math.isnan(value):
        return Figure(None, items, "not defined when every rating is the same")
    return Figure(value, items)
