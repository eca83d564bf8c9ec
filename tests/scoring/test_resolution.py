import pytest

from scoring.repeats import one_attempt_sentence
from scoring.resolution import stable_from_grades

R, P, M, U = "resolved", "partially_resolved", "material_error", "unresolved"

# Worked by hand: three attempts each.
#   A: q1 R R R (stable), q2 R P R (not), q3 R None R (not yet known),
#      q4 R R (third attempt not graded: not yet known), q5 M None None (not:
#      one attempt already failed)        -> 1 of 5 stable, 2 not yet known
#   B: q1 R R R, q2 R R R, q3 R R R, q6 U U U -> 3 of 4, none unknown
#   common: asked by both q1, q2, q3 (3); resolved by both in every attempt: q1
GRADES = {
    "A": {"q1": [R, R, R], "q2": [R, P, R], "q3": [R, None, R], "q4": [R, R], "q5": [M, None, None]},
    "B": {"q1": [R, R, R], "q2": [R, R, R], "q3": [R, R, R], "q6": [U, U, U]},
}


def test_it_counts_a_question_stable_only_when_every_attempt_is_fully_resolved():
    figures = stable_from_grades(GRADES, repetitions=3)
    a, b = figures["setups"]["A"], figures["setups"]["B"]
    assert (a["k"], a["n"], a["not_yet_known"], a["stable"], a["repetitions"]) == (1, 5, 2, {"q1"}, 3)
    assert (b["k"], b["n"], b["not_yet_known"], b["stable"]) == (3, 4, 0, {"q1", "q2", "q3"})


def test_it_gives_the_common_subset_with_each_setups_own_denominator():
    common = stable_from_grades(GRADES, repetitions=3)["common"]
    assert common == {
        "questions": ["q1"],
        "k": 1,
        "n": 3,
        "setups": {"A": {"k": 1, "n": 5}, "B": {"k": 3, "n": 4}},
    }


def test_it_takes_three_setups_at_once():
    grades = {**GRADES, "C": {"q1": [R, R, R], "q2": [R, R, R]}}
    common = stable_from_grades(grades, repetitions=3)["common"]
    assert (common["questions"], common["n"]) == (["q1"], 2)
    assert common["setups"]["C"] == {"k": 2, "n": 2}


def test_it_has_no_common_subset_for_one_setup():
    assert stable_from_grades({"A": GRADES["A"]}, repetitions=3)["common"] is None


def test_it_gives_no_stable_rate_with_one_attempt():
    assert stable_from_grades(GRADES, repetitions=1) == {"note": one_attempt_sentence(figures="the grades")}


def test_it_refuses_more_grades_than_attempts():
    with pytest.raises(ValueError, match="A, question q1: 4 grades for 3 attempts"):
        stable_from_grades({"A": {"q1": [R, R, R, R]}}, repetitions=3)


def test_it_holds_each_setup_to_the_attempts_it_made():
    # B made one attempt a question: no stable rate for it, and its single
    # resolved attempts (q1, q2, q3) are what it brings to the common subset;
    # A's q1 is the only question both fully resolved in every attempt made.
    grades = {"A": GRADES["A"], "B": {"q1": [R], "q2": [P], "q3": [R], "q6": [U]}}
    figures = stable_from_grades(grades, repetitions={"A": 3, "B": 1})
    b = figures["setups"]["B"]
    assert (b["k"], b["n"], b["not_yet_known"], b["repetitions"]) == (None, 4, None, 1)
    assert b["note"] == one_attempt_sentence(figures="its grades", who="B")
    assert figures["setups"]["A"]["k"] == 1
    assert (figures["common"]["questions"], figures["common"]["n"]) == (["q1"], 3)
