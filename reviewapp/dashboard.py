"""Reads for managers: a version's figures, versions side by side, paired
comparison of two versions, and the release gate."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from reviewapp.lead import outcome_key
from reviewapp.models import (
    Adjudication,
    AnswerCheck,
    AssistantVersion,
    Judgement,
    Run,
    Sample,
    SampleItem,
    Scoring,
    SetVersion,
)
from reviewapp.selectors import score_table
from reviewapp.services.scoring import DEFAULT_SLICE_FIELDS, config_key
from scoring import gate as gating
from scoring.compare import Paired, detectable_difference, paired
from scoring.measures import FAILURE_MEASURES, MEASURE_LABELS, MEASURES
from scoring.rates import rate, stratified_rate

DEFAULT_KEY = config_key(options={}, slice_fields=DEFAULT_SLICE_FIELDS)
GRADES = ("resolved", "partially_resolved", "material_error", "unresolved")
GRADE_LABELS = {
    "resolved": "resolved",
    "partially_resolved": "partially resolved",
    "material_error": "material error",
    "unresolved": "unresolved",
    "pending": "pending",
    "not_graded": "not yet graded",
}


def version_scoring(assistant_version: AssistantVersion, set_version: SetVersion) -> Scoring | None:
    """The scoring a version's figures come from: its latest stored run on
    the set version, scored with the default options."""
    run = (
        Run.objects.filter(
            assistant_version=assistant_version, set_version=set_version, status=Run.Status.STORED
        )
        .order_by("-created_at", "-id")
        .first()
    )
    if run is None:
        return None
    return run.scorings.filter(
        set_version=set_version, config_key=DEFAULT_KEY, status=Scoring.Status.DONE
    ).first()


def set_versions_of(assistant_version: AssistantVersion) -> list[SetVersion]:
    return list(
        SetVersion.objects.filter(runs__assistant_version=assistant_version, runs__status=Run.Status.STORED)
        .distinct()
        .order_by("-created_at")
    )


@dataclass
class ItemOutcome:
    item: SampleItem
    outcome: str  # a grade, "pending" or "not_graded"
    rubric: dict[str, str]
    weight: float


def settled_outcomes(samples) -> list[ItemOutcome]:
    """Each real (not calibration) item's outcome: the lead's final decision,
    else the readers' outcome when they agree, else not yet graded. An answer
    that does not address the question is unresolved (spec 004)."""
    items = list(SampleItem.objects.filter(sample__in=samples, answer__isnull=False).select_related("sample"))
    latest: dict[tuple[int, int], Judgement] = {}
    for judgement in Judgement.objects.filter(assignment__item__in=items).order_by(
        "assignment_id", "revision"
    ):
        latest[(judgement.assignment.item_id, judgement.assignment_id)] = judgement
    by_item: dict[int, list[Judgement]] = {}
    for (item_id, _), judgement in latest.items():
        by_item.setdefault(item_id, []).append(judgement)
    decisions: dict[int, Adjudication] = {}
    for adjudication in Adjudication.objects.filter(item__in=items).order_by("item_id", "revision"):
        decisions[adjudication.item_id] = adjudication

    results = []
    for item in items:
        stratum = item.sample.strata.get(item.stratum, {})
        weight = stratum.get("weight") or 1.0
        decision = decisions.get(item.id)
        judgements = by_item.get(item.id, [])
        if decision is not None:
            source = [decision]
        elif judgements and len({outcome_key(j) for j in judgements}) == 1:
            source = judgements
        else:
            results.append(
                ItemOutcome(
                    item, "pending" if any(j.pending for j in judgements) else "not_graded", {}, weight
                )
            )
            continue
        key = outcome_key(source[0])
        outcome = "unresolved" if key == "not_addressed" else key
        rubric = {}
        for question, answer in source[0].rubric_answers.items():
            if all(s.rubric_answers.get(question) == answer for s in source):
                rubric[question] = answer
        results.append(ItemOutcome(item, outcome, rubric, weight))
    return results


def review_figures(samples) -> dict:
    """Grades against the planned N with graded coverage (a count over the
    plan), weighted by the recorded strata with a stratified interval when
    the samples were stratified, and the rubric's yes-rates."""
    outcomes = settled_outcomes(samples)
    planned = len(outcomes)
    counts = Counter(o.outcome for o in outcomes)
    strata: dict[tuple[int, str], list[ItemOutcome]] = {}
    for outcome in outcomes:
        strata.setdefault((outcome.item.sample_id, outcome.item.stratum), []).append(outcome)
    stratified = len(strata) > 1
    grades = []
    for grade in (*GRADES, "pending", "not_graded"):
        k = counts.get(grade, 0)
        figure = {"grade": grade, "label": GRADE_LABELS[grade], "k": k, "n": planned}
        if planned:
            figure["rate"] = rate(k, planned)
            if stratified:
                figure["weighted"] = stratified_rate(
                    [
                        (sum(o.outcome == grade for o in items), len(items), _population(items))
                        for items in strata.values()
                    ]
                )
        grades.append(figure)
    graded = sum(counts.get(g, 0) for g in GRADES)
    rubric = []
    keys = []
    for sample in samples:
        for question in sample.rubric_version.questions.all():
            if question.key not in [k for k, _ in keys]:
                keys.append((question.key, question.text))
    for key, text in keys:
        answered = [o.rubric[key] for o in outcomes if o.rubric.get(key) in ("yes", "no")]
        yes = sum(a == "yes" for a in answered)
        rubric.append(
            {
                "key": key,
                "text": text,
                "k": yes,
                "n": len(answered),
                "rate": rate(yes, len(answered)) if answered else None,
            }
        )
    return {
        "planned": planned,
        "graded": graded,
        "grades": grades,
        "rubric": rubric,
        "stratified": stratified,
    }


