"""Reads for managers: a version's figures, versions side by side, paired
comparison of two versions, and the release gate."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from django.db.models import Avg, Count, Q

from reviewapp.judges.selectors import judge_label, mean_fields, score_means
from reviewapp.judges.validation import judge_is_validated, review_states, validation_title
from reviewapp.models import (
    Answer,
    AssistantVersion,
    JudgeVersion,
    ModelVerdict,
    Question,
    Run,
    Sample,
    SampleItem,
    SetVersion,
)
from reviewapp.review.models import GRADES
from reviewapp.review.selectors import FAILING_YES, answer_passes, counted_grade, severity_in_force
from reviewapp.scorings.selectors import pooled_table
from reviewapp.versions.records import (
    judged_pairs,
    pooled_counts,
    record_stable,
    record_timing,
    version_record,
)
from scoring.measures import FAILURE_MEASURES, MEASURE_LABELS, MEASURES, NOT_APPLICABLE
from scoring.resolution import stable_from_grades
from scoring.stats.rates import (
    CLUSTER_METHOD,
    Rate,
    WeightedRate,
    counted_rate,
    rate,
    severity_weighted_rate,
    stratified_domain_rate,
)

STATES = ("awaiting_lead", "pending", "not_read")
GRADE_LABELS = {
    "resolved": "resolved",
    "partially_resolved": "partially resolved",
    "material_error": "material error",
    "unresolved": "unresolved",
    "awaiting_lead": "awaiting lead",
    "pending": "pending verification",
    "not_read": "not yet read",
}
# What each count means, shown beside it.
MEANINGS = {
    "resolved": "settled: a lead decided it, or every reader agreed and nothing needs a lead",
    "partially_resolved": "settled by a lead: correct but incomplete",
    "material_error": "confirmed by a lead: a wrong core conclusion, figure or evidence",
    "unresolved": "settled: does not answer the request (including answers that miss the question)",
    "awaiting_lead": "read, but readers disagree or it needs a lead (material error, partial, borderline)",
    "pending": "the deciding fact cannot be checked yet: never a pass or a fail",
    "not_read": "not yet read by every reader the sample asks for",
}


@dataclass
class ItemOutcome:
    item: SampleItem
    # A settled grade, "awaiting_lead", "pending" or "not_read".
    outcome: str
    rubric: dict[str, str]
    weight: float


def review_outcomes(samples) -> list[ItemOutcome]:
    """Each real (not calibration) item's place against the planned N: its
    settled grade (a lead's decision, or every reader the sample asks for
    agreeing on an item that needs no lead), or awaiting a lead, pending
    verification, or not yet read. A material error counts only once a lead
    has decided it; an answer that does not address the question is unresolved.

    An answer drawn into several of ``samples`` counts once, so that it
    cannot weigh double: by its first settled item (the oldest sample's
    first), else its first item."""
    items = list(
        SampleItem.objects.filter(sample__in=samples, answer__isnull=False)
        .select_related("sample")
        .order_by("sample__created_at", "sample_id", "position")
    )
    states = review_states(items, readers_needed=lambda item: max(1, item.sample.readers_per_item))
    results: dict[int, ItemOutcome] = {}
    for item in items:
        weight = item.sample.strata.get(item.stratum, {}).get("weight") or 1.0
        state = states.get(item.id)
        if state is None or state.settled is None:
            outcome = ItemOutcome(item, state.state if state else "not_read", {}, weight)
        else:
            grade = counted_grade(state.settled.grade)
            outcome = ItemOutcome(item, grade, state.settled.rubric_answers, weight)
        held = results.get(item.answer_id)
        if held is None or (held.outcome not in GRADES and outcome.outcome in GRADES):
            results[item.answer_id] = outcome
    return list(results.values())


# A rubric question whose "yes" is a failure: shown as a failure rate.
def _passes_rubric(answers: dict[str, str]) -> bool:
    """Every answer given passes (review.selectors.answer_passes); questions left
    unanswered are not counted against it."""
    return all(answer_passes(key, answer) for key, answer in answers.items())


def review_figures(samples) -> dict:
    """Outcomes against the planned N: settled grades by kind, awaiting a
    lead, pending and not yet read, with graded coverage = settled ÷ N; each
    rubric question's rate (a failure rate for a question whose yes is a
    failure) and the share of settled items that pass every rubric question;
    the material-error rates of ``severity_figures``.

    When the samples were stratified (more than one stratum), every one of
    these figures is also given ``weighted`` by the recorded strata
    (``stratum_weighted``), and the sample's own unweighted figure stays
    beside it: the page shows it as "sample, unweighted"."""
    outcomes = review_outcomes(samples)
    planned = len(outcomes)
    counts = Counter(o.outcome for o in outcomes)
    strata = outcome_strata(outcomes)
    stratified = len(strata) > 1
    grades = []
    for grade in (*GRADES, *STATES):
        k = counts.get(grade, 0)
        figure = {
            "grade": grade,
            "label": GRADE_LABELS[grade],
            "meaning": MEANINGS[grade],
            "k": k,
            "n": planned,
        }
        if planned:
            figure["rate"] = rate(k, planned)
            if stratified:
                figure["weighted"] = stratum_weighted(
                    strata, counted=lambda o: True, succeeded=lambda o, grade=grade: o.outcome == grade
                )
        grades.append(figure)
    graded = sum(counts.get(g, 0) for g in GRADES)
    keys = []
    for sample in samples:
        for question in sample.rubric_version.questions.all():
            if question.key not in [k for k, _ in keys]:
                keys.append((question.key, question.text))
    rubric = []
    for key, text in keys:
        answered = [o.rubric[key] for o in outcomes if o.rubric.get(key) in ("yes", "no")]
        yes = sum(a == "yes" for a in answered)
        rubric.append(
            {
                "key": key,
                "text": text,
                "kind": "failure rate" if key in FAILING_YES else "yes-rate",
                "k": yes,
                "n": len(answered),
                # Left out of n: the question did not apply (shown beside it).
                "not_applicable": sum(o.rubric.get(key) == "na" for o in outcomes),
                "rate": rate(yes, len(answered)) if answered else None,
                "weighted": stratum_weighted(
                    strata,
                    counted=lambda o, key=key: o.rubric.get(key) in ("yes", "no"),
                    succeeded=lambda o, key=key: o.rubric[key] == "yes",
                )
                if stratified
                else None,
            }
        )
    with_rubric = [o for o in outcomes if _has_rubric(o)]
    passing = sum(_passes_rubric(o.rubric) for o in with_rubric)
    return {
        "severity": severity_figures([o for o in outcomes if o.outcome in GRADES], strata=strata),
        "planned": planned,
        # Items of the samples; above ``planned`` when an answer was drawn into several.
        "items": SampleItem.objects.filter(sample__in=samples, answer__isnull=False).count(),
        "graded": graded,
        "coverage": rate(graded, planned) if planned else None,
        "grades": grades,
        "rubric": rubric,
        "passes_rubric": {
            "k": passing,
            "n": len(with_rubric),
            "rate": rate(passing, len(with_rubric)) if with_rubric else None,
            "weighted": stratum_weighted(
                strata, counted=_has_rubric, succeeded=lambda o: _passes_rubric(o.rubric)
            )
            if stratified
            else None,
        },
        "stratified": stratified,
    }


def _has_rubric(outcome: ItemOutcome) -> bool:
    """A settled item with rubric answers: what "passes every rubric question" counts."""
    return outcome.outcome in GRADES and bool(outcome.rubric)


def outcome_strata(outcomes: list[ItemOutcome]) -> dict[tuple, list[ItemOutcome]]:
    """The items of each stratum of each population the samples were drawn
    from, by (frame, strata fields, stratum, its recorded population).

    Samples of one run (or of one version between the same dates) drawn by
    the same strata are draws from one population: each stratum's items of
    all of them are one stratum, whose population counts once. Keyed by
    sample instead, three samples of a run counted its answers three times
    and weighted a 30-item sample as much as an 80-item one (issue 25)."""
    strata: dict[tuple, list[ItemOutcome]] = {}
    for outcome in outcomes:
        item = outcome.item
        sample = item.sample
        recorded = sample.strata.get(item.stratum, {}).get("population")
        key = (_frame_of(sample), tuple(sample.strata_fields), item.stratum, recorded)
        strata.setdefault(key, []).append(outcome)
    return strata


def _frame_of(sample) -> tuple:
    """The population a sample was drawn from: its run, or its assistant
    version's runs between its two dates."""
    if sample.run_id is not None:
        return ("run", sample.run_id)
    return ("version", sample.assistant_version_id, sample.frame_from, sample.frame_to)


