"""Agreement figures against examples worked by hand."""

import pytest

from scoring.agreement import TOO_FEW_ITEMS, agreement

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
