"""Agreement figures against examples worked by hand."""

import math
import re

import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa as cohens_kappa_statsmodels

from scoring.stats.agreement import (
    TOO_FEW_ITEMS,
    agreement,
    cohen_kappa,
    fleiss_kappa,
    kappa_with_interval,
    krippendorff_alpha,
    validation_missing,
)

# Two readers, six items: they agree on items 1, 3, 4 and 5.
A = ["yes", "yes", "no", "no", "yes", "no"]
B = ["yes", "no", "no", "no", "yes", "yes"]


def by_item(**readers):
    """{item number: {reader: rating}} from each reader's ratings in item order."""
    items = max(len(ratings) for ratings in readers.values())
    return {
        number: {reader: ratings[number - 1] for reader, ratings in readers.items() if number <= len(ratings)}
        for number in range(1, items + 1)
    }


def test_it_matches_the_hand_worked_two_reader_example():
    result = agreement(by_item(a=A, b=B))
    # Percent: 4 of 6. Cohen: p_o = 4/6, p_e = .5·.5 + .5·.5 = .5, kappa = (2/3 - 1/2)/(1/2) = 1/3.
    assert result.percent.value == pytest.approx(4 / 6)
    assert result.cohen.value == pytest.approx(1 / 3)
    # Fleiss with two readers: mean P_i = 4/6, P_e = .5, kappa = 1/3 as well.
    assert result.fleiss.value == pytest.approx(1 / 3)
    # Krippendorff, nominal: o_yy = o_nn = 4, o_yn = o_ny = 2, n = 12, n_y = n_n = 6;
    # D_o = 4/12, D_e = 2·6·6/(12·11) = 6/11, alpha = 1 - (1/3)/(6/11) = 7/18.
    assert result.alpha.value == pytest.approx(7 / 18)
    assert [f.items for f in result.figures] == [6, 6, 6, 6]
    assert result.below_floor
    assert result.differing == (2, 6)


def test_it_allows_missing_ratings_for_alpha_only():
    # Three readers; the third rates only the first three items.
    third = ["yes", "no", "no", None, None, None]
    result = agreement(by_item(a=A, b=B, c=third))
    assert result.cohen.value is None
    assert result.cohen.note == (
        "3 readers rated the items: Cohen's kappa needs one fixed pair of readers; read Krippendorff's alpha"
    )
    assert result.fleiss.value is None
    assert result.fleiss.note == "needs the same number of ratings on every item"
    # Coincidences: units 1-3 hold three values (each ordered pair weighs 1/2),
    # units 4-6 two (weight 1). o_yy = 3 (unit 1) + 2 (unit 5) = 5;
    # o_nn = 1 (unit 2) + 3 (unit 3) + 2 (unit 4) = 6; o_yn + o_ny = 2 (unit 2) + 2 (unit 6) = 4.
    # n = 15, n_y = 7, n_n = 8; D_o = 4/15, D_e = 2·7·8/(15·14) = 8/15; alpha = 1 - 1/2 = 1/2.
    assert result.alpha.value == pytest.approx(0.5)
    # Items 1, 3, 4 and 5 are unanimous.
    assert result.percent.value == pytest.approx(4 / 6)
    assert result.differing == (2, 6)


def test_it_gives_no_cohen_when_three_readers_rotate_in_pairs():
    # The hand-worked ratings, but item by item the pair changes: (a, b), (b, c), (c, a), ...
    pairs = [("a", "b"), ("b", "c"), ("c", "a")] * 2
    ratings = {
        number: {first: x, second: y}
        for number, ((first, second), x, y) in enumerate(zip(pairs, A, B, strict=True), start=1)
    }
    result = agreement(ratings)
    assert result.cohen.value is None
    assert result.cohen.items == 6
    assert result.cohen.note == (
        "3 readers rotate over the items: Cohen's kappa needs one fixed pair of readers; "
        "read Fleiss' kappa and Krippendorff's alpha"
    )
    # Fleiss and alpha look only at the ratings within each item, not at who gave them.
    assert result.fleiss.value == pytest.approx(1 / 3)
    assert result.alpha.value == pytest.approx(7 / 18)
    assert result.percent.value == pytest.approx(4 / 6)
    assert result.differing == (2, 6)


