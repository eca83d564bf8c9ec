"""The gate's decision on one measure, on paired tables worked out by hand."""

from scoring.stats.gate import CANNOT_JUDGE, FAIL, INCONCLUSIVE, PASS, judge_measure, measure_report, overall
from scoring.stats.paired import paired
from scoring.stats.rates import rate


def outcomes(both: int, only_baseline: int, only_candidate: int, neither: int):
    """Per-question successes giving the table ((both, only_baseline), (only_candidate, neither))."""
    baseline, candidate = {}, {}
    cells = (
        (both, True, True),
        (only_baseline, True, False),
        (only_candidate, False, True),
        (neither, False, False),
    )
    for count, base, cand in cells:
        for _ in range(count):
            question = f"q{len(baseline)}"
            baseline[question], candidate[question] = base, cand
    return baseline, candidate


def test_it_is_inconclusive_on_a_candidate_2_4_points_worse_on_169_questions():
    # 4 of 169 questions newly failed: −2.4 points, McNemar p = 0.125 — the old
    # gate passed this. Newcombe's interval runs from −5.9 to +0.3 points:
    # neither above −2 (safe) nor below 0 (worse).
    result = paired(*outcomes(165, 4, 0, 0))
    assert (result.n, round(result.difference * 100, 1)) == (169, -2.4)
    assert round(result.low, 4) == -0.0593 and round(result.high, 4) == 0.0028
    verdict = judge_measure(result, candidate_success=None, margin=0.02)
    assert verdict.verdict == INCONCLUSIVE
    # At the same discordance, 197 pairs would put the whole interval below 0;
    # 197 pairs drawn with these shares do so only about half the time. The
    # gate's bound (Tango's limit, corrected by half a pair) is -6.3 points.
    assert verdict.pairs_to_settle == 197
    assert round(verdict.bound, 4) == -0.0634
    assert verdict.settle_chance == 203 / 400
    assert verdict.reasons == [
        "not shown safe: the lower bound, -6.3 points, is not above the margin of -2.0 points, and the "
        "interval reaches 0.3 points, so no regression is shown either; a conditional estimate, assuming "
        "the observed difference (-2.4 points) and discordance (2.4%: 4 only the baseline, 0 only the "
        "candidate, of 169) stay as they are: about 28 more paired questions (197 in all) would settle "
        "it, and 197 questions drawn with those shares settle it 51% of the time (simulated, 400 draws)"
    ]


def test_it_passes_only_when_the_lower_bound_clears_the_margin():
    clear = paired(*outcomes(900, 0, 0, 100))  # 1,000 pairs, none discordant
    assert judge_measure(clear, candidate_success=None, margin=0.02).verdict == PASS
    assert judge_measure(clear, candidate_success=None, margin=0.0).verdict == INCONCLUSIVE


def test_it_fails_when_the_whole_interval_is_below_zero_or_the_drop_is_too_large():
    worse = paired(*outcomes(150, 30, 5, 15))
    assert worse.high < 0
    verdict = judge_measure(worse, candidate_success=None, margin=0.02)
    assert verdict.verdict == FAIL and verdict.reasons[0].startswith(
        "worse: the whole interval lies below zero"
    )
    slight = paired(*outcomes(165, 4, 0, 0))
    dropped = judge_measure(slight, candidate_success=None, margin=0.02, max_drop=0.02)
    assert (dropped.verdict, dropped.reasons) == (
        FAIL,
        ["drops 2.4 points, more than the 2.0 points allowed"],
    )


def test_it_holds_the_candidate_to_a_floor_by_its_interval():
    result = paired(*outcomes(900, 0, 0, 100))
    candidate = rate(900, 1000)  # 90 % [88.0–91.7]
    assert judge_measure(result, candidate_success=candidate, margin=0.02, floor=0.85).verdict == PASS
    missed = judge_measure(result, candidate_success=candidate, margin=0.02, floor=0.95)
    assert missed.verdict == FAIL and missed.reasons[0].startswith("misses the floor of 95.0% for sure")
    unsure = judge_measure(result, candidate_success=candidate, margin=0.02, floor=0.9)
    assert unsure.verdict == INCONCLUSIVE and unsure.reasons[0].startswith(
        "floor not shown: 90.0% lies inside"
    )


def test_it_cannot_judge_without_paired_questions():
    empty = paired({"a": True}, {"b": True})
    verdict = judge_measure(empty, candidate_success=None, margin=0.02)
    assert verdict.verdict == CANNOT_JUDGE
    report = measure_report(empty, verdict, label="x", baseline_all=None, candidate_all=None, margin=0.02)
    assert (report["paired"]["n"], report["detectable_difference_points"]) == (0, None)


def test_it_reports_the_figures_a_decision_rests_on():
    result = paired(*outcomes(165, 4, 0, 0))
    verdict = judge_measure(result, candidate_success=None, margin=0.02)
    report = measure_report(
        result,
        verdict,
        label="numeric accuracy",
        baseline_all=rate(169, 169),
        candidate_all=rate(165, 169),
        margin=0.02,
    )
    assert report["paired"]["baseline"] == {"k": 169, "n": 169}
    assert report["paired"]["candidate"] == {"k": 165, "n": 169}
    assert report["paired"]["discordant"] == {"only_baseline_succeeds": 4, "only_candidate_succeeds": 0}
    assert (report["paired"]["difference_points"], report["margin_points"], report["alpha"]) == (
        -2.3669,
        2.0,
        0.05,
    )
    assert report["candidate_all"]["k"] == 165


def test_a_pass_needs_every_measure_to_pass():
    assert overall({"a": PASS, "b": PASS}) == PASS
    assert overall({"a": PASS, "b": INCONCLUSIVE}) == INCONCLUSIVE
    assert overall({"a": CANNOT_JUDGE, "b": INCONCLUSIVE}) == CANNOT_JUDGE
    assert overall({"a": CANNOT_JUDGE, "b": FAIL}) == FAIL
    assert overall({}) == CANNOT_JUDGE


def test_it_does_not_pass_169_questions_without_a_discordant_pair_at_a_2_point_margin():
    # No question changed outcome among 169. A candidate truly 2 points worse (it
    # newly fails 2 % of the questions and newly passes none) shows no discordant
    # pair with chance 0.98^169 = 3.3 %, above the 2.5 % a one-sided 97.5 % bound
    # allows, so such a table cannot show the drop is under 2 points. The exact
    # bound: the drop is at most the share only the baseline succeeds on, whose
    # Clopper-Pearson one-sided 97.5 % upper limit for 0 of 169 is
    # 1 - 0.025^(1/169) = 2.16 points. Newcombe's interval is ±1.15 points at an
    # even split of the concordant pairs (±1.75 at 35 and 134): its phi, near 1,
    # makes the margins' Wilson widths cancel, and the gate passed.
    result = paired(*outcomes(84, 0, 0, 85))
    assert round(result.low, 4) == -0.0115
    verdict = judge_measure(result, candidate_success=None, margin=0.02)
    assert verdict.verdict == INCONCLUSIVE