def _population(items: list[ItemOutcome]) -> int:
    """The stratum's population as recorded when the sample was drawn (its
    items alone when none was recorded: then the stratum is taken whole)."""
    item = items[0].item
    recorded = item.sample.strata.get(item.stratum, {}).get("population")
    return max(recorded or 0, len(items))


def version_dashboard(assistant_version: AssistantVersion, set_version: SetVersion | None) -> dict:
    scoring = version_scoring(assistant_version, set_version) if set_version else None
    samples = list(
        Sample.objects.filter(assistant_version=assistant_version).select_related("rubric_version")
    )
    if set_version is not None:
        samples = [s for s in samples if s.run is None or s.run.set_version_id == set_version.id]
    return {
        "scoring": scoring,
        "table": score_table(scoring) if scoring else [],
        "review": review_figures(samples),
        "samples": samples,
    }


def versions_chart(set_version: SetVersion) -> list[dict]:
    """Per measure, one row per assistant version with its overall rate and interval."""
    versions = list(
        AssistantVersion.objects.filter(runs__set_version=set_version, runs__status=Run.Status.STORED)
        .distinct()
        .order_by("created_at", "id")
    )
    scorings = {v.label: version_scoring(v, set_version) for v in versions}
    chart = []
    for measure in MEASURES:
        rows = []
        for version in versions:
            scoring = scorings[version.label]
            score = scoring.scores.filter(slice="all", measure=measure).first() if scoring else None
            figure = rate(score.k, score.n) if score else None
            row = {"version": version.label, "rate": figure}
            if figure is not None:
                row.update(
                    x_low=CHART_LEFT + figure.low * CHART_WIDTH,
                    x_high=CHART_LEFT + figure.high * CHART_WIDTH,
                    x_rate=CHART_LEFT + figure.value * CHART_WIDTH,
                )
            rows.append(row)
        chart.append(
            {
                "measure": measure,
                "label": MEASURE_LABELS[measure],
                "lower_is_better": measure in FAILURE_MEASURES,
                "rows": rows,
                "height": 40 + 22 * len(rows),
            }
        )
    return chart


# The chart's scale: 0 % at CHART_LEFT, 100 % at CHART_LEFT + CHART_WIDTH (SVG units).
CHART_LEFT = 190
CHART_WIDTH = 620


