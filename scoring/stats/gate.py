"""The release gate as a non-inferiority decision on paired questions.

A candidate version is compared with a baseline on the questions both were
asked, measure by measure, as per-question successes (better is positive for
every measure). Failing to show a regression is not shown safety: a measure
passes only when the one-sided 97.5 % lower bound of the candidate − baseline
difference lies above −margin: the lower of Newcombe's two-sided 95 % limit
and Tango's score limit corrected by half a pair (scoring.stats.paired.
noninferiority_bound). Newcombe's alone passed a candidate exactly at the
margin up to 4.1 % of the time where discordant pairs were absent or all went
one way; this bound keeps it at most 2.44 % (bench/coverage_gate.py).
Everything else is a fail, an inconclusive result or a measure that cannot be
judged, each with its reason.

The candidate passes only when every measure asked for passes. That is an
intersection–union test (Berger, Technometrics 24, 1982, 295–300): each
measure is tested at one-sided 2.5 % and the whole decision keeps that level
without a multiplicity adjustment.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from scoring.stats.paired import (
    GATE_BOUND_METHOD,
    NEWCOMBE_METHOD,
    SETTLE_DRAWS,
    Paired,
    detectable,
    noninferiority_bound,
    pairs_to_settle,
    settle_chance,
)
from scoring.stats.rates import Rate
from scoring.timing import failure_rate

PASS, FAIL, INCONCLUSIVE, CANNOT_JUDGE = "pass", "fail", "inconclusive", "cannot judge"

DEFAULT_MARGIN_POINTS = 2.0
ALPHA = 0.05  # two-sided; the decision uses its one-sided 97.5 % lower bound
BOUND = f"one-sided 97.5 % lower bound: {GATE_BOUND_METHOD.removesuffix(' (one-sided 97.5 %)')}"
WORSE = (
    "a measure whose whole interval lies below zero fails even when its lower bound is above "
    "−margin: it is shown worse, and being within the margin does not excuse a shown regression"
)
MULTIPLICITY = (
    "the candidate passes only when every measure passes (an intersection-union test): "
    "each measure is judged on its own at one-sided 2.5 % and no multiplicity adjustment is needed"
)

# What the process exits with, and the HTTP status the API answers with.
EXIT_CODES = {PASS: 0, FAIL: 1, INCONCLUSIVE: 1, CANNOT_JUDGE: 2}


@dataclass
class MeasureVerdict:
    verdict: str
    reasons: list[str] = field(default_factory=list)
    pairs_to_settle: int | None = None
    # The chance that pairs_to_settle paired questions settle it (settle_chance).
    settle_chance: float | None = None
    # The bound the decision compared with -margin (noninferiority_bound).
    bound: float | None = None


def points(share: float) -> str:
    """0.0237 as "2.4 points", with the sign where it matters."""
    return f"{share * 100:.1f} points"


def judge_measure(
    result: Paired,
    *,
    candidate_success: Rate | None,
    margin: float,
    max_drop: float | None = None,
    floor: float | None = None,
) -> MeasureVerdict:
    """The verdict on one measure.

    ``result`` is the paired comparison (candidate − baseline, shares, with
    its two-sided 95 % interval); ``candidate_success`` the candidate's own
    success rate with its interval (for a floor); ``margin``, ``max_drop``
    and ``floor`` are shares. Returns fail when the whole interval is below
    zero, when the drop exceeds ``max_drop`` or when the floor lies above the
    candidate's upper bound; pass when the lower bound is above −margin and
    any floor lies below the candidate's lower bound; else inconclusive, with
    how many paired questions would settle it. No paired question, or a
    floor with no candidate rate, cannot be judged.
    """
    if not result.n:
        return MeasureVerdict(CANNOT_JUDGE, ["no question was asked of both versions for this measure"])
    if floor is not None and candidate_success is None:
        return MeasureVerdict(
            CANNOT_JUDGE, ["the candidate has no rate on this measure to hold to the floor"]
        )
    failures, doubts = [], []
    if result.high < 0:
        failures.append(
            f"worse: the whole interval lies below zero ({points(result.low)} to {points(result.high)})"
        )
    if max_drop is not None and -result.difference > max_drop:
        failures.append(f"drops {points(-result.difference)}, more than the {points(max_drop)} allowed")
    if floor is not None:
        if floor > candidate_success.high:
            failures.append(
                f"misses the floor of {floor:.1%} for sure: the candidate's interval ends at "
                f"{candidate_success.high:.1%}"
            )
        elif floor >= candidate_success.low:
            doubts.append(
                f"floor not shown: {floor:.1%} lies inside the candidate's interval "
                f"({candidate_success.low:.1%} to {candidate_success.high:.1%})"
            )
    bound = noninferiority_bound(result.table, alpha=ALPHA)
    if failures:
        return MeasureVerdict(FAIL, failures, bound=bound)
    if bound > -margin and not doubts:
        return MeasureVerdict(
            PASS, [f"the lower bound, {points(bound)}, is above the margin of -{points(margin)}"], bound=bound
        )
    settle = chance = None
    if bound <= -margin:
        settle = pairs_to_settle(result.table, margin=margin, alpha=ALPHA)
        if settle is not None:
            chance = settle_chance(result.table, settle, margin=margin, alpha=ALPHA)
        doubts.insert(0, _not_shown(result, bound, margin, settle, chance))
    return MeasureVerdict(INCONCLUSIVE, doubts, settle, chance, bound)


def _not_shown(result: Paired, bound: float, margin: float, settle: int | None, chance: float | None) -> str:
    text = (
        f"not shown safe: the lower bound, {points(bound)}, is not above the margin of "
        f"-{points(margin)}, and the interval reaches {points(result.high)}, so no regression is shown either"
    )
    (_, only_baseline), (only_candidate, _) = result.table
    observed = (
        f"the observed difference ({points(result.difference)}) and discordance ({result.discordance:.1%}: "
        f"{only_baseline} only the baseline, {only_candidate} only the candidate, of {result.n})"
    )
    if settle is None:
        return f"{text}; if {observed} stayed as they are, no number of questions would settle it"
    return (
        f"{text}; a conditional estimate, assuming {observed} stay as they are: about "
        f"{settle - result.n:,} more paired questions ({settle:,} in all) would settle it, and "
        f"{settle:,} questions drawn with those shares settle it {chance:.0%} of the time "
        f"(simulated, {SETTLE_DRAWS} draws)"
    )


def measure_report(
    result: Paired,
    verdict: MeasureVerdict,
    *,
    label: str,
    baseline_all: Rate | None,
    candidate_all: Rate | None,
    margin: float,
) -> dict:
    """One measure's answer: both versions' k/n, the discordant counts, the
    difference with its interval, the margin, alpha, the bound, the
    detectable difference and the verdict with its reasons. Differences are
    in points (candidate − baseline; better is positive)."""
    (both, only_baseline), (only_candidate, neither) = result.table
    detectable_share = detectable(result)
    return {
        "label": label,
        "verdict": verdict.verdict,
        "reasons": verdict.reasons,
        "paired": {
            "n": result.n,
            "baseline": {"k": both + only_baseline, "n": result.n},
            "candidate": {"k": both + only_candidate, "n": result.n},
            "table": [[both, only_baseline], [only_candidate, neither]],
            "discordant": {
                "only_baseline_succeeds": only_baseline,
                "only_candidate_succeeds": only_candidate,
            },
            "difference_points": in_points(result.difference),
            "low_points": in_points(result.low),
            "high_points": in_points(result.high),
            "interval": f"{NEWCOMBE_METHOD}, two-sided 95 %",
            "mcnemar_exact_p": result.p_value,
            "label": "measured",
            "bound_points": in_points(verdict.bound),
            "bound_method": GATE_BOUND_METHOD,
        },
        "baseline_all": _rate(baseline_all),
        "candidate_all": _rate(candidate_all),
        "margin_points": in_points(margin),
        "alpha": ALPHA,
        "bound": BOUND,
        "detectable_difference_points": in_points(detectable_share),
        "detectable_difference_note": (
            "the smallest difference these pairs detect with 80 % power by McNemar's exact test at the "
            "observed discordance (at least 5 %), summed over the binomial: a conditional estimate"
        ),
        "pairs_to_settle": verdict.pairs_to_settle,
        "settle_chance": verdict.settle_chance,
        "pairs_to_settle_note": (
            "a conditional estimate: the pairs at which the gate's rule would settle the measure if the "
            "observed difference and discordance stayed as they are; settle_chance is how often that "
            f"many pairs drawn with the observed shares settle it ({SETTLE_DRAWS} simulated draws)"
        ),
    }


def _e2e(summary: dict | None) -> tuple[str, dict] | None:
    """The end-to-end figure of a timing summary: from timestamps when logged."""
    if not summary or not summary["e2e"]["by_source"]:
        return None
    return next(iter(summary["e2e"]["by_source"].items()))


def judge_p90(candidate: dict | None, baseline: dict | None, *, max_p90_s: float) -> dict:
    """The candidate's end-to-end P90 (nearest rank, delivered answers only)
    held to ``max_p90_s``: a measured figure, compared as it stands."""
    found = _e2e(candidate)
    entry = {
        "label": "end-to-end time, P90 (nearest rank)",
        "max_p90_s": max_p90_s,
        "candidate": found[1] | {"source": found[0]} if found else None,
        "baseline": (_e2e(baseline) or (None, None))[1],
    }
    if found is None or not found[1]["n"]:
        return entry | {"verdict": CANNOT_JUDGE, "reasons": ["the candidate logged no end-to-end time"]}
    p90 = found[1]["p90"]
    if p90 > max_p90_s:
        return entry | {"verdict": FAIL, "reasons": [f"P90 {p90:.2f} s is above the {max_p90_s:g} s allowed"]}
    return entry | {"verdict": PASS, "reasons": [f"P90 {p90:.2f} s is within the {max_p90_s:g} s allowed"]}


def judge_timeouts(candidate: dict | None, baseline: dict | None, *, max_rate: float) -> dict:
    """The candidate's timeout rate over all attempts, held to ``max_rate`` by
    its Wilson interval: pass when the whole interval is at or under it, fail
    when the whole interval is above it, otherwise not shown."""
    entry = {"label": "timeout rate, of all attempts", "max_rate": max_rate}
    if not candidate or not candidate["failures"]["n"]:
        return entry | {"verdict": CANNOT_JUDGE, "reasons": ["the candidate logged no attempts with timing"]}
    for name, summary in (("candidate", candidate), ("baseline", baseline)):
        if summary and summary["failures"]["n"]:
            entry[name] = _rate(failure_rate(summary["failures"], status="timeout"))
    figure = entry["candidate"]
    if figure["low"] > max_rate:
        return entry | {
            "verdict": FAIL,
            "reasons": [f"timeouts {figure['rate']:.1%}, shown above {max_rate:.1%}"],
        }
    if figure["high"] <= max_rate:
        return entry | {"verdict": PASS, "reasons": [f"timeouts shown at or under {max_rate:.1%}"]}
    return entry | {
        "verdict": INCONCLUSIVE,
        "reasons": [
            f"not shown under {max_rate:.1%}: the timeout rate's interval runs from {figure['low']:.1%} "
            f"to {figure['high']:.1%}"
        ],
    }


def overall(verdicts: dict[str, str]) -> str:
    """A fail anywhere fails; then a measure that cannot be judged; then any
    inconclusive one; a pass needs every measure to pass."""
    for outcome in (FAIL, CANNOT_JUDGE, INCONCLUSIVE):
        if outcome in verdicts.values():
            return outcome
    return PASS if verdicts else CANNOT_JUDGE


def in_points(share: float | None) -> float | None:
    """A share (0-1) as percentage points, rounded as the gate reports them."""
    return None if share is None else round(share * 100, 4)


def _rate(value: Rate | None) -> dict | None:
    if value is None:
        return None
    return {
        "k": value.k,
        "n": value.n,
        "rate": value.value,
        "low": value.low,
        "high": value.high,
        "effective_n": value.effective_n,
    }