def stratum_weighted(strata: dict, *, counted, succeeded, weight_of=None) -> WeightedRate | None:
    """The share of the items ``counted`` (a domain: every item, the settled
    ones, those that answered a rubric question) that ``succeeded``,
    weighted by the recorded strata: the one definition of every weighted
    figure of a stratified sample (``stratified_domain_rate``: each
    stratum's domain counts by its estimated size, its recorded population
    times the share of its sampled items in the domain, with Korn and
    Graubard's interval). With ``weight_of`` (an item's severity weight),
    each stratum's items are split by their weight and each part counts by
    its estimated size times that weight; a stratum without a counted item
    widens the interval to what its unsampled items could hold. None when no
    item is counted."""
    cells = []
    multipliers = []
    empty = []
    for items in strata.values():
        by_weight: dict[float, list[ItemOutcome]] = {}
        for outcome in items:
            if counted(outcome):
                by_weight.setdefault(weight_of(outcome) if weight_of else 1.0, []).append(outcome)
        if not by_weight:
            empty.append(items)
        for weight, part in by_weight.items():
            cells.append((sum(bool(succeeded(o)) for o in part), len(part), len(items), _population(items)))
            multipliers.append(weight)
    if not cells:
        return None
    # A stratum with no counted item: its unsampled items may hold the
    # domain at any rate (stratified_domain_rate bounds it), at the heaviest
    # weight in use, since its items' own are unknown.
    heaviest = max(multipliers)
    for items in empty:
        cells.append((0, 0, len(items), _population(items)))
        multipliers.append(heaviest)
    return stratified_domain_rate(cells, multipliers=multipliers if weight_of else None)