def question_successes(scoring: Scoring) -> dict[str, dict[str, bool]]:
    """For each measure, each question's success (a failure measure's success
    is having no unsupported number), on questions the measure applies to.
    A question the run did not answer is a failure where a question counts;
    sealed questions stay out."""
    columns = [f"{m}_{part}" for m in MEASURES for part in ("k", "n")]
    result: dict[str, dict[str, bool]] = {m: {} for m in MEASURES}
    for row in (
        AnswerCheck.objects.filter(scoring=scoring, sealed=False)
        .values_list("question_id", *columns)
        .iterator(chunk_size=20000)
    ):
        question_id, values = row[0], row[1:]
        for index, measure in enumerate(MEASURES):
            k, n = values[2 * index], values[2 * index + 1]
            if not n:
                continue
            result[measure][question_id] = (k == 0) if measure in FAILURE_MEASURES else (k == n)
    return result


@dataclass
class MeasureComparison:
    measure: str
    label: str
    paired: Paired
    baseline_all: object
    candidate_all: object
    detectable: float | None


def compare_versions(baseline: Scoring, candidate: Scoring, measures=MEASURES) -> list[MeasureComparison]:
    """Paired figures on the common questions, and each version's own figure
    on all its questions beside them."""
    base, cand = question_successes(baseline), question_successes(candidate)
    comparisons = []
    for measure in measures:
        result = paired(base[measure], cand[measure])
        discordant = result.discordant / result.n if result.n else 0.0
        comparisons.append(
            MeasureComparison(
                measure=measure,
                label=MEASURE_LABELS[measure],
                paired=result,
                baseline_all=_all_rate(baseline, measure),
                candidate_all=_all_rate(candidate, measure),
                detectable=detectable_difference(result.n, max(discordant, 0.05)) if result.n else None,
            )
        )
    return comparisons


def _all_rate(scoring: Scoring, measure: str):
    score = scoring.scores.filter(slice="all", measure=measure).first()
    return rate(score.k, score.n) if score else None


def _success_rate(scoring: Scoring, measure: str):
    """The version's own success rate on all its questions, with its interval
    (for a failure measure, the share without the failure)."""
    score = scoring.scores.filter(slice="all", measure=measure).first()
    if score is None:
        return None
    return rate(score.n - score.k if measure in FAILURE_MEASURES else score.k, score.n)


def gate(
    baseline: Scoring,
    candidate: Scoring,
    *,
    measures=("numeric_accuracy", "citation_validity", "refusal_accuracy", "unsupported_answers"),
    margin: float = gating.DEFAULT_MARGIN_POINTS / 100,
    max_drop: float | None = None,
    floors: dict[str, float] | None = None,
) -> dict:
    """Judge a candidate against a baseline as a non-inferiority decision on
    their common questions (see scoring.gate). ``margin``, ``max_drop`` and
    ``floors`` are shares. Returns the JSON answer, with the verdict, its exit
    code and every measure's figures."""
    floors = floors or {}
    results = {}
    for comparison in compare_versions(baseline, candidate, measures):
        floor = floors.get(comparison.measure)
        verdict = gating.judge_measure(
            comparison.paired,
            candidate_success=_success_rate(candidate, comparison.measure) if floor is not None else None,
            margin=margin,
            max_drop=max_drop,
            floor=floor,
        )
        results[comparison.measure] = gating.measure_report(
            comparison.paired,
            verdict,
            label=comparison.label,
            baseline_all=comparison.baseline_all,
            candidate_all=comparison.candidate_all,
            margin=margin,
        )
        if floor is not None:
            results[comparison.measure]["floor"] = floor
    outcome = gating.overall({measure: entry["verdict"] for measure, entry in results.items()})
    return {
        "baseline": baseline.run.assistant_version.label,
        "candidate": candidate.run.assistant_version.label,
        "set_version": candidate.set_version.version,
        "runs": {"baseline": baseline.run_id, "candidate": candidate.run_id},
        "questions": "the tuning part of the set: sealed questions stay out of the gate",
        "verdict": outcome,
        "passed": outcome == gating.PASS,
        "exit_code": gating.EXIT_CODES[outcome],
        "margin_points": round(margin * 100, 4),
        "max_drop_points": None if max_drop is None else round(max_drop * 100, 4),
        "alpha": gating.ALPHA,
        "bound": gating.BOUND,
        "multiplicity": gating.MULTIPLICITY,
        "measures": results,
        "not_judged": [m for m, e in results.items() if e["verdict"] == gating.CANNOT_JUDGE],
    }
