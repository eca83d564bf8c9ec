"""Scoring a stored run against a set version with the scoring library.

A scoring is planned into chunks of answers; each chunk is checked by its own
task, so that every running worker takes a share, and the task that finishes
the last chunk adds the slice counts up.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict

import orjson
from django.conf import settings
from django.db import connection, connections, transaction
from django.db.models import Case, Count, F, Max, Q, Value, When
from django.utils import timezone

from reviewapp import tasks
from reviewapp.core import audit, work
from reviewapp.core.bulk import insert_rows, refresh_statistics
from reviewapp.core.errors import ApplicationError
from reviewapp.models import (
    Answer,
    AnswerCheck,
    Finding,
    Question,
    QuestionOutcome,
    Run,
    Score,
    Scoring,
    ScoringChunk,
    SetVersion,
)
from reviewapp.scorings import selectors
from reviewapp.scorings.selectors import (
    DEFAULT_SLICE_FIELDS,
    SEALED_PREFIX,
    AttemptCounts,
    config_key,
    count_attempts,
    stable_tallies,
    without_questions,
)
from scoring import timing
from scoring.measures import (
    COUNT_COLUMNS,
    FAILURE_MEASURES,
    MEASURES,
    Options,
    check_answer,
    merge_slice_counts,
    not_run_check,
    slice_counts,
)
from scoring.repeats import repeat_figures, with_question_clusters
from scoring.runner import TIMING_FIELDS, gc_paused

logger = logging.getLogger(__name__)


def part_slices(tuning: dict, sealed: dict) -> dict:
    """One slice dict holding both parts, the sealed one under its prefix."""
    return {**tuning, **{SEALED_PREFIX + name: measures for name, measures in sealed.items()}}


def scoring_create(
    *,
    run: Run,
    set_version: SetVersion,
    options: Options | None = None,
    slice_fields=DEFAULT_SLICE_FIELDS,
    requested_by=None,
) -> Scoring:
    """The scoring of ``run`` against ``set_version`` with these options and
    slices, made once: an existing one is returned as it is."""
    options_dict = (options or Options()).as_dict()
    scoring, _ = Scoring.objects.get_or_create(
        run=run,
        set_version=set_version,
        config_key=config_key(options=options_dict, slice_fields=slice_fields),
        defaults={
            "requested_by": requested_by,
            "options": options_dict,
            "slice_fields": list(slice_fields),
        },
    )
    return scoring


def scoring_request(
    *,
    run: Run,
    set_version: SetVersion,
    options: Options | None = None,
    extra_slices=(),
    requested_by=None,
) -> Scoring:
    """Queue a scoring of ``run``; one that exists already is returned as it
    is (results are never made twice), and sent on its way if it is stuck."""
    if run.status != Run.Status.STORED:
        raise ApplicationError(f"run {run.id} has no stored answers to score ({run.status})")
    slice_fields = tuple(dict.fromkeys([*DEFAULT_SLICE_FIELDS, *extra_slices]))
    with transaction.atomic():
        scoring = scoring_create(
            run=run,
            set_version=set_version,
            options=options,
            slice_fields=slice_fields,
            requested_by=requested_by,
        )
        if (scoring.status == Scoring.Status.QUEUED and not scoring.queued_at) or selectors.scoring_is_stuck(
            scoring
        ):
            transaction.on_commit(lambda: _send_on(scoring))
    return scoring


def _send_on(scoring: Scoring) -> None:
    """Queue whatever part of the scoring waits: its planning, or its chunks."""
    scoring.refresh_from_db()
    if not scoring.chunks_total:
        queue_scoring(scoring.id)
    for chunk_id in scoring.chunks.filter(status=ScoringChunk.Status.QUEUED).values_list("id", flat=True):
        tasks.queue_chunk(chunk_id)


def scoring_retry(*, scoring: Scoring) -> bool:
    """Plan a scoring again from the start, with its attempts counted afresh,
    when it failed or is stuck (see selectors.scoring_is_stuck); False otherwise,
    and at once when a worker's transaction holds the scoring's row."""
    scoring.refresh_from_db()
    if scoring.status != Scoring.Status.FAILED and not selectors.scoring_is_stuck(scoring):
        return False
    if work.held_by_a_transaction(Scoring, scoring.id):
        return False  # a worker's transaction holds it: moving, not stuck (and the page must not wait)
    reset = Scoring.objects.filter(id=scoring.id, status=scoring.status, attempts=scoring.attempts).update(
        status=Scoring.Status.QUEUED,
        error="",
        progress=0,
        chunks_total=0,
        chunks_done=0,
        attempts=0,
        lease_until=None,
    )
    if reset:
        transaction.on_commit(lambda: queue_scoring(scoring.id))
    return bool(reset)


def queue_scoring(scoring_id: int) -> None:
    tasks.queue_plan(scoring_id)


def scoring_plan(*, scoring_id: int) -> Scoring | None:
    """Cut the run's answers into chunks and queue a task for each. Returns
    None when the scoring was not there to plan (a repeated task is a no-op).
    Rows of an earlier attempt are removed first. The claim is leased, and a
    planner that died is replaced once the lease runs out (its transaction
    left nothing)."""
    attempt = work.claim(
        Scoring,
        pk=scoring_id,
        waiting=Q(status=Scoring.Status.QUEUED),
        working=Scoring.Status.SCORING,
        progress=0,
        started_at=timezone.now(),
        finished_at=None,
    )
    if attempt is None:
        return None
    try:
        return _plan(scoring_id, attempt)
    except Exception as error:
        if work.is_transient(error):
            work.release(Scoring, pk=scoring_id, attempt=attempt, waiting=Scoring.Status.QUEUED)
        raise


def _plan(scoring_id: int, attempt: int) -> Scoring | None:
    scoring = Scoring.objects.select_related("run").get(id=scoring_id)
    size = settings.SCORING_CHUNK_ANSWERS
    with transaction.atomic():
        fenced = Scoring.objects.select_for_update().filter(
            id=scoring_id, attempts=attempt, status=Scoring.Status.SCORING, chunks_total=0
        )
        if not fenced.exists():
            return None
        for model in (ScoringChunk, AnswerCheck, Finding, Score, QuestionOutcome):
            model.objects.filter(scoring=scoring).delete()
        chunks = ScoringChunk.objects.bulk_create(
            ScoringChunk(scoring=scoring, first_line=first, last_line=last)
            for first, last in _chunk_ranges(scoring.run_id, size)
        )
        scoring.chunks_total = len(chunks)
        scoring.chunks_done = 0
        scoring.lease_until = None  # from here on the chunks hold the leases
        scoring.save(update_fields=("chunks_total", "chunks_done", "lease_until"))
        if not chunks:
            _finish(scoring)
        for chunk in chunks:
            transaction.on_commit(lambda chunk_id=chunk.id: tasks.queue_chunk(chunk_id))
    return scoring


def _chunk_ranges(run_id: int, size: int) -> list[tuple[int, int]]:
    """(first line, last line) of each chunk of the run: at most ``size``
    lines, each opening at an answer's line, together every line of the run.
    Found by a look-up of the (run, line) index per chunk, so that planning
    a million answers reads a few dozen rows (numbering every answer in the
    database took 3.8 s)."""
    answers = Answer.objects.filter(run_id=run_id)
    last_line = answers.order_by("-line_number").values_list("line_number", flat=True).first()
    if last_line is None:
        return []
    firsts, boundary = [], 0
    while boundary < last_line:
        # The first answer's line after the boundary: a range of question
        # lines (the combined form's) makes no empty chunk.
        first = (
            answers.filter(line_number__gt=boundary)
            .order_by("line_number")
            .values_list("line_number", flat=True)
            .first()
        )
        firsts.append(first)
        boundary = first - 1 + size
    followings = [*firsts[1:], last_line + 1]
    return [(first, following - 1) for first, following in zip(firsts, followings, strict=True)]


def scoring_chunk_perform(*, chunk_id: int) -> ScoringChunk | None:
    """Check one chunk of answers, store its checks and findings, and add the
    scoring up when it was the last. None when the chunk was not there to
    take (done, or alive with another worker). The claim is leased and fenced
    as for a run's ingest: doing a chunk twice stores it once. A transient
    database error gives the claim back and is raised, for the task to retry."""
    attempt = work.claim(
        ScoringChunk,
        pk=chunk_id,
        waiting=Q(status=ScoringChunk.Status.QUEUED),
        working=ScoringChunk.Status.SCORING,
    )
    if attempt is None:
        return None
    chunk = None
    try:
        # Read inside the try: a cut right after the claim gives it back too.
        chunk = ScoringChunk.objects.select_related("scoring__set_version", "scoring__run").get(id=chunk_id)
        with gc_paused(), work.lease_kept(ScoringChunk, pk=chunk_id, attempt=attempt):
            _score_chunk(chunk, chunk.scoring, attempt)
    except Exception as error:
        if work.is_transient(error):
            work.release(ScoringChunk, pk=chunk_id, attempt=attempt, waiting=ScoringChunk.Status.QUEUED)
            raise
        logger.exception("scoring chunk %s failed", chunk_id)
        message = f"{type(error).__name__}: {error}"
        ScoringChunk.objects.filter(id=chunk_id).update(status=ScoringChunk.Status.FAILED, error=message)
        Scoring.objects.filter(chunks__id=chunk_id).exclude(status=Scoring.Status.FAILED).update(
            status=Scoring.Status.FAILED, error=message
        )
    return chunk


# A chunk's counts that _finish needs besides its slices, kept in its slices
# under a key no slice can have (slices are "all" and "field=value").
CHUNK_TALLY = "~tally"


def _score_chunk(chunk: ScoringChunk, scoring: Scoring, attempt: int) -> None:
    options = Options(**scoring.options)
    slice_fields = tuple(scoring.slice_fields)
    repetitions = scoring.run.repetitions
    answers, questions = _chunk_answers(chunk, scoring)
    checks = {False: [], True: []}  # by sealed
    check_rows, finding_rows = [], []
    unmatched = 0
    # What count_attempts, the sealed count and _not_run would otherwise
    # read back from every check of the scoring.
    tally = {"scored": 0, "failed": 0, "sealed": 0, "attempts_in_range": 0}
    # What adding up would otherwise read back from every check: each
    # question's outcomes in the tuning part, and its timing by language.
    outcomes: dict[str, int] = {}
    timings = selectors.ChunkTiming()
    for answer_id, line_number, question_id, language, status, attempt_number, raw in answers:
        question = questions.get(question_id)
        if question is None:
            unmatched += 1
            continue
        sealed = question["split"] == Question.Split.SEALED
        record = orjson.loads(raw)
        # Its numbers are read again when the answer is shown (selectors.check_numbers).
        check = check_answer(record, question, slice_fields=slice_fields, options=options, keep_numbers=False)
        checks[sealed].append(check)
        if not sealed:
            outcomes[question_id] = outcomes.get(question_id, 0) | QuestionOutcome.of_counts(check.counts)
            if not _TIMING_FIELDS.isdisjoint(record):
                # The line was checked when stored: its timestamps are parsed, not checked
                # again (a quarter of the chunk's time through timing_errors).
                timings.add(language, question_id, timing.timing_row(record, timing.checked_moments(record)))
        check_rows.append(
            (
                scoring.id,
                answer_id,
                question_id,
                sealed,
                *check.counts,
            )
        )
        finding_rows += [
            (scoring.id, answer_id, f.kind, f.detail, sealed, line_number, question_id, language)
            for f in check.findings
        ]
        if sealed:
            tally["sealed"] += 1
        elif status == Answer.Status.OK:
            tally["scored"] += 1
        else:
            tally["failed"] += 1
        if 1 <= attempt_number <= repetitions:
            tally["attempts_in_range"] += 1
    slices = part_slices(
        slice_counts(checks[False], slice_fields=slice_fields),
        slice_counts(checks[True], slice_fields=slice_fields),
    )
    with transaction.atomic():
        # The fence: only the attempt that holds the chunk stores its rows.
        if (
            not ScoringChunk.objects.select_for_update()
            .filter(id=chunk.id, attempts=attempt, status=ScoringChunk.Status.SCORING)
            .exists()
        ):
            return
        _store_checks(check_rows, finding_rows)
        _store_outcomes(scoring.id, outcomes)
        chunk.status = ScoringChunk.Status.DONE
        chunk.lease_until = None
        chunk.slices = {**slices, CHUNK_TALLY: tally}
        chunk.unmatched_answers = unmatched
        chunk.answers = len(answers)
        chunk.timing = timings.to_bytes()
        chunk.save(
            update_fields=("status", "slices", "unmatched_answers", "answers", "timing", "lease_until")
        )
        # The update locks the scoring row: exactly one chunk sees the last count.
        Scoring.objects.filter(id=scoring.id).update(chunks_done=F("chunks_done") + 1)
        scoring = Scoring.objects.select_for_update().select_related("run", "set_version").get(id=scoring.id)
        scoring.progress = min(99, 100 * scoring.chunks_done // max(scoring.chunks_total, 1))
        scoring.save(update_fields=("progress",))
        if scoring.chunks_done == scoring.chunks_total and scoring.status == Scoring.Status.SCORING:
            _finish(scoring)


QUESTION_FIELDS = ("question_id", "expected_behaviour", "expected_values", "stratum", "split")


# Each answer's question, by PostgreSQL looked up answer by answer (the set
# holds each id once): joined plainly, it read each chunk with a parallel
# plan, two more processes on the cores the other workers' chunks need.
_QUESTION_JOIN = {
    False: "LEFT JOIN {} q ON q.set_version_id = %s AND q.question_id = a.question_id",
    True: "LEFT JOIN LATERAL (SELECT * FROM {} q WHERE q.set_version_id = %s "
    "AND q.question_id = a.question_id LIMIT 1) q ON true",
}


def _chunk_answers(chunk: ScoringChunk, scoring: Scoring) -> tuple[list[tuple], dict[str, dict]]:
    """The chunk's answers in line order, as (id, line, question id, language,
    status, attempt, raw), and the set version's questions among them, as
    check_answer takes them: read together, one look-up of each answer's
    question in the database (a list of ids to match took it three times as long)."""
    answer_table = connection.ops.quote_name(Answer._meta.db_table)
    question_table = connection.ops.quote_name(Question._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT a.id, a.line_number, a.question_id, a.language, a.status, a.attempt, a.raw, "
            f"q.expected_behaviour, q.expected_values, q.stratum, q.split FROM {answer_table} a "
            f"{_QUESTION_JOIN[connection.vendor == 'postgresql'].format(question_table)} "
            "WHERE a.run_id = %s AND a.line_number BETWEEN %s AND %s ORDER BY a.line_number",
            [scoring.set_version_id, scoring.run_id, chunk.first_line, chunk.last_line],
        )
        rows = cursor.fetchall()
    questions = {}
    for row in rows:
        # No behaviour: the set version has no such question.
        if row[7] is not None and row[2] not in questions:
            # expected_values read as JSONField reads it, so that values are the same objects.
            questions[row[2]] = dict(
                zip(QUESTION_FIELDS, (row[2], row[7], json.loads(row[8]), *row[9:]), strict=True)
            )
    return [row[:7] for row in rows], questions


# A check's numbers and timing JSON are left null: the numbers are read again
# when the answer is shown, and the chunk keeps its answers' timing as
# columns (ScoringChunk.timing); checks stored before hold them.
CHECK_COLUMNS = ("scoring_id", "answer_id", "question_id", "sealed", *COUNT_COLUMNS)
FINDING_COLUMNS = (
    "scoring_id", "answer_id", "kind", "detail", "sealed", "line_number", "question_id", "language",
)  # fmt: skip


def _store_checks(check_rows: list[tuple], finding_rows: list[tuple]) -> None:
    insert_rows(AnswerCheck, CHECK_COLUMNS, check_rows)
    insert_rows(Finding, FINDING_COLUMNS, finding_rows)


def _store_outcomes(scoring_id: int, outcomes: dict[str, int]) -> None:
    insert_rows(
        QuestionOutcome,
        ("scoring_id", "question_id", "outcomes"),
        ((scoring_id, question_id, bits) for question_id, bits in outcomes.items()),
    )


def _not_run(scoring: Scoring) -> tuple[dict, int]:
    """Store a check and a finding for each attempt the run did not make of
    each question of the set version (R of them, less those it holds), and
    return their slice counts and how many of them are of the tuning part."""
    slice_fields = tuple(scoring.slice_fields)
    repetitions = scoring.run.repetitions
    question_table = connection.ops.quote_name(Question._meta.db_table)
    answer_table = connection.ops.quote_name(Answer._meta.db_table)
    # Each question's attempts counted once for all, not once per question.
    query = (
        "SELECT q.question_id, q.language, q.expected_behaviour, q.expected_values, q.stratum, q.split, "
        "COALESCE(m.made, 0) "
        f"FROM {question_table} q LEFT JOIN ("
        f"SELECT question_id, COUNT(*) AS made FROM {answer_table} WHERE run_id = %s GROUP BY question_id"
        ") m ON m.question_id = q.question_id "
        "WHERE q.set_version_id = %s AND COALESCE(m.made, 0) < %s ORDER BY q.id"
    )
    names = ("question_id", "language", "expected_behaviour", "expected_values", "stratum", "split", "made")
    checks = {False: [], True: []}
    check_rows, finding_rows = [], []
    outcomes: dict[str, int] = {}
    with connection.cursor() as cursor:
        cursor.execute(query, [scoring.run_id, scoring.set_version_id, repetitions])
        for batch in iter(lambda: cursor.fetchmany(20000), []):
            for values in batch:
                question = dict(zip(names, values, strict=True))
                # Numeric accuracy counts a question only with an expected number.
                question["expected_values"] = json.loads(question["expected_values"])
                sealed = question["split"] == Question.Split.SEALED
                for _ in range(repetitions - question["made"]):
                    check = not_run_check(question, slice_fields=slice_fields)
                    checks[sealed].append(check)
                    check_rows.append((scoring.id, None, question["question_id"], sealed, *check.counts))
                    if not sealed:
                        question_id = question["question_id"]
                        outcomes[question_id] = outcomes.get(question_id, 0) | QuestionOutcome.of_counts(
                            check.counts
                        )
                    language = question["language"]
                    finding_rows += [
                        (scoring.id, None, f.kind, f.detail, sealed, None, f.question_id, language)
                        for f in check.findings
                    ]
    _store_checks(check_rows, finding_rows)
    _store_outcomes(scoring.id, outcomes)
    scoring.not_run = len(check_rows)
    slices = part_slices(
        slice_counts(checks[False], slice_fields=slice_fields),
        slice_counts(checks[True], slice_fields=slice_fields),
    )
    return slices, len(checks[False])


def _repeated(scoring: Scoring, totals: dict) -> tuple[dict, dict]:
    """With R >= 2, the stable resolution of the tuning part per language,
    stratum and split slice (see scoring.repeats), and the totals with each
    measure's cluster sums made over questions rather than answers, so that a
    question's attempts count as the one draw they are (over the clusters the
    set names, when it names some); for single runs of a set naming none, no
    stable resolution and the totals as they are (each answer its own cluster)."""
    repetitions = scoring.run.repetitions
    cluster_of = selectors.question_clusters(scoring)
    if repetitions < 2 and not cluster_of:
        return {}, totals
    slice_fields = selectors.clustered_slice_fields(scoring)
    tuning = {name: measures for name, measures in totals.items() if not name.startswith(SEALED_PREFIX)}
    sealed = {
        name.removeprefix(SEALED_PREFIX): measures
        for name, measures in totals.items()
        if name.startswith(SEALED_PREFIX)
    }
    tallies = stable_tallies(scoring, slice_fields=slice_fields)
    sealed_tallies = stable_tallies(scoring, slice_fields=slice_fields, sealed=True) if sealed else {}
    clustered = part_slices(
        with_question_clusters(tuning, tallies, slice_fields=slice_fields, cluster_of=cluster_of),
        with_question_clusters(sealed, sealed_tallies, slice_fields=slice_fields, cluster_of=cluster_of),
    )
    return repeat_figures(tallies, repetitions=repetitions, slice_fields=slice_fields), clustered


_TIMING_FIELDS = frozenset(TIMING_FIELDS)


def _timing(scoring: Scoring, chunks: list[ScoringChunk]) -> dict:
    """Spec 004's timing summary of the tuning part for "all" and each
    language, with each question's median when attempts repeat; empty when
    no line logged any timing."""
    by_language = selectors.timing_columns(scoring, chunks)
    if not by_language:
        return {}
    repeated = scoring.run.repetitions > 1
    languages = sorted(by_language)
    everything = timing.TimingColumns()
    for language in languages:
        everything.extend(by_language[language][0])
    # "all" holds the languages one after the other, their question ids in
    # the same order: every figure is of the values whatever their order.
    groups = [("all", everything, [q for lang in languages for q in by_language[lang][1]])]
    groups += [(f"language={lang}", *by_language[lang]) for lang in languages]
    return {
        name: without_questions(timing.timing_summary(table, question_ids=ids if repeated else None))
        for name, table, ids in groups
    }


def _finish(scoring: Scoring) -> None:
    """Count the questions not run and add the chunks' slice counts up into
    the scoring's scores."""
    # What the chunks wrote by COPY, before the queries that add it up.
    refresh_statistics(AnswerCheck, QuestionOutcome, Finding)
    chunks = list(scoring.chunks.all())
    parts = [dict(chunk.slices) for chunk in chunks]
    tallies = [part.pop(CHUNK_TALLY, None) for part in parts]
    # Chunks stored before the tallies were kept have none: count from the rows then.
    tallied = all(tally is not None for tally in tallies)
    questions, tuning_questions = _question_counts(scoring)
    repetitions = scoring.run.repetitions
    if tallied and sum(tally["attempts_in_range"] for tally in tallies) == questions * repetitions:
        # Each question has all R attempts: the run holds one answer per
        # question and attempt (a unique constraint), and as many answers
        # with attempts 1 to R as there are pairs.
        not_run, tuning_not_run = {}, 0
        scoring.not_run = 0
    else:
        not_run, tuning_not_run = _not_run(scoring)
    scoring.stable, totals = _repeated(scoring, merge_slice_counts(*parts, not_run))
    scoring.timing = _timing(scoring, chunks)
    if any(chunk.timing is None for chunk in chunks):
        # Chunks checked before they stored their questions' outcomes:
        # every question's from the checks, replacing those some stored.
        QuestionOutcome.objects.filter(scoring=scoring).delete()
        store_question_outcomes([scoring.id])
    if tallied:
        scoring.attempt_counts = asdict(
            AttemptCounts(
                questions=tuning_questions,
                repetitions=repetitions,
                scored=sum(tally["scored"] for tally in tallies),
                failed=sum(tally["failed"] for tally in tallies),
                not_run=tuning_not_run,
            )
        )
        scoring.sealed_answers = sum(tally["sealed"] for tally in tallies)
    else:
        scoring.attempt_counts = asdict(count_attempts(scoring))
        scoring.sealed_answers = AnswerCheck.objects.filter(
            scoring=scoring, sealed=True, answer__isnull=False
        ).count()
    Score.objects.bulk_create(
        Score(
            scoring=scoring, slice=slice_name, measure=measure, k=c["k"], n=c["n"], clusters=c.get("clusters")
        )
        for slice_name, measures in totals.items()
        for measure, c in measures.items()
    )
    scoring.status = Scoring.Status.DONE
    scoring.progress = 100
    scoring.unmatched_answers = sum(chunk.unmatched_answers for chunk in chunks)
    scoring.finished_at = timezone.now()
    scoring.save(
        update_fields=(
            "status",
            "progress",
            "unmatched_answers",
            "not_run",
            "sealed_answers",
            "finished_at",
            "stable",
            "timing",
            "attempt_counts",
        )
    )