def severity_figures(settled: list[ItemOutcome], *, strata: dict | None = None) -> dict | None:
    """The material-error rate on settled items, unweighted and weighted by
    the severity weights in force (None when there are none, or nothing is
    settled), each with its own denominator: items, and their total weight.

    With ``strata`` of a stratified sample (more than one), both use the
    strata's weights too, through ``stratum_weighted`` and its stratified
    interval: ``stratified`` is the material-error rate weighted by strata,
    and ``weighted`` counts each item by its severity weight times its
    stratum's weight (population over items sampled); ``unweighted`` and
    ``severity_only`` (severity weights alone, Kish's effective n) are the
    sample's own figures, shown beside them as "sample, unweighted". (In a
    simulation over bench/coverage_strata.py's designs, Wilson's interval on
    Kish's effective n of the combined weights covered as little as 85 %.)"""
    scheme = severity_in_force()
    if scheme is None or not settled:
        return None
    if scheme.field == "language":
        values = [o.item.answer.language for o in settled]
    else:
        answers = Answer.objects.filter(id__in=[o.item.answer_id for o in settled]).select_related("run")
        questions = {
            (row["set_version_id"], row["question_id"]): row["stratum"]
            for row in Question.objects.filter(
                set_version_id__in={answer.run.set_version_id for answer in answers},
                question_id__in={answer.question_id for answer in answers},
            ).values("set_version_id", "question_id", "stratum")
        }
        by_answer = {
            answer.id: questions.get((answer.run.set_version_id, answer.question_id)) for answer in answers
        }
        values = [by_answer.get(o.item.answer_id) for o in settled]
    weights = [scheme.weight_of(value) for value in values]
    failures = [o.outcome == "material_error" for o in settled]
    figures = {
        "scheme": scheme,
        "unweighted": rate(sum(failures), len(failures)),
        "weighted": severity_weighted_rate(failures, weights),
        "weight_total": sum(weights),
        "stratified": None,
        "severity_only": None,
    }
    if strata is not None and len(strata) > 1:
        severity = {o.item.id: weight for o, weight in zip(settled, weights, strict=True)}

        def settled_item(outcome: ItemOutcome) -> bool:
            return outcome.item.id in severity

        def material(outcome: ItemOutcome) -> bool:
            return outcome.outcome == "material_error"

        figures.update(
            stratified=stratum_weighted(strata, counted=settled_item, succeeded=material),
            severity_only=figures["weighted"],
            weighted=stratum_weighted(
                strata, counted=settled_item, succeeded=material, weight_of=lambda o: severity[o.item.id]
            ),
        )
    return figures


