"""Reads for managers: a version's figures, versions side by side, paired
comparison of two versions, and the release gate."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from django.contrib.postgres.aggregates import BitOr
from django.db import connections, transaction
from django.db.models import Avg, Case, Count, F, Max, Q, When
from django.db.models.functions import Collate

from reviewapp.models import (
    Answer,
    AnswerCheck,
    AssistantVersion,
    JudgeRun,
    JudgeVersion,
    ModelVerdict,
    Question,
    QuestionOutcome,
    Run,
    Sample,
    SampleItem,
    Scoring,
    SetVersion,
)
from reviewapp.scorings.selectors import SEALED_PREFIX, pooled_table
from reviewapp.scorings.services import DEFAULT_SLICE_FIELDS, config_key, stable_tallies, without_questions
from scoring import gate as gating
from scoring import timing
from scoring.compare import Paired, detectable_difference, paired, paired_from_table
from scoring.measures import FAILURE_MEASURES, MEASURE_LABELS, MEASURES, merge_slice_counts
from scoring.rates import rate, severity_weighted_rate, stratified_rate
from scoring.repeats import merge_tallies, repeat_figures

DEFAULT_KEY = config_key(options={}, slice_fields=DEFAULT_SLICE_FIELDS)
GRADES = ("resolved", "partially_resolved", "material_error", "unresolved")
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
class Record:
    """A version's record on a set version (spec 004): every stored run of
    it there, linked as repeats and never replaced. Figures pool the runs
    counted (all but those excluded with a reason), or the one run chosen."""

    version: AssistantVersion
    set_version: SetVersion
    runs: list[Run]  # every stored run, oldest first
    scorings: list[Scoring]  # the default scorings whose figures are pooled
    chosen: Run | None = None

    def __bool__(self) -> bool:
        return bool(self.scorings)

    @property
    def used_runs(self) -> list[Run]:
        return [scoring.run for scoring in self.scorings]

    @property
    def excluded(self) -> list[Run]:
        return [run for run in self.runs if run.excluded_reason]

    @property
    def repetitions(self) -> int:
        """Attempts per question pooled over the runs used."""
        return sum(scoring.run.repetitions for scoring in self.scorings)

    @property
    def sources(self) -> str:
        """Which runs the figures come from, to say beside them."""
        ids = ", ".join(f"#{run.id}" for run in self.used_runs)
        if self.chosen is not None:
            return f"run {ids} alone, as chosen"
        return f"run{'s' if len(self.scorings) > 1 else ''} {ids}" + (
            " pooled as repeats" if len(self.scorings) > 1 else ""
        )


def version_record(
    assistant_version: AssistantVersion, set_version: SetVersion, *, run_id: int | None = None
) -> Record:
    """The version's record on the set version; with ``run_id``, that run's
    figures alone (excluded or not)."""
    runs = list(
        Run.objects.filter(
            assistant_version=assistant_version, set_version=set_version, status=Run.Status.STORED
        )
        .select_related("excluded_by")
        .order_by("created_at", "id")
    )
    chosen = next((run for run in runs if run.id == run_id), None) if run_id else None
    counted = [chosen] if chosen else [run for run in runs if not run.excluded_reason]
    scorings = list(
        Scoring.objects.filter(
            run__in=counted, set_version=set_version, config_key=DEFAULT_KEY, status=Scoring.Status.DONE
        )
        .select_related("run", "set_version")
        .order_by("run__created_at", "run_id")
    )
    return Record(assistant_version, set_version, runs, scorings, chosen)


def version_scoring(assistant_version: AssistantVersion, set_version: SetVersion) -> Scoring | None:
    """The latest scoring of the version's record (for exports)."""
    record = version_record(assistant_version, set_version)
    return record.scorings[-1] if record.scorings else None


def pooled_counts(record: Record) -> dict[str, dict[str, dict[str, int]]]:
    """{slice: {measure: {k, n}}} summed over the record's scorings (tuning part)."""
    return merge_slice_counts(
        *(
            {slice_name: measures}
            for scoring in record.scorings
            for slice_name, measures in _scoring_counts(scoring).items()
        )
    )