def store_question_outcomes(scoring_ids: list[int], *, checks=AnswerCheck, outcomes=QuestionOutcome) -> None:
    """Store each question's outcomes (QuestionOutcome) in each of the
    scorings, from their checks of the tuning part, in one statement. The
    models are parameters for the migration that fills in the scorings added
    up before outcomes were stored."""
    per_question = (
        checks.objects.filter(scoring_id__in=scoring_ids, sealed=False)
        .values("scoring_id", "question_id")
        .annotate(outcomes=sum(_outcome_bits(index, measure) for index, measure in enumerate(MEASURES)))
        .order_by()
    )
    inner, params = per_question.query.sql_with_params()
    database = connections[per_question.db]
    names = ", ".join(map(database.ops.quote_name, ("scoring_id", "question_id", "outcomes")))
    with database.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {database.ops.quote_name(outcomes._meta.db_table)} ({names}) "
            f"SELECT {names} FROM ({inner}) per_question",
            params,
        )


def _outcome_bits(index: int, measure: str):
    """The measure's two bits of QuestionOutcome.outcomes over a question's
    checks: set when one of them applies (n > 0), and when one fails (a
    failure measure's check fails with k > 0, any other's with k < n)."""
    applies, fails = QuestionOutcome.bits(index)
    if measure in FAILURE_MEASURES:
        failed = Q(**{f"{measure}_k__gt": 0})
    else:
        failed = Q(**{f"{measure}_k__lt": F(f"{measure}_n")})
    applied = Q(**{f"{measure}_n__gt": 0})
    return Max(Case(When(applied, then=Value(applies)), default=Value(0))) + Max(
        Case(When(applied & failed, then=Value(fails)), default=Value(0))
    )


def _question_counts(scoring: Scoring) -> tuple[int, int]:
    """The set version's questions, and those of its tuning part."""
    counts = Question.objects.filter(set_version_id=scoring.set_version_id).aggregate(
        questions=Count("id"), tuning=Count("id", filter=~Q(split=Question.Split.SEALED))
    )
    return counts["questions"], counts["tuning"]


def scoring_open_sealed(*, scoring: Scoring, opened_by, reason: str) -> Scoring:
    """Open the sealed part of a scoring: its figures and findings are shown
    from now on, labelled as the sealed part. Records who, when and why;
    refuses an empty reason. Opening twice keeps the first record."""
    reason = reason.strip()
    if not reason:
        raise ApplicationError("say why the sealed part is opened: the reason is kept with the scoring")
    opened = Scoring.objects.filter(id=scoring.id, sealed_opened_at__isnull=True).update(
        sealed_opened_by=opened_by, sealed_opened_at=timezone.now(), sealed_reason=reason
    )
    if opened:
        audit.record(scoring, {"sealed part opened": ("", reason)})
    scoring.refresh_from_db()
    return scoring