def test_it_counts_for_cohen_only_the_items_both_readers_read():
    # A seventh item read by reader a alone cannot show agreement: it is left
    # out of every figure, and Cohen still rests on the fixed pair's six items.
    result = agreement(by_item(a=[*A, "no"], b=B))
    assert result.cohen.value == pytest.approx(1 / 3)
    assert [f.items for f in result.figures] == [6, 6, 6, 6]
    assert result.percent.value == pytest.approx(4 / 6)
    assert result.alpha.value == pytest.approx(7 / 18)
    assert result.differing == (2, 6)


# Ten items, agreeing on all but items 2 and 6; the first nine alone are the
# nine-item case.
A10 = ["yes", "yes", "no", "no", "yes", "no", "yes", "no", "yes", "no"]
B10 = ["yes", "no", "no", "no", "yes", "yes", "yes", "no", "yes", "no"]


def test_it_flags_every_figure_on_nine_items():
    result = agreement(by_item(a=A10[:9], b=B10[:9]))
    # Each reader says yes 5 times, no 4 times. p_o = 7/9, p_e = (5/9)² + (4/9)² = 41/81,
    # Cohen = (63/81 - 41/81)/(40/81) = 11/20; Fleiss pools the same margins: 11/20.
    # Alpha: n = 18, n_y = 10, n_n = 8; D_o = 4/18, D_e = 2·10·8/(18·17) = 80/153;
    # alpha = 1 - (2/9)/(80/153) = 1 - 17/40 = 23/40.
    assert [f.value for f in result.figures] == pytest.approx([7 / 9, 11 / 20, 11 / 20, 23 / 40])
    assert [f.items for f in result.figures] == [9, 9, 9, 9]
    assert [f.note for f in result.figures] == [TOO_FEW_ITEMS] * 4
    assert TOO_FEW_ITEMS == "too few items to read anything into"


def test_it_does_not_flag_figures_on_ten_items():
    result = agreement(by_item(a=A10, b=B10))
    # 5 yes and 5 no each: p_o = 8/10, p_e = 1/2, Cohen = Fleiss = (4/5 - 1/2)/(1/2) = 3/5.
    # Alpha: n = 20, n_y = n_n = 10; D_o = 4/20, D_e = 2·10·10/(20·19) = 10/19; alpha = 1 - 19/50 = 31/50.
    assert [f.value for f in result.figures] == pytest.approx([8 / 10, 3 / 5, 3 / 5, 31 / 50])
    assert [f.items for f in result.figures] == [10, 10, 10, 10]
    assert [f.note for f in result.figures] == ["", "", "", ""]


def test_it_says_why_a_figure_is_missing():
    same = agreement({1: {"a": "yes", "b": "yes"}, 2: {"a": "yes", "b": "yes"}})
    assert same.percent.value == 1.0
    assert same.alpha.value is None
    assert same.alpha.note == "every rating is the same category"
    assert same.cohen.note == "not defined when every rating is the same"
    assert same.differing == ()
    lonely = agreement({1: {"a": "yes"}, 2: {"a": "no", "b": None}})
    assert [f.note for f in lonely.figures] == ["no item has two ratings"] * 4
    assert [f.items for f in lonely.figures] == [0, 0, 0, 0]


# The agreement functions on plain sequences (spec 003, "Agreement statistics").


def test_it_gives_the_spec_examples_of_weighted_kappa_and_interval_alpha():
    assert round(cohen_kappa([1, 2, 3, 3], [1, 2, 3, 2], weights="quadratic"), 3) == 0.8
    assert round(krippendorff_alpha([[1, 2, 3, None], [1, 2, 2, 4]], level="interval"), 3) == 0.706


def test_it_matches_cohen_kappa_worked_by_hand():
    # Unweighted, the two-reader example above: p_o = 4/6, p_e = 1/2, kappa = 1/3.
    assert cohen_kappa(A, B) == pytest.approx(1 / 3)
    # Linear weights on the spec's ratings. Table (rows first rater, columns second,
    # categories 1, 2, 3): one each of (1,1), (2,2), (3,3) and (3,2). Observed
    # disagreement 1·|3-2|/4 = 1/4. Margins: first (1/4, 1/4, 1/2), second (1/4, 1/2, 1/4);
    # expected disagreement sum p_i·q_j·|i-j| = 1/4·1 + 1/4·1/2 + 1/2·1 = 7/8; kappa = 1 - (1/4)/(7/8) = 5/7.
    assert cohen_kappa([1, 2, 3, 3], [1, 2, 3, 2], weights="linear") == pytest.approx(5 / 7)
    # Quadratic by hand: observed 1/4, expected 1/4·3/2 + 1/4·1/2 + 1/2·3/2 = 5/4; kappa = 1 - 1/5.
    assert cohen_kappa([1, 2, 3, 3], [1, 2, 3, 2], weights="quadratic") == pytest.approx(4 / 5)
    # Weights use the categories' positions: 10, 20 and 30 rate as 1, 2 and 3 do.
    assert cohen_kappa([10, 20, 30, 30], [10, 20, 30, 20], weights="linear") == pytest.approx(5 / 7)