def _scoring_counts(scoring: Scoring) -> dict:
    counts: dict[str, dict] = {}
    for score in scoring.scores.exclude(slice__startswith=SEALED_PREFIX):
        counts.setdefault(score.slice, {})[score.measure] = {"k": score.k, "n": score.n}
    return counts


def record_stable(record: Record) -> dict:
    """The stable resolution over every attempt the record holds: a run's own
    when there is one, else recounted over the pooled attempts."""
    if len(record.scorings) == 1:
        return record.scorings[0].stable
    if record.repetitions < 2:
        return {}
    tallies = merge_tallies(stable_tallies(scoring) for scoring in record.scorings)
    return repeat_figures(tallies, repetitions=record.repetitions, slice_fields=("language",))


def record_timing(record: Record) -> dict:
    """Spec 004's timing over the record's runs: a run's own summary when
    there is one, else recounted over the pooled answers ("all" only)."""
    if len(record.scorings) == 1:
        return record.scorings[0].timing
    if not record.scorings:
        return {}
    rows = list(
        AnswerCheck.objects.filter(scoring__in=record.scorings, sealed=False, answer__isnull=False)
        .exclude(timing={})
        .values_list("question_id", "timing")
        .iterator(chunk_size=20000)
    )
    if not rows:
        return {}
    summary = timing.timing_summary(
        [timing.AnswerTiming(**row[1]) for row in rows], question_ids=[row[0] for row in rows]
    )
    return {"all": without_questions(summary)}