def _population(items: list[ItemOutcome]) -> int:
    """The stratum's population as recorded when its samples were drawn (its
    items alone when none was recorded: then the stratum is taken whole)."""
    recorded = max(o.item.sample.strata.get(o.item.stratum, {}).get("population") or 0 for o in items)
    return max(recorded, len(items))


def model_grade_rows(runs) -> list[dict]:
    """Model graders' figures over every answer of ``runs``, per judge version
    and metric: for the rubric, answers graded resolved as k/n with a Wilson
    interval; for the other metrics, the mean score over the answers it is
    defined for, with its interval (judges.selectors.score_means, answers
    clustered by question). Each row carries the judge's label and whether it is
    validated against people; failures are counted, never dropped."""
    pairs = judged_pairs(runs)
    if not pairs:
        return []
    chosen = Q()
    for judge_run_id, version_id in pairs:
        chosen |= Q(judge_run_id=judge_run_id, judge_version_id=version_id)
    counted = Q(error="", score__isnull=False)
    figures = (
        ModelVerdict.objects.shown()
        .filter(chosen)
        .values("judge_version_id", "metric")
        .annotate(
            n=Count("id", filter=counted),
            k=Count("id", filter=counted & Q(score=1.0)),
            mean=Avg("score", filter=counted),
            failures=Count("id", filter=~Q(error="")),
            undefined=Count("id", filter=Q(error="", score__isnull=True)),
        )
        .order_by("judge_version_id", "metric")
    )
    versions = {
        version.id: version
        for version in JudgeVersion.objects.filter(id__in={v for _, v in pairs}).select_related("judge")
    }
    means = score_means(ModelVerdict.objects.shown().filter(chosen))
    rows = []
    for figure in figures:
        version = versions[figure["judge_version_id"]]
        rubric = figure["metric"] == "rubric"
        rows.append(
            {
                **figure,
                "judge": judge_label(version),
                "validated": judge_is_validated(version),
                "title": validation_title(version),
                "rate": rate(figure["k"], figure["n"]) if rubric and figure["n"] else None,
                "measure": "graded resolved by the judge" if rubric else figure["metric"].replace("_", " "),
                **mean_fields(None if rubric else means.get((version.id, figure["metric"]))),
            }
        )
    return rows


def version_samples(
    assistant_version: AssistantVersion, set_version: SetVersion | None, *, chosen: list[int] | None = None
) -> list[Sample]:
    """Every sample of the version (of a run on ``set_version`` when one is
    given, or of a frame of dates), newest first, each with ``counted``:
    whether the review figures count it. With ``chosen`` (sample ids), the
    samples among them; without, those drawn for review, never a judge's
    regrade sample or the items a lead decided to validate a judge on."""
    samples = list(
        Sample.objects.filter(assistant_version=assistant_version).select_related("rubric_version", "run")
    )
    if set_version is not None:
        samples = [s for s in samples if s.run is None or s.run.set_version_id == set_version.id]
    for sample in samples:
        sample.counted = (
            sample.id in chosen if chosen is not None else sample.purpose == Sample.Purpose.REVIEW
        )
    return samples


