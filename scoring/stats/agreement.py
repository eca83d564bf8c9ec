"""Agreement between readers on nominal ratings: percent agreement, Cohen's
kappa (one fixed pair of readers), Fleiss' kappa (the same number of ratings
on every item, readers may rotate) and Krippendorff's alpha (nominal by
default, any pattern of missing ratings), each with the number of items it
rests on and the items whose readers differ.

For ratings from models or people held as plain sequences (spec 003,
"Agreement statistics"), three figures on their own: ``cohen_kappa`` (two
raters, optionally weighted), ``fleiss_kappa`` (any number of raters, nominal)
and ``krippendorff_alpha`` (any number of raters, missing ratings allowed, at
the nominal, ordinal, interval or ratio level).

Statistics come from statsmodels and krippendorff; this module only shapes
the data for them and says when a figure cannot be computed or should not be
read. The one exception is kappa's interval (``kappa_with_interval``): no
well-kept library has one that keeps its coverage near perfect agreement,
so it is written here, once, from kappa's posterior.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import krippendorff
import numpy as np
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from scoring.stats.rates import check_alpha

# Below this alpha the readers do not yet measure the same thing (a common
# floor for tentative conclusions, after Krippendorff).
ALPHA_FLOOR = 0.667

# On fewer items than this, one item more or less moves any of the figures
# (percent agreement included) by more than the differences a lead would act
# on, so each figure is still shown but flagged.
MIN_ITEMS = 10
TOO_FEW_ITEMS = "too few items to read anything into"

# Each item's ratings keyed by who gave them; None (or no entry) where a
# reader gave none. Ratings are labels (usually text), or numbers at the
# interval and ratio levels.
Ratings = Mapping[Hashable, Mapping[Hashable, Hashable | None]]

# Levels of measurement Krippendorff's alpha knows, and the ones whose
# distances are differences between numbers (so ratings must be numbers).
LEVELS = ("nominal", "ordinal", "interval", "ratio")
NUMERIC_LEVELS = ("interval", "ratio")
# Cohen's kappa weights: None counts every disagreement alike; "linear" and
# "quadratic" weigh it by the distance between the ordered categories.
WEIGHTS = (None, "linear", "quadratic")


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


def agreement(ratings: Ratings, *, level: str = "nominal") -> Agreement:
    """Agreement over ``ratings``, a mapping of item to {reader: rating}.

    Items with fewer than two ratings are left out of every figure: they
    cannot show agreement. Of the rest, Cohen's kappa is given only when the
    same two readers rated every one of them; Fleiss' kappa only when every
    one has the same number of ratings; Krippendorff's alpha for any pattern,
    at ``level`` (one of LEVELS; percent agreement and both kappas stay
    nominal). A figure that cannot be computed has value None and a note
    saying why; a figure on fewer than MIN_ITEMS items carries the note
    TOO_FEW_ITEMS.

    Refuses (ValueError) an unknown level, and at the interval or ratio level
    a rating that is not a number.
    """
    _check_level(level)
    if level in NUMERIC_LEVELS:
        for item, by_reader in ratings.items():
            for reader, rating in by_reader.items():
                if rating is not None and not _is_number(rating):
                    raise ValueError(
                        f"at the {level} level every rating is a number; item {item!r} has {rating!r} "
                        f"from {reader!r}"
                    )
    counted: dict[Hashable, dict[Hashable, Hashable]] = {}
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
        fleiss = _figure(lambda: statsmodels_fleiss_kappa(counts, method="fleiss"), items)
    else:
        fleiss = Figure(None, items, "needs the same number of ratings on every item")

    if len(categories) > 1:
        row = {reader: index for index, reader in enumerate(readers)}
        data = np.full((len(readers), items), np.nan)
        for column, given in enumerate(counted.values()):
            for reader, rating in given.items():
                # Interval and ratio distances are between the numbers
                # themselves; nominal and ordinal ones need only the order.
                data[row[reader], column] = rating if level in NUMERIC_LEVELS else code[rating]
        alpha = _figure(lambda: krippendorff.alpha(reliability_data=data, level_of_measurement=level), items)
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


def cohen_kappa(
    first: Sequence[Hashable], second: Sequence[Hashable], *, weights: str | None = None
) -> float:
    """Cohen's kappa between two raters; ``first`` and ``second`` hold their
    ratings of the same items, in the same order.

    The categories are the sorted union of both raters' values, and with
    ``weights`` ("linear" or "quadratic") a disagreement weighs by how many
    places apart its two categories are in that order (the categories'
    positions, not their values: 1, 2 and 5 are equally spaced), as
    scikit-learn does. Text sorts alphabetically ("high" before "low"), so
    give weighted ratings as numbers or as labels that sort in their order.
    Returns nan when kappa is not defined: every rating is the same category,
    so chance agreement is already perfect. Items are counted from 0 in
    messages.

    Refuses (ValueError) ratings of unequal length, no items, a missing
    rating (None or NaN: use krippendorff_alpha), weighted categories that
    cannot be ordered, and weights other than None, "linear" and "quadratic".
    """
    if weights not in WEIGHTS:
        raise ValueError(f'weights are None, "linear" or "quadratic", not {weights!r}')
    if len(first) != len(second):
        raise ValueError(
            f"the two raters rated different numbers of items ({len(first)} and {len(second)}); "
            "give both raters' ratings of the same items in the same order"
        )
    if not first:
        raise ValueError("there are no ratings: Cohen's kappa needs at least one item")
    for rater, ratings in (("first", first), ("second", second)):
        for position, rating in enumerate(ratings):
            if _is_missing(rating):
                raise ValueError(
                    f"the {rater} rater's rating of item {position} is missing; Cohen's kappa needs both "
                    "ratings of every item (krippendorff_alpha allows missing ratings)"
                )
    code = _category_codes([*first, *second], ordered=weights is not None)
    table = np.zeros((len(code), len(code)))
    for rating_first, rating_second in zip(first, second, strict=True):
        table[code[rating_first], code[rating_second]] += 1
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(cohens_kappa(table, wt=weights, return_results=False))


# Cohen's kappa's interval (kappa_with_interval): equal-tailed quantiles of
# kappa's posterior under a Dirichlet prior on the table's cells worth two
# items in all (Jeffreys' prior on a 2 x 2 table), from this many draws with
# this seed, so a table always gets the same interval. At 10,000 draws its
# limits lie within 0.01 of a 400,000-draw posterior's (a few thousandths;
# the long lower tail at near-perfect agreement is the worst), small beside
# the interval's width.
KAPPA_INTERVAL_METHOD = "Dirichlet posterior, prior of two items spread over the cells (Jeffreys' on 2 x 2)"
KAPPA_PRIOR_ITEMS = 2.0
KAPPA_DRAWS = 10_000
KAPPA_SEED = 24


def kappa_with_interval(
    matrix: Sequence[Sequence[int]], *, alpha: float = 0.05, draws: int = KAPPA_DRAWS, seed: int = KAPPA_SEED
) -> tuple[float, float, float]:
    """Cohen's kappa of a square confusion matrix (rows one rater's
    categories, columns the other's, as statsmodels computes it) with its
    1 - alpha interval; NaN for all three where kappa is not defined (both
    raters give every item one same category).

    The interval is the equal-tailed 1 - alpha interval of kappa's posterior
    when the table's k x k cell probabilities have a Dirichlet prior of
    2 / k² on every cell: the posterior is Dirichlet(counts + 2 / k²), and
    kappa is computed on each of ``draws`` draws from it (seeded, so a table
    always gets the same interval). Kappa as a function of the multinomial
    cells with a Dirichlet posterior is the Bayesian treatment of two raters
    in Broemeling (2009), "Bayesian Methods for Measures of Agreement"
    (Chapman & Hall/CRC), chapter 2. On the pass label's 2 x 2 table the
    prior is Jeffreys' for the multinomial, Dirichlet(½) (Jeffreys (1946),
    Proc. R. Soc. A 186:453-461). On larger tables Jeffreys' ½ a cell would
    weigh k² / 2 items, most of them disagreement, and pull kappa down: on
    50 grades in four categories at a true kappa of 0.9 the interval covered
    32 % of the time. Holding the prior at two items' worth, spread evenly,
    keeps both sizes' coverage at 93 % or more (bench/coverage_kappa.py).
    Categories neither rater used are left out, as they are of kappa
    itself. Unlike the large-sample (Wald) interval, which has zero width at
    perfect agreement (49 agreed passes and 1 agreed fail gave [1.00,
    1.00]), every draw puts some weight on disagreement, so the interval is
    never a point, and every draw is a table, so its limits lie within
    kappa's range. In large samples it agrees with the Wald interval
    (tests/scoring/stats/test_agreement.py checks both).

    Refuses (ValueError) a matrix that is not square, a negative or
    fractional count, no items, fewer than 100 draws and alpha outside
    (0, 1)."""
    check_alpha(alpha)
    if draws < 100:
        raise ValueError(f"kappa's interval needs at least 100 draws, not {draws}")
    table = np.array(matrix, dtype=float)
    if table.ndim != 2 or table.shape[0] != table.shape[1] or table.shape[0] < 1:
        raise ValueError(f"a confusion matrix is square, not of shape {table.shape}")
    if not np.all(np.isfinite(table)) or np.any(table < 0) or np.any(table != np.round(table)):
        raise ValueError("a confusion matrix holds counts: whole numbers of items, none negative")
    if table.sum() == 0:
        raise ValueError("the confusion matrix counts no item: Cohen's kappa needs at least one")
    used = (table.sum(axis=0) + table.sum(axis=1)) > 0
    table = table[np.ix_(used, used)]
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = float(cohens_kappa(table, return_results=False))
    if math.isnan(kappa) or len(table) < 2:
        return math.nan, math.nan, math.nan
    size = len(table)
    prior = KAPPA_PRIOR_ITEMS / size**2
    cells = (
        np.random.default_rng(seed).dirichlet(table.ravel() + prior, size=draws).reshape(draws, size, size)
    )
    observed = np.trace(cells, axis1=1, axis2=2)
    chance = np.sum(cells.sum(axis=2) * cells.sum(axis=1), axis=1)
    posterior = (observed - chance) / (1 - chance)
    low, high = np.quantile(posterior, [alpha / 2, 1 - alpha / 2])
    return kappa, max(float(low), -1.0), min(float(high), 1.0)


# A judge's label validates only when people's labels vary: at least this
# many in each of two categories (pass and fail; for labels of more
# categories, the most common one and all the others together). Kappa on a
# label people rarely give rests on those few items: with 5 fails among 50,
# all agreed, kappa's lower bound is 0.64, and a judge would be validated on
# five items' worth of evidence (issue 24, point 2).
MIN_EACH_LABEL = 10


def validation_missing(
    *,
    categories: Sequence[str],
    people: Sequence[int],
    kappa_low: float | None,
    threshold: float,
    min_items: int,
    undefined: str = "",
) -> list[str]:
    """The conditions a judge's label misses for validation against people,
    one sentence each; empty when it is validated. ``people`` holds how many
    items people gave each of ``categories``; ``kappa_low`` is the lower
    limit of kappa_with_interval (None where it is not defined, and
    ``undefined`` then says why). Validated when there are at least
    ``min_items`` items, people's labels vary (MIN_EACH_LABEL) and kappa's
    lower limit is above ``threshold``."""
    missing = []
    n = sum(people)
    if n < min_items:
        missing.append(f"{n} items, {min_items} needed")
    if len(people) == 2:
        if min(people) < MIN_EACH_LABEL:
            counts = ", ".join(
                f"{count} {category}" for category, count in zip(categories, people, strict=True)
            )
            missing.append(f"people's labels: {counts}; validation needs at least {MIN_EACH_LABEL} of each")
    elif people:
        most = max(range(len(people)), key=people.__getitem__)
        others = n - people[most]
        if people[most] < MIN_EACH_LABEL or others < MIN_EACH_LABEL:
            missing.append(
                f"people's labels: {people[most]} {categories[most]}, {others} of the others; validation "
                f"needs at least {MIN_EACH_LABEL} in the most common and {MIN_EACH_LABEL} in the others"
            )
    if kappa_low is None:
        missing.append(f"kappa's lower bound is not defined ({undefined or 'no items'})")
    elif not kappa_low > threshold:
        missing.append(f"kappa's lower bound {kappa_low:.2f} is not above {threshold:.2f}")
    return missing


def fleiss_kappa(ratings: Sequence[Sequence[Hashable]]) -> float:
    """Fleiss' kappa on nominal ratings; ``ratings`` holds one row for each
    rater, each row that rater's ratings of the same items in the same order.

    Fleiss' kappa looks only at how the ratings of each item split between
    the categories, so a row may stand for a round of ratings whose rater
    changes from item to item. Returns nan when kappa is not defined: every
    rating is the same category.

    Refuses (ValueError) fewer than two raters, rows of unequal length, no
    items, and a missing rating (None or NaN: Fleiss' kappa needs the same
    number of ratings of every item; use krippendorff_alpha). Raters and
    items are counted from 0 in messages.
    """
    rows = _rater_rows(ratings, "Fleiss' kappa")
    for rater, row in enumerate(rows):
        for position, rating in enumerate(row):
            if _is_missing(rating):
                raise ValueError(
                    f"rater {rater}'s rating of item {position} is missing; Fleiss' kappa needs the same "
                    "number of ratings of every item (krippendorff_alpha allows missing ratings)"
                )
    code = _category_codes([rating for row in rows for rating in row], ordered=False)
    by_item = np.array([[code[rating] for rating in row] for row in rows]).T
    counts, _ = aggregate_raters(by_item)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(statsmodels_fleiss_kappa(counts, method="fleiss"))


def krippendorff_alpha(data: Sequence[Sequence[Hashable | None]], *, level: str = "nominal") -> float:
    """Krippendorff's alpha; ``data`` holds one row for each rater, each row
    that rater's ratings of the same items in the same order, None (or NaN)
    where the rater gave none.

    ``level`` is "nominal", "ordinal", "interval" or "ratio". Nominal and
    ordinal ratings may be any labels; ordinal reads only their sorted order,
    and text sorts alphabetically ("high" before "low"), so give ordinal
    ratings as numbers or as labels that sort in their order. Interval and
    ratio ratings are numbers, whose differences (or ratios) are the
    distances. Items with fewer than two ratings do not count. Returns nan
    when alpha is not defined: every rating is the same value.

    Refuses (ValueError) an unknown level, fewer than two raters, rows of
    unequal length, no item rated by two raters, ordinal labels that cannot
    be ordered, and at the interval or ratio level a rating that is not a
    number. Raters and items are counted from 0 in messages.
    """
    _check_level(level)
    rows = _rater_rows(data, "Krippendorff's alpha")
    given = [rating for row in rows for rating in row if not _is_missing(rating)]
    if level in NUMERIC_LEVELS:
        for rater, row in enumerate(rows):
            for position, rating in enumerate(row):
                if not _is_missing(rating) and not _is_number(rating):
                    raise ValueError(
                        f"at the {level} level every rating is a number; rater {rater} gave {rating!r} "
                        f"to item {position}"
                    )
    pairable = any(sum(not _is_missing(row[item]) for row in rows) >= 2 for item in range(len(rows[0])))
    if not pairable:
        raise ValueError("no item has ratings from two raters, so there is no agreement to measure")
    if len(set(given)) < 2:
        return math.nan
    code = {} if level in NUMERIC_LEVELS else _category_codes(given, ordered=level == "ordinal")
    matrix = np.array(
        [
            [math.nan if _is_missing(rating) else float(code[rating] if code else rating) for rating in row]
            for row in rows
        ]
    )
    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level))


def _check_level(level: str) -> None:
    if level not in LEVELS:
        raise ValueError(f"the level is one of {', '.join(LEVELS)}, not {level!r}")


def _rater_rows(ratings: Sequence[Sequence[Hashable]], statistic: str) -> list[list[Hashable]]:
    rows = [list(row) for row in ratings]
    if len(rows) < 2:
        raise ValueError(f"{statistic} needs at least two raters (one row each), not {len(rows)}")
    lengths = sorted({len(row) for row in rows})
    if len(lengths) > 1:
        raise ValueError(
            f"the raters' rows have different lengths ({', '.join(map(str, lengths))}); every row holds "
            "one rating (or None) for each item, in the same order"
        )
    if not lengths[0]:
        raise ValueError(f"there are no items: {statistic} needs at least one")
    return rows


def _category_codes(ratings: Sequence[Hashable], *, ordered: bool) -> dict[Hashable, int]:
    """Each category's position: in sorted order, or, for nominal ratings
    that do not sort, in order of first appearance (nominal figures ignore
    the order)."""
    try:
        categories = sorted(set(ratings))
    except TypeError:
        if not ordered:
            return {category: index for index, category in enumerate(dict.fromkeys(ratings))}
        kinds = sorted({type(rating).__name__ for rating in ratings})
        raise ValueError(
            f"the ratings mix kinds that cannot be put in order ({', '.join(kinds)}); "
            "give every rating as the same kind"
        ) from None
    return {category: index for index, category in enumerate(categories)}


def _is_missing(rating) -> bool:
    return rating is None or (isinstance(rating, float) and math.isnan(rating))


def _is_number(rating) -> bool:
    numeric = isinstance(rating, int | float | np.integer | np.floating)
    return numeric and not isinstance(rating, bool | np.bool_)