def set_versions_of(assistant_version: AssistantVersion) -> list[SetVersion]:
    return list(
        SetVersion.objects.filter(runs__assistant_version=assistant_version, runs__status=Run.Status.STORED)
        .distinct()
        .order_by("-created_at")
    )


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
    has decided it; an answer that does not address the question is unresolved."""
    from reviewapp.judges.services.validation import review_states

    items = list(SampleItem.objects.filter(sample__in=samples, answer__isnull=False).select_related("sample"))
    states = review_states(items, readers_needed=lambda item: max(1, item.sample.readers_per_item))
    results = []
    for item in items:
        weight = item.sample.strata.get(item.stratum, {}).get("weight") or 1.0
        state = states.get(item.id)
        if state is None or state.settled is None:
            results.append(ItemOutcome(item, state.state if state else "not_read", {}, weight))
            continue
        grade = "unresolved" if state.settled.grade == "not_addressed" else state.settled.grade
        results.append(ItemOutcome(item, grade, state.settled.rubric_answers, weight))
    return results


# A rubric question whose "yes" is a failure: shown as a failure rate.
FAILURE_QUESTIONS = ("unsupported_claim",)


def _passes_rubric(answers: dict[str, str]) -> bool:
    return all(
        (answer == "no") if key in FAILURE_QUESTIONS else answer in ("yes", "na")
        for key, answer in answers.items()
    )


def review_figures(samples) -> dict:
    """Outcomes against the planned N: settled grades by kind, awaiting a
    lead, pending and not yet read, with graded coverage = settled ÷ N;
    weighted by the recorded strata with a stratified interval when the
    samples were stratified; each rubric question's rate (a failure rate
    for a question whose yes is a failure) and how many settled items pass
    every rubric question."""
    outcomes = review_outcomes(samples)
    planned = len(outcomes)
    counts = Counter(o.outcome for o in outcomes)
    strata: dict[tuple[int, str], list[ItemOutcome]] = {}
    for outcome in outcomes:
        strata.setdefault((outcome.item.sample_id, outcome.item.stratum), []).append(outcome)
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
                figure["weighted"] = stratified_rate(
                    [
                        (sum(o.outcome == grade for o in items), len(items), _population(items))
                        for items in strata.values()
                    ]
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
                "kind": "failure rate" if key in FAILURE_QUESTIONS else "yes-rate",
                "k": yes,
                "n": len(answered),
                "rate": rate(yes, len(answered)) if answered else None,
            }
        )
    with_rubric = [o for o in outcomes if o.outcome in GRADES and o.rubric]
    passing = sum(_passes_rubric(o.rubric) for o in with_rubric)
    return {
        "severity": severity_figures([o for o in outcomes if o.outcome in GRADES]),
        "planned": planned,
        "graded": graded,
        "coverage": rate(graded, planned) if planned else None,
        "grades": grades,
        "rubric": rubric,
        "passes_rubric": {"k": passing, "n": len(with_rubric)},
        "stratified": stratified,
    }


def severity_figures(settled: list[ItemOutcome]) -> dict | None:
    """The material-error rate on settled items, unweighted and weighted by
    the severity weights in force (None when there are none, or nothing is
    settled), each with its own denominator: items, and their total weight."""
    from reviewapp.review.services.severity import severity_in_force

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
    return {
        "scheme": scheme,
        "unweighted": rate(sum(failures), len(failures)),
        "weighted": severity_weighted_rate(failures, weights),
        "weight_total": sum(weights),
    }


def _population(items: list[ItemOutcome]) -> int:
    """The stratum's population as recorded when the sample was drawn (its
    items alone when none was recorded: then the stratum is taken whole)."""
    item = items[0].item
    recorded = item.sample.strata.get(item.stratum, {}).get("population")
    return max(recorded or 0, len(items))


def judged_pairs(runs) -> list[tuple[int, int]]:
    """(judge run, judge version) pairs whose verdicts stand for the runs: for
    each run and judge version, its latest finished judge run only, so an
    answer graded twice by the same judge version counts once."""
    chosen: dict[tuple[int, int], int] = {}
    for judge_run in (
        JudgeRun.objects.filter(run__in=runs, status=JudgeRun.Status.DONE)
        .prefetch_related("judge_versions")
        .order_by("id")
    ):
        for version in judge_run.judge_versions.all():
            chosen[(judge_run.run_id, version.id)] = judge_run.id
    return sorted({(judge_run_id, version_id) for (_, version_id), judge_run_id in chosen.items()})


def model_grade_rows(runs) -> list[dict]:
    """Model graders' figures over every answer of ``runs``, per judge version
    and metric: for the rubric, answers graded resolved as k/n with a Wilson
    interval; for the other metrics, the mean score over the answers it is
    defined for. Each row carries the judge's label and whether it is
    validated against people; failures are counted, never dropped."""
    from reviewapp.judges.selectors import judge_label
    from reviewapp.judges.services.validation import judge_is_validated, validation_title

    pairs = judged_pairs(runs)
    if not pairs:
        return []
    chosen = Q()
    for judge_run_id, version_id in pairs:
        chosen |= Q(judge_run_id=judge_run_id, judge_version_id=version_id)
    counted = Q(error="", score__isnull=False)
    figures = (
        ModelVerdict.objects.filter(chosen)
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
            }
        )
    return rows


def head_to_head(judge_run: JudgeRun) -> list[dict]:
    """Each judge's preference between the judge run's two runs, asked in both
    orders: wins, losses and ties from the first run's side, position
    consistency, and the win rate (ties half) with a Wilson interval."""
    from reviewapp.judges.selectors import judge_label
    from scoring.judge.preference import preference_summary

    rows = []
    for version in judge_run.judge_versions.select_related("judge").order_by("judge__name", "number"):
        verdicts = ModelVerdict.objects.filter(
            judge_run=judge_run, judge_version=version, metric="preference"
        )
        labels = [labels for labels, error in verdicts.values_list("labels", "error") if not error]
        errors = verdicts.exclude(error="").count()
        rows.append({"judge": judge_label(version), **preference_summary(labels, errors=errors)})
    return rows


def panel_figures(judge_run: JudgeRun) -> list[dict]:
    """For each metric graded by two judges or more: each judge's mean, the
    panel's mean, and Krippendorff's alpha (interval) between the judges over
    the answers, with a warning below ALPHA_FLOOR: the judges then do not
    measure the same thing and their mean should not be trusted."""
    from reviewapp.judges.selectors import judge_label
    from scoring.agreement import ALPHA_FLOOR, krippendorff_alpha

    versions = list(judge_run.judge_versions.select_related("judge").order_by("judge__name", "number"))
    figures = []
    metrics = sorted({metric for version in versions for metric in version.metrics if metric != "preference"})
    for metric in metrics:
        graders = [version for version in versions if metric in version.metrics]
        if len(graders) < 2:
            continue
        scores: dict[int, dict[int, float]] = {version.id: {} for version in graders}
        for version_id, answer_id, score in ModelVerdict.objects.filter(
            judge_run=judge_run, metric=metric, error="", score__isnull=False
        ).values_list("judge_version_id", "answer_id", "score"):
            if version_id in scores:
                scores[version_id][answer_id] = score
        answers = sorted({answer_id for by_answer in scores.values() for answer_id in by_answer})
        data = [[scores[version.id].get(answer_id) for answer_id in answers] for version in graders]
        means = [
            {
                "judge": judge_label(version),
                "mean": _mean(scores[version.id].values()),
                "n": len(scores[version.id]),
            }
            for version in graders
        ]
        per_answer = (
            [[value for value in column if value is not None] for column in zip(*data, strict=True)]
            if answers
            else []
        )
        panel = [sum(values) / len(values) for values in per_answer if values]
        try:
            alpha = krippendorff_alpha(data, level="interval") if answers else None
        except (ValueError, ZeroDivisionError):
            alpha = None
        if alpha is not None and math.isnan(alpha):
            alpha = None
        figures.append(
            {
                "metric": metric,
                "judges": means,
                "panel_mean": sum(panel) / len(panel) if panel else None,
                "alpha": alpha,
                "items": sum(1 for values in per_answer if len(values) >= 2),
                "warning": alpha is not None and alpha < ALPHA_FLOOR,
                "floor": ALPHA_FLOOR,
            }
        )
    return figures


def _mean(values) -> float | None:
    values = list(values)
    return sum(values) / len(values) if values else None


def version_dashboard(
    assistant_version: AssistantVersion, set_version: SetVersion | None, *, run_id: int | None = None
) -> dict:
    record = version_record(assistant_version, set_version, run_id=run_id) if set_version else None
    samples = list(
        Sample.objects.filter(assistant_version=assistant_version).select_related("rubric_version")
    )
    if set_version is not None:
        samples = [s for s in samples if s.run is None or s.run.set_version_id == set_version.id]
    return {
        "record": record,
        "scoring": record.scorings[-1] if record else None,
        "table": pooled_table(pooled_counts(record)) if record else [],
        "stable": record_stable(record) if record else {},
        "timing": record_timing(record) if record else {},
        "review": review_figures(samples),
        "samples": samples,
        "model_grades": model_grade_rows(record.used_runs) if record else [],
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
            figure = rate(score["k"], score["n"]) if score else None
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


def question_successes(record: Record) -> dict[str, dict[str, bool]]:
    """For each measure, each question's success over every attempt of the
    record (it succeeds only when every attempt does; a failure measure's
    success is having no unsupported number), on questions the measure
    applies to. An attempt not run is a failure where a question counts;
    sealed questions stay out. (The compare page and the gate count their
    tables in the database, by paired_tables, which is tested against this.)"""
    columns = [f"{m}_{part}" for m in MEASURES for part in ("k", "n")]
    result: dict[str, dict[str, bool]] = {m: {} for m in MEASURES}
    for row in (
        AnswerCheck.objects.filter(scoring__in=record.scorings, sealed=False)
        .values_list("question_id", *columns)
        .iterator(chunk_size=20000)
    ):
        question_id, values = row[0], row[1:]
        for index, measure in enumerate(MEASURES):
            k, n = values[2 * index], values[2 * index + 1]
            if not n:
                continue
            success = (k == 0) if measure in FAILURE_MEASURES else (k == n)
            result[measure][question_id] = result[measure].get(question_id, True) and success
    return result


@dataclass
class MeasureComparison:
    measure: str
    label: str
    paired: Paired
    baseline_all: object
    candidate_all: object
    detectable: float | None
    resolved: Paired | None = None  # on the questions both resolved in every attempt


# The measures whose success makes a question "resolved" (resolved_questions).
RESOLVING_MEASURES = ("numeric_accuracy", "refusal_accuracy")


def resolved_questions(successes: dict[str, dict[str, bool]]) -> set[str]:
    """Questions resolved in every attempt: the right number when an answer
    was expected, a refusal when one was."""
    return {
        question_id
        for measure in RESOLVING_MEASURES
        for question_id, success in successes[measure].items()
        if success
    }


Table = tuple[tuple[int, int], tuple[int, int]]


def paired_tables(baseline: Record, candidate: Record, measures=MEASURES) -> dict[str, tuple[Table, Table]]:
    """For each of ``measures``, the table ``paired`` makes from the two
    records' ``question_successes``: on their common questions, and on those
    of them both versions resolved in every attempt (``resolved_questions``).

    Counted in the database in one query over the scorings' stored question
    outcomes (QuestionOutcome), so that a million questions a side need no
    loop here: each question's outcomes on each side (over the side's
    scorings: a measure succeeds only when every attempt does), then how
    many questions share each combination; a few dozen come back. A scoring
    in both records counts on both sides, as it does in
    ``question_successes``."""
    sides = {"baseline": [s.id for s in baseline.scorings], "candidate": [s.id for s in candidate.scorings]}
    empty = ((0, 0), (0, 0))
    if not sides["baseline"] or not sides["candidate"]:
        return {measure: (empty, empty) for measure in measures}
    outcomes = QuestionOutcome.objects.filter(scoring_id__in=[*sides["baseline"], *sides["candidate"]])
    database = connections[outcomes.db]
    # Grouping needs equality only, and equal text is equal bytes in any
    # deterministic collation. PostgreSQL sorts to group, by the database's
    # locale unless told otherwise: at a million questions a side, 1.1 s
    # against 0.3 s bytewise.
    question = Collate("question_id", "C") if database.vendor == "postgresql" else F("question_id")
    per_question = (
        outcomes.values(question=question)
        .annotate(
            **{side: _side_outcomes(scoring_ids, database.vendor) for side, scoring_ids in sides.items()}
        )
        .order_by()
    )
    # Grouping by the outcomes needs them as the columns of a subquery,
    # which the ORM does not write: the subquery is the ORM's, the outer
    # query plain SQL.
    inner, params = per_question.query.sql_with_params()
    with transaction.atomic(using=database.alias), database.cursor() as cursor:
        if database.vendor == "postgresql":
            # PostgreSQL's JIT compiles this query for longer than it saves.
            cursor.execute("SET LOCAL jit = off")
        cursor.execute(
            f"SELECT baseline, candidate, COUNT(*) FROM ({inner}) per_question GROUP BY baseline, candidate",
            params,
        )
        combinations = cursor.fetchall()

    indexes = {measure: MEASURES.index(measure) for measure in (*measures, *RESOLVING_MEASURES)}
    tables = {measure: [[0, 0], [0, 0]] for measure in measures}
    on_resolved = {measure: [[0, 0], [0, 0]] for measure in measures}
    for base_bits, cand_bits, questions in combinations:
        if base_bits is None or cand_bits is None:
            continue  # a question one side does not hold
        base = {m: QuestionOutcome.outcome(base_bits, index) for m, index in indexes.items()}
        cand = {m: QuestionOutcome.outcome(cand_bits, index) for m, index in indexes.items()}
        resolved = all(any(side[m] == 1 for m in RESOLVING_MEASURES) for side in (base, cand))
        for measure in measures:
            if base[measure] is None or cand[measure] is None:
                continue
            # Row 0 holds the baseline's successes, column 0 the candidate's.
            tables[measure][1 - base[measure]][1 - cand[measure]] += questions
            if resolved:
                on_resolved[measure][1 - base[measure]][1 - cand[measure]] += questions
    return {measure: (_as_table(tables[measure]), _as_table(on_resolved[measure])) for measure in measures}


def _side_outcomes(scoring_ids: list[int], vendor: str):
    """A question's QuestionOutcome.outcomes over a side's scorings: their
    bitwise OR (NULL when the side does not hold the question). Databases
    without a bitwise aggregate take each bit's MAX, twelve aggregates."""
    of_side = Q(scoring_id__in=scoring_ids)
    if vendor == "postgresql":
        return BitOr(Case(When(of_side, then=F("outcomes"))))
    return sum(
        Max(Case(When(of_side, then=F("outcomes") / 2**bit % 2))) * 2**bit for bit in range(2 * len(MEASURES))
    )