def version_dashboard(
    assistant_version: AssistantVersion,
    set_version: SetVersion | None,
    *,
    run_id: int | None = None,
    sample_ids: list[int] | None = None,
) -> dict:
    """The dashboard's figures: the version record's automatic measures and
    the review figures of the samples counted (``version_samples``)."""
    record = version_record(assistant_version, set_version, run_id=run_id) if set_version else None
    samples = version_samples(assistant_version, set_version, chosen=sample_ids)
    counted = [s for s in samples if s.counted]
    return {
        "record": record,
        "scoring": record.scorings[-1] if record and record.scorings else None,
        "table": pooled_table(pooled_counts(record)) if record else [],
        "stable": record_stable(record) if record else {},
        "timing": record_timing(record) if record else {},
        "review": review_figures(counted),
        "samples": samples,
        "counted_samples": counted,
        "model_grades": model_grade_rows(record.used_runs) if record else [],
        "graded_stable": graded_stable({assistant_version.label: record}, {assistant_version.label: counted})
        if record
        else {},
    }


def versions_chart(set_version: SetVersion) -> list[dict]:
    """Per measure, one row per assistant version with its overall rate and interval."""
    versions = list(
        AssistantVersion.objects.filter(runs__set_version=set_version, runs__status=Run.Status.STORED)
        .distinct()
        .order_by("created_at", "id")
    )
    counts = {v.label: pooled_counts(version_record(v, set_version)).get("all", {}) for v in versions}
    chart = []
    for measure in MEASURES:
        rows = []
        for version in versions:
            score = counts[version.label].get(measure)
            figure = counted_rate(score) if score else None
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
                "empty_reason": NOT_APPLICABLE[measure],
                "rows": rows,
                "height": 40 + 22 * len(rows),
            }
        )
    return chart


def timing_chart(set_version: SetVersion) -> dict:
    """Per assistant version with timing on the set, its end-to-end times
    (from timestamps where logged) on a log scale: min, P50, P90 and max as
    SVG x positions, with n and the timeout count."""
    versions = list(
        AssistantVersion.objects.filter(runs__set_version=set_version, runs__status=Run.Status.STORED)
        .distinct()
        .order_by("created_at", "id")
    )
    rows = []
    for version in versions:
        overall = record_timing(version_record(version, set_version)).get("all")
        if not overall or not overall["e2e"]["by_source"]:
            continue
        source, figure = next(iter(overall["e2e"]["by_source"].items()))
        rows.append(
            {"version": version.label, "source": source, "figure": figure, "failures": overall["failures"]}
        )
    if not rows:
        return {}
    low = max(min(row["figure"]["min"] for row in rows), 0.01)
    high = max(row["figure"]["max"] for row in rows)
    span = math.log10(high / low) or 1.0

    def x(seconds: float) -> float:
        return CHART_LEFT + CHART_WIDTH * math.log10(max(seconds, low) / low) / span

    for row in rows:
        figure = row["figure"]
        row.update(
            x_min=x(figure["min"]), x_p50=x(figure["p50"]), x_p90=x(figure["p90"]), x_max=x(figure["max"])
        )
    ticks = [t for t in (0.1, 0.3, 1, 3, 10, 30, 100, 300, 1000, 3000) if low <= t <= high]
    return {
        "rows": rows,
        "ticks": [{"label": f"{t:g} s", "x": x(t)} for t in ticks],
        "height": 50 + 24 * len(rows),
    }


# The chart's scale: 0 % at CHART_LEFT, 100 % at CHART_LEFT + CHART_WIDTH (SVG units).
CHART_LEFT = 190
CHART_WIDTH = 620


# How the intervals of the dashboard's unweighted figures were made.
WILSON_METHOD = "Wilson, 95 %"


