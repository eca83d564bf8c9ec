"""Agreement between readers on nominal ratings: percent agreement, Cohen's
kappa (one fixed pair of readers), Fleiss' kappa (the same number of ratings
on every item, readers may rotate) and Krippendorff's alpha (nominal, any
pattern of missing ratings), each with the number of items it rests on and
the items whose readers differ.

Statistics come from statsmodels and krippendorff; this module only shapes
the data for them and says when a figure cannot be computed or should not be
read.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass

import krippendorff
import numpy as np
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa

# Below this alpha the readers do not yet measure the same thing (a common
# floor for tentative conclusions, after Krippendorff).
ALPHA_FLOOR = 0.667

# On fewer items than this, one item more or less moves any of the figures
# (percent agreement included) by more than the differences a lead would act
# on, so each figure is still shown but flagged.
MIN_ITEMS = 10
TOO_FEW_ITEMS = "too few items to read anything into"

# Each item's ratings keyed by who gave them; None (or no entry) where a
# reader gave none.
Ratings = Mapping[Hashable, Mapping[Hashable, str | None]]


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
    # Items (keys of the ratings) whose readers gave different ratings, in
    # the order they were given.
    differing: tuple[Hashable, ...] = ()

    @property
    def figures(self) -> tuple[Figure, Figure, Figure, Figure]:
        return (self.percent, self.cohen, self.fleiss, self.alpha)

    @property
    def below_floor(self) -> bool:
        return self.alpha.value is not None and self.alpha.value < ALPHA_FLOOR


def agreement(ratings: Ratings) -> Agreement:
    """Agreement over ``ratings``, a mapping of item to {reader: rating}.

    Items with fewer than two ratings are left out of every figure: they
    cannot show agreement. Of the rest, Cohen's kappa is given only when the
    same two readers rated every one of them; Fleiss' kappa only when every
    one has the same number of ratings; Krippendorff's alpha for any pattern.
    A figure that cannot be computed has value None and a note saying why; a
    figure on fewer than MIN_ITEMS items carries the note TOO_FEW_ITEMS.
    """
    counted: dict[Hashable, dict[Hashable, str]] = {}
    for item, by_reader in ratings.items():
        given = {reader: rating for reader, rating in by_reader.items() if rating is not None}
        if len(given) >= 2:
            counted[item] = given
    if not counted:
        missing = Figure(None, 0, "no item has two ratings")
        return Agreement(percent=missing, cohen=missing, fleiss=missing, alpha=missing)

    items = len(counted)
    categories = sorted({rating for given in counted.values() for rating in given.values()})
    code = {category: index for index, category in enumerate(categories)}
    readers = list(dict.fromkeys(reader for given in counted.values() for reader in given))
    sizes = {len(given) for given in counted.values()}
    differing = tuple(item for item, given in counted.items() if len(set(given.values())) > 1)

    percent = _shown((items - len(differing)) / items, items)

    if len(sizes) == 1:
        coded = np.array([[code[rating] for rating in given.values()] for given in counted.values()])
        counts, _ = aggregate_raters(coded)
        fleiss = _figure(lambda: fleiss_kappa(counts, method="fleiss"), items)
    else:
        fleiss = Figure(None, items, "needs the same number of ratings on every item")

    if len(categories) > 1:
        row = {reader: index for index, reader in enumerate(readers)}
        data = np.full((len(readers), items), np.nan)
        for column, given in enumerate(counted.values()):
            for reader, rating in given.items():
                data[row[reader], column] = code[rating]
        alpha = _figure(
            lambda: krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"), items
        )
    else:
        alpha = Figure(None, items, "every rating is the same category")

    if len(readers) == 2:
        # Two readers on items with at least two ratings each means both
        # read every item counted: the pair is fixed.
        first, second = readers
        table = np.zeros((len(categories), len(categories)))
        for given in counted.values():
            table[code[given[first]], code[given[second]]] += 1
        cohen = _figure(lambda: cohens_kappa(table, return_results=False), items)
    else:
        cohen = Figure(None, items, _no_fixed_pair(len(readers), sizes == {2}, fleiss, alpha))
    return Agreement(percent=percent, cohen=cohen, fleiss=fleiss, alpha=alpha, differing=differing)


def _no_fixed_pair(readers: int, in_pairs: bool, fleiss: Figure, alpha: Figure) -> str:
    how = "rotate over the items" if in_pairs else "rated the items"
    note = f"{readers} readers {how}: Cohen's kappa needs one fixed pair of readers"
    instead = [
        name
        for name, figure in (("Fleiss' kappa", fleiss), ("Krippendorff's alpha", alpha))
        if figure.value is not None
    ]
    return f"{note}; read {' and '.join(instead)}" if instead else note


def _figure(compute, items: int) -> Figure:
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            value = float(compute())
    except (ZeroDivisionError, ValueError, FloatingPointError):
        return Figure(None, items, "not defined for these ratings")
    if math.isnan(value):
        return Figure(None, items, "not defined when every rating is the same")
    return _shown(value, items)


def _shown(value: float, items: int) -> Figure:
    return Figure(value, items, TOO_FEW_ITEMS if items < MIN_ITEMS else "")