def _as_table(cells: list[list[int]]) -> Table:
    return (tuple(cells[0]), tuple(cells[1]))


def compare_versions(baseline: Record, candidate: Record, measures=MEASURES) -> list[MeasureComparison]:
    """Paired figures on the common questions and on the common subset both
    versions resolved in every attempt (spec 004), and each version's own
    figure on all its questions beside them."""
    tables = paired_tables(baseline, candidate, measures)
    base_all, cand_all = pooled_counts(baseline).get("all", {}), pooled_counts(candidate).get("all", {})
    comparisons = []
    for measure in measures:
        on_common, on_resolved = tables[measure]
        result = paired_from_table(on_common)
        discordant = result.discordant / result.n if result.n else 0.0
        comparisons.append(
            MeasureComparison(
                measure=measure,
                label=MEASURE_LABELS[measure],
                paired=result,
                baseline_all=_rate_of(base_all.get(measure)),
                candidate_all=_rate_of(cand_all.get(measure)),
                detectable=detectable_difference(result.n, max(discordant, 0.05)) if result.n else None,
                resolved=paired_from_table(on_resolved),
            )
        )
    return comparisons


def judge_question_successes(record: Record, judge_version: JudgeVersion) -> dict[str, bool]:
    """Each question's success by a judge's rubric grade over every attempt of
    the record: it succeeds only when the judge graded every attempt
    resolved. An attempt without an answer (timeout, error) fails; an answer
    the judge could not grade leaves the question out; sealed questions stay out."""
    pairs = [
        judge_run_id
        for judge_run_id, version_id in judged_pairs(record.used_runs)
        if version_id == judge_version.id
    ]
    sealed = set(record.set_version.questions.filter(split="sealed").values_list("question_id", flat=True))
    successes: dict[str, bool] = {}
    ungraded: set[str] = set()
    for question_id, score, error in ModelVerdict.objects.filter(
        judge_run_id__in=pairs, judge_version=judge_version, metric="rubric"
    ).values_list("answer__question_id", "score", "error"):
        if error or score is None:
            ungraded.add(question_id)
            continue
        successes[question_id] = successes.get(question_id, True) and score == 1.0
    for question_id in (
        Answer.objects.filter(run__in=record.used_runs)
        .exclude(status=Answer.Status.OK)
        .values_list("question_id", flat=True)
    ):
        successes[question_id] = False
    return {q: ok for q, ok in successes.items() if q not in sealed and q not in ungraded}


