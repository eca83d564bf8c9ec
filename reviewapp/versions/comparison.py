"""Two versions compared on their common questions: which questions each
resolved, the paired 2x2 tables per measure (counted in the database), and
the paired difference with its interval for every measure and judge."""

from dataclasses import dataclass

from django.contrib.postgres.aggregates import BitOr
from django.db import connections, transaction
from django.db.models import Case, F, Max, Q, When
from django.db.models.functions import Collate

from reviewapp.judges.selectors import judge_label
from reviewapp.judges.validation import judge_is_validated
from reviewapp.models import (
    Answer,
    AnswerCheck,
    JudgeVersion,
    ModelVerdict,
    QuestionOutcome,
)
from reviewapp.versions.records import Record, judged_pairs, pooled_counts
from scoring.measures import FAILURE_MEASURES, MEASURE_LABELS, MEASURES
from scoring.stats.paired import Paired, Table, detectable, paired, paired_from_table
from scoring.stats.rates import counted_rate


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

    @property
    def resolved_by_construction(self) -> bool:
        """Whether both versions succeed on this measure on every question of
        the resolved subset by its very definition (SUCCEED_WHEN_RESOLVED):
        its difference there is 0 by construction and compares nothing."""
        return self.measure in SUCCEED_WHEN_RESOLVED

    @property
    def untested_direction(self) -> bool:
        """Whether the paired difference points one way while its interval
        holds 0: its sign is an untested direction (spec 004)."""
        return untested_direction(self.paired)

    @property
    def resolved_untested_direction(self) -> bool:
        """The same on the resolved subset (never for a measure it decides)."""
        return not self.resolved_by_construction and untested_direction(self.resolved)


def untested_direction(result: Paired | None) -> bool:
    """A difference other than 0 whose interval holds 0: the data point one
    way without showing it, which spec 004 labels an untested direction."""
    return bool(result and result.n) and result.difference != 0 and result.low <= 0 <= result.high


# The measures whose success makes a question "resolved" (resolved_questions).
RESOLVING_MEASURES = ("numeric_accuracy", "refusal_accuracy")
# On questions both versions resolved in every attempt, these succeed for both
# every time: the resolving measure itself, and the answer rate, since the
# right number is never a declined answer (scoring.measures.check_answer).
SUCCEED_WHEN_RESOLVED = (*RESOLVING_MEASURES, "answer_rate")


def resolved_questions(successes: dict[str, dict[str, bool]]) -> set[str]:
    """Questions resolved in every attempt: the right number when an answer
    was expected, a refusal when one was."""
    return {
        question_id
        for measure in RESOLVING_MEASURES
        for question_id, success in successes[measure].items()
        if success
    }


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
        comparisons.append(
            MeasureComparison(
                measure=measure,
                label=MEASURE_LABELS[measure],
                paired=result,
                baseline_all=_rate_of(base_all.get(measure)),
                candidate_all=_rate_of(cand_all.get(measure)),
                detectable=detectable(result),
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
        comparisons.append(
            MeasureComparison(
                measure=f"judge:{version.judge.name}",
                label=f"graded resolved by {judge_label(version)}",
                paired=result,
                baseline_all=None,
                candidate_all=None,
                detectable=detectable(result),
            )
        )
    return comparisons, unvalidated


def _rate_of(counts: dict | None):
    return counted_rate(counts) if counts else None