def test_it_matches_fleiss_kappa_worked_by_hand():
    # Three raters (rows), four items: (y,y,y), (y,y,n), (n,n,n), (y,n,n).
    # P_i = 1, 1/3, 1, 1/3, mean 2/3; p_y = p_n = 6/12, P_e = 1/2; kappa = (2/3 - 1/2)/(1/2) = 1/3.
    ratings = [["y", "y", "n", "y"], ["y", "y", "n", "n"], ["y", "n", "n", "n"]]
    assert fleiss_kappa(ratings) == pytest.approx(1 / 3)
    # Two raters: the two-reader example above, 1/3 again.
    assert fleiss_kappa([A, B]) == pytest.approx(1 / 3)


def test_it_matches_krippendorff_alpha_worked_by_hand_with_missing_ratings():
    assert krippendorff_alpha([A, B]) == pytest.approx(7 / 18)
    # The three-reader example above, the third reader rating only the first three items: 1/2.
    third = ["yes", "no", "no", None, None, None]
    assert krippendorff_alpha([A, B, third], level="nominal") == pytest.approx(0.5)
    # NaN is missing as None is.
    assert krippendorff_alpha([[1, 2, 3, float("nan")], [1, 2, 2, 4]], level="interval") == pytest.approx(
        12 / 17
    )


def test_it_gives_nan_when_every_rating_is_the_same():
    assert math.isnan(cohen_kappa(["yes", "yes"], ["yes", "yes"]))
    assert math.isnan(fleiss_kappa([["yes", "yes"], ["yes", "yes"]]))
    assert math.isnan(krippendorff_alpha([["yes", "yes"], ["yes", None]]))