def compare_judges(baseline: Record, candidate: Record) -> tuple[list[MeasureComparison], list[str]]:
    """Paired comparisons by each validated judge that graded the rubric on
    both versions' runs, and the labels of the judges that graded both but
    are not validated (shown by name only: never as a measure)."""
    from reviewapp.judges.selectors import judge_label
    from reviewapp.judges.services.validation import judge_is_validated

    base_ids = {version_id for _, version_id in judged_pairs(baseline.used_runs)}
    cand_ids = {version_id for _, version_id in judged_pairs(candidate.used_runs)}
    comparisons, unvalidated = [], []
    for version in JudgeVersion.objects.filter(id__in=base_ids & cand_ids).select_related("judge"):
        if "rubric" not in version.metrics:
            continue
        if not judge_is_validated(version):
            unvalidated.append(judge_label(version))
            continue
        result = paired(
            judge_question_successes(baseline, version), judge_question_successes(candidate, version)
        )
        discordant = result.discordant / result.n if result.n else 0.0
        comparisons.append(
            MeasureComparison(
                measure=f"judge:{version.judge.name}",
                label=f"graded resolved by {judge_label(version)}",
                paired=result,
                baseline_all=None,
                candidate_all=None,
                detectable=detectable_difference(result.n, max(discordant, 0.05)) if result.n else None,
            )
        )
    return comparisons, unvalidated


