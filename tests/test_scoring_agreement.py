"""Agreement figures against examples worked by hand."""

import pytest

from scoring.agreement import agreement

# Two readers, six items: they agree on items 1, 3, 4 and 5.
A = ["yes", "yes", "no", "no", "yes", "no"]
B = ["yes", "no", "no", "no", "yes", "yes"]


def test_it_matches_the_hand_worked_two_reader_example():
    result = agreement(list(zip(A, B, strict=True)))
    # Percent: 4 of 6. Cohen: p_o = 4/6, p_e = .5·.5 + .5·.5 = .5, kappa = (2/3 - 1/2)/(1/2) = 1/3.
    assert result.percent.value == pytest.approx(4 / 6)
    assert result.cohen.value == pytest.approx(1 / 3)
    # Fleiss with two readers: mean P_i = 4/6, P_e = .5, kappa = 1/3 as well.
    assert result.fleiss.value == pytest.approx(1 / 3)
    # Krippendorff, nominal: o_yy = o_nn = 4, o_yn = o_ny = 2, n = 12, n_y = n_n = 6;
    # D_o = 4/12, D_e = 2·6·6/(12·11) = 6/11, alpha = 1 - (1/3)/(6/11) = 7/18.
    assert result.alpha.value == pytest.approx(7 / 18)
    assert (result.percent.items, result.cohen.items, result.alpha.items) == (6, 6, 6)
    assert result.below_floor


def test_it_allows_missing_ratings_for_alpha_only():
    # Three readers; the third rates only the first three items.
    third = ["yes", "no", "no", None, None, None]
    result = agreement(list(zip(A, B, third, strict=True)))
    assert result.cohen.value is None and "exactly two" in result.cohen.note
    assert result.fleiss.value is None and "same number" in result.fleiss.note
    # Coincidences: units 1-3 hold three values (each ordered pair weighs 1/2),
    # units 4-6 two (weight 1). o_yy = 3 (unit 1) + 2 (unit 5) = 5;
    # o_nn = 1 (unit 2) + 3 (unit 3) + 2 (unit 4) = 6; o_yn + o_ny = 2 (unit 2) + 2 (unit 6) = 4.
    # n = 15, n_y = 7, n_n = 8; D_o = 4/15, D_e = 2·7·8/(15·14) = 8/15; alpha = 1 - 1/2 = 1/2.
    assert result.alpha.value == pytest.approx(0.5)
    # Items 1, 3, 4 and 5 are unanimous.
    assert result.percent.value == pytest.approx(4 / 6)


def test_it_says_why_a_figure_is_missing():
    same = agreement([["yes", "yes"], ["yes", "yes"]])
    assert same.percent.value == 1.0
    assert same.alpha.value is None and same.alpha.note
    assert agreement([["yes"], ["no", None]]).percent.note == "no item has two ratings"