def test_it_refuses_bad_ratings_saying_what_is_wrong():
    with pytest.raises(ValueError, match=r"^the two raters rated different numbers of items \(3 and 2\)"):
        cohen_kappa([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match=r"^weights are None, \"linear\" or \"quadratic\", not 'cubic'$"):
        cohen_kappa([1, 2], [1, 2], weights="cubic")
    with pytest.raises(ValueError, match=r"^the second rater's rating of item 1 is missing"):
        cohen_kappa([1, 2], [1, None])
    with pytest.raises(
        ValueError, match=r"^the level is one of nominal, ordinal, interval, ratio, not 'metric'$"
    ):
        krippendorff_alpha([[1, 2], [1, 2]], level="metric")
    with pytest.raises(
        ValueError, match=r"^Krippendorff's alpha needs at least two raters \(one row each\), not 1$"
    ):
        krippendorff_alpha([[1, 2, 3]])
    with pytest.raises(
        ValueError, match=r"^Fleiss' kappa needs at least two raters \(one row each\), not 1$"
    ):
        fleiss_kappa([["yes", "no"]])
    with pytest.raises(ValueError, match=r"^the raters' rows have different lengths \(2, 3\)"):
        fleiss_kappa([["yes", "no"], ["yes", "no", "no"]])
    with pytest.raises(ValueError, match=r"^rater 1's rating of item 0 is missing; Fleiss' kappa needs"):
        fleiss_kappa([["yes", "no"], [None, "no"]])
    with pytest.raises(
        ValueError, match=r"^at the interval level every rating is a number; rater 1 gave 'high' to item 0$"
    ):
        krippendorff_alpha([[1, 2], ["high", 2]], level="interval")
    with pytest.raises(ValueError, match=r"^no item has ratings from two raters"):
        krippendorff_alpha([[1, None], [None, 2]])


def test_it_keeps_nominal_alpha_by_default_and_takes_a_level():
    ratings = by_item(a=[1, 2, 3, None], b=[1, 2, 2, 4])
    assert agreement(ratings).alpha.value == agreement(ratings, level="nominal").alpha.value
    # Item 4 has one rating and is left out, as krippendorff_alpha leaves it out.
    assert agreement(ratings, level="interval").alpha.value == pytest.approx(12 / 17)
    with pytest.raises(
        ValueError, match=r"^at the ratio level every rating is a number; item 1 has 'x' from 'a'$"
    ):
        agreement({1: {"a": "x", "b": 1}}, level="ratio")


def test_kappa_with_interval_gives_the_worked_example():
    # Wikipedia's "Cohen's kappa" example: two readers, 50 items, 20 both yes,
    # 15 both no, 5 and 10 apart: observed 0.7, chance 0.5, kappa 0.4.
    kappa, low, high = kappa_with_interval([[20, 5], [10, 15]])
    assert kappa == pytest.approx(0.4)
    # Kappa's posterior under Jeffreys' prior, from the fixed seed: longer
    # below than statsmodels' large-sample 0.4 -+ 1.96 x 0.127 = [0.1511, 0.6489].
    assert (round(low, 4), round(high, 4)) == (0.1314, 0.6150)
    # The same table always gets the same interval.
    assert kappa_with_interval([[20, 5], [10, 15]]) == (kappa, low, high)


@pytest.mark.parametrize(
    "table",
    [
        [[20, 5], [10, 15]],
        [[48, 1], [0, 1]],
        [[20, 2, 1, 5], [1, 6, 2, 0], [0, 3, 9, 1], [4, 0, 1, 15]],
    ],
)
def test_kappa_with_interval_agrees_with_the_large_sample_interval_on_many_items(table):
    # An independent check: with a thousand times the items, kappa's
    # posterior is normal with the large-sample variance of Fleiss, Cohen and
    # Everitt (1969) that statsmodels computes (Bernstein-von Mises), so the
    # two intervals meet to within the Monte Carlo error.
    many = (np.array(table) * 1000).tolist()
    expected = cohens_kappa_statsmodels(many)
    kappa, low, high = kappa_with_interval(many)
    assert kappa == pytest.approx(expected.kappa, abs=1e-12)
    assert (low, high) == (
        pytest.approx(expected.kappa_low, abs=1e-3),
        pytest.approx(expected.kappa_upp, abs=1e-3),
    )


@pytest.mark.parametrize("table", [[[49, 0], [0, 1]], [[20, 5], [10, 15]], [[45, 0], [0, 5]]])
def test_kappa_with_interval_is_within_its_monte_carlo_error_of_the_posterior(table):
    # Another check, independent of numpy's Dirichlet sampler and the seed:
    # 400,000 draws of the same posterior made as normalised gamma variates.
    # The app's 10,000 seeded draws land within 0.01 of its quantiles.
    gammas = np.random.default_rng(7).standard_gamma(np.array(table, dtype=float).ravel() + 0.5, (400_000, 4))
    cells = gammas / gammas.sum(axis=1, keepdims=True)
    people, judge = cells[:, 0] + cells[:, 1], cells[:, 0] + cells[:, 2]
    chance = people * judge + (1 - people) * (1 - judge)
    posterior = (cells[:, 0] + cells[:, 3] - chance) / (1 - chance)
    _, low, high = kappa_with_interval(table)
    assert (low, high) == tuple(
        pytest.approx(limit, abs=0.01) for limit in np.quantile(posterior, [0.025, 0.975])
    )


def test_kappa_with_interval_is_never_a_point_at_perfect_agreement():
    # 49 agreed passes and 1 agreed fail: the large-sample interval was
    # [1.00, 1.00], which validated a judge on one fail (issue 24, point 2).
    kappa, low, high = kappa_with_interval([[49, 0], [0, 1]])
    assert kappa == 1.0
    assert (round(low, 4), round(high, 4)) == (0.1341, 0.9911)
    kappa, low, high = kappa_with_interval([[10, 0], [0, 10]])
    assert (kappa, round(low, 4), round(high, 4)) == (1.0, 0.6687, 0.9975)


def test_kappa_with_interval_on_four_grades_is_not_pulled_below_its_own_kappa():
    # 50 grades in four categories, three apart: kappa 0.90. Half an item's
    # prior weight on each of 16 cells put 6 items' worth on disagreement,
    # and the interval was [0.61, 0.88], below the table's own kappa
    # (coverage 0.32 at a true kappa of 0.9, bench/coverage_kappa.py). The
    # prior weighs two items whatever the table's size.
    grades = [[26, 1, 0, 0], [1, 11, 0, 0], [0, 0, 6, 0], [0, 0, 1, 4]]
    kappa, low, high = kappa_with_interval(grades)
    assert round(kappa, 4) == 0.9042
    assert low < kappa < high
    gammas = np.random.default_rng(7).standard_gamma(
        np.array(grades, dtype=float).ravel() + 2 / 16, (400_000, 16)
    )
    cells = (gammas / gammas.sum(axis=1, keepdims=True)).reshape(-1, 4, 4)
    chance = np.sum(cells.sum(axis=2) * cells.sum(axis=1), axis=1)
    posterior = (np.trace(cells, axis1=1, axis2=2) - chance) / (1 - chance)
    assert (low, high) == tuple(
        pytest.approx(limit, abs=0.01) for limit in np.quantile(posterior, [0.025, 0.975])
    )


def test_kappa_with_interval_is_not_defined_for_one_shared_category():
    kappa, low, high = kappa_with_interval([[9, 0], [0, 0]])
    assert math.isnan(kappa) and math.isnan(low) and math.isnan(high)


def test_kappa_with_interval_leaves_out_categories_nobody_used():
    grades = [[20, 0, 0, 5], [0, 0, 0, 0], [0, 0, 0, 0], [10, 0, 0, 15]]
    assert kappa_with_interval(grades) == kappa_with_interval([[20, 5], [10, 15]])


def test_kappa_with_interval_stays_within_kappas_range():
    # 48 agreed passes, 1 agreed fail, 1 disagreement: the normal interval
    # reached 1.28, above any kappa; every posterior draw is a table.
    kappa, low, high = kappa_with_interval([[48, 1], [0, 1]])
    assert kappa == pytest.approx(0.6575, abs=1e-4)
    assert (round(low, 4), round(high, 4)) == (0.0722, 0.9327)
    assert -1 <= low < high <= 1


def test_kappa_with_interval_refuses_what_is_not_a_table_of_counts():
    for matrix, message in (
        ([[1, 2, 3], [4, 5, 6]], "a confusion matrix is square, not of shape (2, 3)"),
        ([[1, -1], [0, 2]], "a confusion matrix holds counts: whole numbers of items, none negative"),
        ([[1.5, 1], [0, 2]], "a confusion matrix holds counts: whole numbers of items, none negative"),
        ([[0, 0], [0, 0]], "the confusion matrix counts no item: Cohen's kappa needs at least one"),
    ):
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            kappa_with_interval(matrix)
    with pytest.raises(ValueError, match=r"^alpha must lie strictly between 0 and 1; got 1.5$"):
        kappa_with_interval([[20, 5], [10, 15]], alpha=1.5)
    with pytest.raises(ValueError, match=r"^kappa's interval needs at least 100 draws, not 10$"):
        kappa_with_interval([[20, 5], [10, 15]], draws=10)


def test_validation_missing_says_every_condition_a_label_misses():
    grades = ("resolved", "partially_resolved", "material_error", "unresolved")
    assert validation_missing(
        categories=grades, people=[45, 3, 2, 0], kappa_low=0.52, threshold=0.6, min_items=50
    ) == [
        "people's labels: 45 resolved, 5 of the others; validation needs at least 10 in the most common "
        "and 10 in the others",
        "kappa's lower bound 0.52 is not above 0.60",
    ]
    assert validation_missing(
        categories=("pass", "fail"),
        people=[4, 1],
        kappa_low=None,
        threshold=0.6,
        min_items=50,
        undefined="why",
    ) == [
        "5 items, 50 needed",
        "people's labels: 4 pass, 1 fail; validation needs at least 10 of each",
        "kappa's lower bound is not defined (why)",
    ]
    assert (
        validation_missing(
            categories=("pass", "fail"), people=[10, 40], kappa_low=0.61, threshold=0.6, min_items=50
        )
        == []
    )
    assert (
        validation_missing(
            categories=grades, people=[30, 8, 7, 5], kappa_low=0.7, threshold=0.6, min_items=50
        )
        == []
    )