def dashboard_figure_rows(figures: dict) -> list[dict]:
    """The figures a version's dashboard shows (``version_dashboard``), one
    labelled row each, as its CSV and JSON exports give them: the automatic
    measures by slice, then the review figures of the samples counted, each
    unweighted ("sample, unweighted") and, for a stratified sample, weighted
    by strata beside it. Every row has k and n, the effective n its
    interval was made on (n itself where the units are independent), the
    rate, its interval and how it was made; a weighted row keeps the
    sample's k and n, and its rate is the weighted estimate. Numbers stay
    unrounded here: the CSV rounds them."""
    rows: list[dict] = []
    record = figures["record"]
    source = record.sources if record else ""

    def add(section, slice_name, figure, basis, value, *, k, n, measure="", origin=source):
        clustered = isinstance(value, Rate) and value.clustered
        weighted = isinstance(value, WeightedRate)
        rows.append(
            {
                "section": section,
                "slice": slice_name,
                "figure": figure,
                "measure": measure,
                "basis": basis,
                "from": origin,
                "k": k,
                "n": n,
                "effective_n": value.effective_n if clustered or weighted else n,
                "rate": value.value,
                "low": value.low,
                "high": value.high,
                "interval": value.method if weighted else CLUSTER_METHOD if clustered else WILSON_METHOD,
                "unrepresented_weight": value.unrepresented if weighted else 0.0,
            }
        )

    for row in figures["table"]:
        for cell in row.cells:
            if cell.rate is not None:
                basis = "attempts, clustered by question" if cell.rate.clustered else "units"
                add(
                    "automatic measures",
                    row.slice,
                    MEASURE_LABELS[cell.measure],
                    basis,
                    cell.rate,
                    k=cell.rate.k,
                    n=cell.rate.n,
                    measure=cell.measure,
                )
    review = figures["review"]
    if not review["planned"]:
        return rows
    counted = ", ".join(f"#{sample.id}" for sample in figures["counted_samples"])
    origin = f"sample{'s' if len(figures['counted_samples']) > 1 else ''} {counted}"
    unweighted = "sample, unweighted" if review["stratified"] else "sample"

    def pair(figure, k, n, plain, weighted, measure=""):
        if plain is not None:
            add("review", "all", figure, unweighted, plain, k=k, n=n, measure=measure, origin=origin)
        if weighted is not None:
            add(
                "review",
                "all",
                figure,
                "weighted by strata",
                weighted,
                k=k,
                n=n,
                measure=measure,
                origin=origin,
            )

    pair("graded coverage", review["graded"], review["planned"], review["coverage"], None)
    for grade in review["grades"]:
        pair(
            f"outcome: {grade['label']}",
            grade["k"],
            grade["n"],
            grade.get("rate"),
            grade.get("weighted"),
            grade["grade"],
        )
    passing = review["passes_rubric"]
    pair("passes every rubric question", passing["k"], passing["n"], passing["rate"], passing["weighted"])
    for question in review["rubric"]:
        pair(
            f"rubric {question['kind']}: {question['text']}",
            question["k"],
            question["n"],
            question["rate"],
            question["weighted"],
            question["key"],
        )
    severity = review["severity"]
    if severity:
        plain = severity["unweighted"]
        pair("material error on settled items", plain.k, plain.n, plain, severity["stratified"])
        if severity["stratified"] is None:
            add(
                "review",
                "all",
                "material error on settled items",
                "severity-weighted",
                severity["weighted"],
                k=plain.k,
                n=plain.n,
                origin=origin,
            )
        else:
            add(
                "review",
                "all",
                "material error on settled items",
                "severity-weighted, sample unweighted by strata",
                severity["severity_only"],
                k=plain.k,
                n=plain.n,
                origin=origin,
            )
            add(
                "review",
                "all",
                "material error on settled items",
                "severity-weighted, weighted by strata",
                severity["weighted"],
                k=plain.k,
                n=plain.n,
                origin=origin,
            )
    return rows