def _rate_of(counts: dict | None):
    return rate(counts["k"], counts["n"]) if counts else None


def _success_rate(record: Record, measure: str):
    """The version's own success rate on all its questions, with its interval
    (for a failure measure, the share without the failure)."""
    counts = pooled_counts(record).get("all", {}).get(measure)
    if counts is None:
        return None
    return rate(counts["n"] - counts["k"] if measure in FAILURE_MEASURES else counts["k"], counts["n"])


def gate(
    baseline: Record,
    candidate: Record,
    *,
    measures=("numeric_accuracy", "citation_validity", "refusal_accuracy", "unsupported_answers"),
    margin: float = gating.DEFAULT_MARGIN_POINTS / 100,
    max_drop: float | None = None,
    floors: dict[str, float] | None = None,
    max_p90_s: float | None = None,
    max_timeout_rate: float | None = None,
    judge_version: JudgeVersion | None = None,
) -> dict:
    """Judge a candidate against a baseline as a non-inferiority decision on
    their common questions (see scoring.gate). ``margin``, ``max_drop`` and
    ``floors`` are shares; ``max_p90_s`` holds the candidate's end-to-end P90
    and ``max_timeout_rate`` its timeout rate. Returns the JSON answer, with
    the verdict, its exit code and every measure's figures, each on all
    paired questions and on the subset both resolved in every attempt."""
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
        subset = comparison.resolved
        results[comparison.measure]["on_resolved_subset"] = {
            "n": subset.n,
            "table": [list(row) for row in subset.table],
            "difference_points": None if subset.difference is None else round(subset.difference * 100, 4),
            "low_points": None if subset.low is None else round(subset.low * 100, 4),
            "high_points": None if subset.high is None else round(subset.high * 100, 4),
            "note": "the questions both versions resolved in every attempt; shown, not judged",
        }
    if judge_version is not None:
        from reviewapp.judges.selectors import judge_label

        judged = paired(
            judge_question_successes(baseline, judge_version),
            judge_question_successes(candidate, judge_version),
        )
        verdict = gating.judge_measure(judged, candidate_success=None, margin=margin, max_drop=max_drop)
        results[f"judge:{judge_version.judge.name}"] = gating.measure_report(
            judged,
            verdict,
            label=f"graded resolved by {judge_label(judge_version)}, validated against people",
            baseline_all=None,
            candidate_all=None,
            margin=margin,
        )
    if max_p90_s is not None or max_timeout_rate is not None:
        base_timing = record_timing(baseline).get("all")
        cand_timing = record_timing(candidate).get("all")
        if max_p90_s is not None:
            results["e2e_p90"] = gating.judge_p90(cand_timing, base_timing, max_p90_s=max_p90_s)
        if max_timeout_rate is not None:
            results["timeout_rate"] = gating.judge_timeouts(
                cand_timing, base_timing, max_rate=max_timeout_rate
            )
    outcome = gating.overall({measure: entry["verdict"] for measure, entry in results.items()})
    return {
        "baseline": baseline.version.label,
        "candidate": candidate.version.label,
        "set_version": candidate.set_version.version,
        "runs": {
            "baseline": [run.id for run in baseline.used_runs],
            "candidate": [run.id for run in candidate.used_runs],
            "excluded": {
                "baseline": {run.id: run.excluded_reason for run in baseline.excluded},
                "candidate": {run.id: run.excluded_reason for run in candidate.excluded},
            },
        },
        "questions": "the tuning part of the set: sealed questions stay out of the gate",
        "attempts_per_question": {"baseline": baseline.repetitions, "candidate": candidate.repetitions},
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