# Where an attempt's grade comes from, in the order one is taken.
GRADE_SOURCES = ("settled human grade", "validated judge", "no answer (graded unresolved)")


def attempt_grades(record, samples) -> tuple[dict[str, list[str | None]], Counter]:
    """Each tuning question's grade in each attempt of the record's runs: the
    settled human grade of ``samples`` (review_outcomes), else the latest
    rubric grade of a judge version validated for the grade
    (judge_is_validated, label "grade"), else None (not yet known); an
    attempt with no answer (timeout, error) is graded unresolved (spec 004).
    Returns the grades by question and how many attempts each source graded."""
    human = {o.item.answer_id: o.outcome for o in review_outcomes(samples) if o.outcome in GRADES}
    validated = [
        (judge_run_id, version_id)
        for judge_run_id, version_id in judged_pairs(record.used_runs)
        if judge_is_validated(JudgeVersion.objects.get(id=version_id), label="grade")
    ]
    judged: dict[int, str] = {}
    for judge_run_id, version_id in validated:
        for answer_id, labels in (
            ModelVerdict.objects.filter(
                judge_run_id=judge_run_id, judge_version_id=version_id, metric="rubric", error=""
            )
            .order_by("created_at", "id")
            .values_list("answer_id", "labels")
        ):
            if isinstance(labels, dict) and labels.get("grade") in GRADES:
                judged.setdefault(answer_id, labels["grade"])
    tuning = Question.objects.filter(set_version=record.set_version, split="tuning").values("question_id")
    grades: dict[str, list[str | None]] = {}
    sources: Counter = Counter()
    for answer_id, question_id, status in (
        Answer.objects.filter(run__in=record.used_runs, question_id__in=tuning)
        .order_by("run_id", "attempt")
        .values_list("id", "question_id", "status")
    ):
        if answer_id in human:
            grade, source = human[answer_id], GRADE_SOURCES[0]
        elif answer_id in judged:
            grade, source = judged[answer_id], GRADE_SOURCES[1]
        elif status != Answer.Status.OK:
            grade, source = "unresolved", GRADE_SOURCES[2]
        else:
            grade, source = None, None
        grades.setdefault(question_id, []).append(grade)
        if source:
            sources[source] += 1
    return grades, sources


def graded_stable(records: dict, samples: dict) -> dict:
    """Stable resolution from grades (scoring.resolution) for each setup of
    ``records`` ({label: Record}), graded by attempt_grades on that label's
    ``samples``: per setup k of Q with its Wilson interval, the questions not
    yet known and how many attempts each source graded; with two or more
    setups, the common subset every setup fully resolved in every attempt.
    Each setup is held to the attempts it made; with one attempt everywhere,
    only the one-attempt note."""
    repetitions = {label: record.repetitions for label, record in records.items() if record}
    if not repetitions or len(repetitions) < len(records):
        return {}
    if all(r == 1 for r in repetitions.values()):
        # Only the one-attempt note: no attempt's grade is read (a million
        # answers' took the dashboard 3.6 s).
        return stable_from_grades({label: {} for label in repetitions}, repetitions=repetitions)
    grades, sources = {}, {}
    for label, record in records.items():
        grades[label], sources[label] = attempt_grades(record, samples[label])
    figures = stable_from_grades(grades, repetitions=repetitions)
    for label, figure in figures.get("setups", {}).items():
        figure["rate"] = rate(figure["k"], figure["n"]) if figure["n"] and figure["k"] is not None else None
        figure["sources"] = [(source, sources[label][source]) for source in GRADE_SOURCES]
    return figures


def versions_graded_stable(set_version: SetVersion, versions: list[AssistantVersion]) -> dict:
    """graded_stable for several versions on one set version, each on its
    record and the samples its review figures count (version_samples), with
    their common subset when there are two or more."""
    records = {version.label: version_record(version, set_version) for version in versions}
    samples = {
        version.label: [s for s in version_samples(version, set_version) if s.counted] for version in versions
    }
    return graded_stable(records, samples)
