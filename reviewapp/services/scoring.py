"""Scoring a stored run against a set version with the scoring library.

A scoring is planned into chunks of answers; each chunk is checked by its own
task, so that every running worker takes a share, and the task that finishes
the last chunk adds the slice counts up.
"""

from __future__ import annotations

import logging
from dataclasses import asdict

import orjson
from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from reviewapp.models import (
    Answer,
    AnswerCheck,
    Finding,
    Question,
    Run,
    Score,
    Scoring,
    ScoringChunk,
    SetVersion,
)
from reviewapp.services import work
from reviewapp.services.bulk import insert_rows
from reviewapp.services.uploads import UploadRejected
from scoring import timing
from scoring.measures import (
    COUNT_COLUMNS,
    Options,
    check_answer,
    merge_slice_counts,
    not_run_check,
    slice_counts,
)
from scoring.repeats import QuestionTally, repeat_figures
from scoring.runner import TIMING_FIELDS, gc_paused

logger = logging.getLogger(__name__)

# Slices every scoring keeps, so that the run page can show any of them.
DEFAULT_SLICE_FIELDS = ("language", "stratum", "split")

# Slices of the sealed part are stored under this prefix: no page, export or
# gate that reads "all" or "language=…" can pick them up by accident.
SEALED_PREFIX = "sealed:"


def part_slices(tuning: dict, sealed: dict) -> dict:
    """One slice dict holding both parts, the sealed one under its prefix."""
    return {**tuning, **{SEALED_PREFIX + name: measures for name, measures in sealed.items()}}


def config_key(*, options: dict, slice_fields) -> str:
    switched_on = ",".join(sorted(name for name, value in options.items() if value))
    return f"options={switched_on};slices={','.join(slice_fields)}"


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
        raise UploadRejected(f"run {run.id} has no stored answers to score ({run.status})")
    slice_fields = tuple(dict.fromkeys([*DEFAULT_SLICE_FIELDS, *extra_slices]))
    with transaction.atomic():
        scoring = scoring_create(
            run=run,
            set_version=set_version,
            options=options,
            slice_fields=slice_fields,
            requested_by=requested_by,
        )
        if (scoring.status == Scoring.Status.QUEUED and not scoring.queued_at) or work.scoring_is_stuck(
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
        work.queue_chunk(chunk_id)


def scoring_retry(*, scoring: Scoring) -> bool:
    """Plan a scoring again from the start, with its attempts counted afresh,
    when it failed or is stuck (see work.scoring_is_stuck); False otherwise."""
    scoring.refresh_from_db()
    if scoring.status != Scoring.Status.FAILED and not work.scoring_is_stuck(scoring):
        return False
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
    work.queue_plan(scoring_id)


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
        for model in (ScoringChunk, AnswerCheck, Finding, Score):
            model.objects.filter(scoring=scoring).delete()
        ids = list(Answer.objects.filter(run=scoring.run).order_by("id").values_list("id", flat=True))
        chunks = ScoringChunk.objects.bulk_create(
            ScoringChunk(
                scoring=scoring,
                first_answer_id=ids[start],
                last_answer_id=ids[min(start + size, len(ids)) - 1],
                answers=min(size, len(ids) - start),
            )
            for start in range(0, len(ids), size)
        )
        scoring.chunks_total = len(chunks)
        scoring.chunks_done = 0
        scoring.lease_until = None  # from here on the chunks hold the leases
        scoring.save(update_fields=("chunks_total", "chunks_done", "lease_until"))
        if not chunks:
            _finish(scoring)
        for chunk in chunks:
            transaction.on_commit(lambda chunk_id=chunk.id: work.queue_chunk(chunk_id))
    return scoring


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
    chunk = ScoringChunk.objects.select_related("scoring__set_version").get(id=chunk_id)
    scoring = chunk.scoring
    try:
        with gc_paused(), work.lease_kept(ScoringChunk, pk=chunk.id, attempt=attempt):
            _score_chunk(chunk, scoring, attempt)
    except Exception as error:
        if work.is_transient(error):
            work.release(ScoringChunk, pk=chunk.id, attempt=attempt, waiting=ScoringChunk.Status.QUEUED)
            raise
        logger.exception("scoring chunk %s failed", chunk.id)
        message = f"{type(error).__name__}: {error}"
        ScoringChunk.objects.filter(id=chunk.id).update(status=ScoringChunk.Status.FAILED, error=message)
        Scoring.objects.filter(id=scoring.id).exclude(status=Scoring.Status.FAILED).update(
            status=Scoring.Status.FAILED, error=message
        )
    return chunk


def _score_chunk(chunk: ScoringChunk, scoring: Scoring, attempt: int) -> None:
    options = Options(**scoring.options)
    slice_fields = tuple(scoring.slice_fields)
    answers = list(
        Answer.objects.filter(
            run_id=scoring.run_id, id__gte=chunk.first_answer_id, id__lte=chunk.last_answer_id
        )
        .order_by("id")
        .values_list("id", "line_number", "question_id", "language", "raw")
    )
    questions = {
        row["question_id"]: row
        for row in Question.objects.filter(
            set_version=scoring.set_version_id,
            question_id__in=[answer[2] for answer in answers],
        ).values("question_id", "expected_behaviour", "expected_values", "stratum", "split")
    }
    checks = {False: [], True: []}  # by sealed
    check_rows, finding_rows = [], []
    unmatched = 0
    for answer_id, line_number, question_id, language, raw in answers:
        question = questions.get(question_id)
        if question is None:
            unmatched += 1
            continue
        sealed = question["split"] == Question.Split.SEALED
        record = orjson.loads(raw)
        check = check_answer(record, question, slice_fields=slice_fields, options=options)
        checks[sealed].append(check)
        check_rows.append(
            (
                scoring.id,
                answer_id,
                question_id,
                sealed,
                *check.counts,
                [n.as_dict() for n in check.numbers],
                _logged_timing(record),
            )
        )
        finding_rows += [
            (scoring.id, answer_id, f.kind, f.detail, sealed, line_number, question_id, language)
            for f in check.findings
        ]
    with transaction.atomic():
        # The fence: only the attempt that holds the chunk stores its rows.
        if (
            not ScoringChunk.objects.select_for_update()
            .filter(id=chunk.id, attempts=attempt, status=ScoringChunk.Status.SCORING)
            .exists()
        ):
            return
        _store_checks(check_rows, finding_rows)
        chunk.status = ScoringChunk.Status.DONE
        chunk.lease_until = None
        chunk.slices = part_slices(
            slice_counts(checks[False], slice_fields=slice_fields),
            slice_counts(checks[True], slice_fields=slice_fields),
        )
        chunk.unmatched_answers = unmatched
        chunk.save(update_fields=("status", "slices", "unmatched_answers", "lease_until"))
        # The update locks the scoring row: exactly one chunk sees the last count.
        Scoring.objects.filter(id=scoring.id).update(chunks_done=F("chunks_done") + 1)
        scoring = Scoring.objects.select_for_update().get(id=scoring.id)
        scoring.progress = min(99, 100 * scoring.chunks_done // max(scoring.chunks_total, 1))
        scoring.save(update_fields=("progress",))
        if scoring.chunks_done == scoring.chunks_total and scoring.status == Scoring.Status.SCORING:
            _finish(scoring)


CHECK_COLUMNS = ("scoring_id", "answer_id", "question_id", "sealed", *COUNT_COLUMNS, "numbers", "timing")
FINDING_COLUMNS = (
    "scoring_id", "answer_id", "kind", "detail", "sealed", "line_number", "question_id", "language",
)  # fmt: skip


def _store_checks(check_rows, finding_rows) -> None:
    insert_rows(AnswerCheck, CHECK_COLUMNS, check_rows)
    insert_rows(Finding, FINDING_COLUMNS, finding_rows)


def _not_run(scoring: Scoring) -> dict:
    """Store a check and a finding for each attempt the run did not make of
    each question of the set version (R of them, less those it holds), and
    return their slice counts."""
    slice_fields = tuple(scoring.slice_fields)
    repetitions = scoring.run.repetitions
    attempts = (
        Answer.objects.filter(run_id=scoring.run_id, question_id=OuterRef("question_id"))
        .order_by()
        .values("question_id")
        .annotate(made=Count("id"))
        .values("made")
    )
    questions = (
        Question.objects.filter(set_version_id=scoring.set_version_id)
        .annotate(made=Coalesce(Subquery(attempts), 0))
        .filter(made__lt=repetitions)
        .order_by("id")
        .values("question_id", "language", "expected_behaviour", "stratum", "split", "made")
    )
    checks = {False: [], True: []}
    check_rows, finding_rows = [], []
    for question in questions.iterator(chunk_size=20000):
        sealed = question["split"] == Question.Split.SEALED
        for _ in range(repetitions - question["made"]):
            check = not_run_check(question, slice_fields=slice_fields)
            checks[sealed].append(check)
            check_rows.append((scoring.id, None, question["question_id"], sealed, *check.counts, [], {}))
            finding_rows += [
                (scoring.id, None, f.kind, f.detail, sealed, None, f.question_id, question["language"])
                for f in check.findings
            ]
    _store_checks(check_rows, finding_rows)
    scoring.not_run = len(check_rows)
    return part_slices(
        slice_counts(checks[False], slice_fields=slice_fields),
        slice_counts(checks[True], slice_fields=slice_fields),
    )


def _stable(scoring: Scoring) -> dict:
    """With R >= 2, the stable resolution of the tuning part per language,
    stratum and split slice (see scoring.repeats); empty for single runs."""
    repetitions = scoring.run.repetitions
    if repetitions < 2:
        return {}
    slice_fields = tuple(name for name in scoring.slice_fields if name in DEFAULT_SLICE_FIELDS)
    return repeat_figures(
        stable_tallies(scoring, slice_fields=slice_fields), repetitions=repetitions, slice_fields=slice_fields
    )


def stable_tallies(scoring: Scoring, *, slice_fields=("language",)) -> dict[str, QuestionTally]:
    """Each tuning question's attempts in this scoring, tallied (scoring.repeats)."""
    fields = {
        row[0]: row[1:]
        for row in Question.objects.filter(set_version_id=scoring.set_version_id).values_list(
            "question_id", *slice_fields
        )
    }
    tallies: dict[str, QuestionTally] = {}
    rows = (
        AnswerCheck.objects.filter(scoring=scoring, sealed=False)
        .values_list("question_id", "answer__status", *COUNT_COLUMNS)
        .iterator(chunk_size=20000)
    )
    for question_id, status, *counts in rows:
        entry = tallies.get(question_id)
        if entry is None:
            entry = tallies[question_id] = QuestionTally(fields=fields.get(question_id, ()))
        entry.add(counts, answered=status == "ok")
    return tallies


def _logged_timing(record: dict) -> dict:
    """The line's timing figures that were logged (validated at ingest)."""
    if not any(name in record for name in TIMING_FIELDS):
        return {}
    return timing.logged(timing.answer_timing(record, validated=True))


def without_questions(summary: dict) -> dict:
    """A timing summary without its row per question: each question's median
    is kept as their summary only, or the scoring would be as large as its run."""
    for source in summary["e2e"]["by_source"].values():
        source.pop("per_question", None)
    return summary


def _timing(scoring: Scoring) -> dict:
    """Spec 004's timing summary of the tuning part for "all" and each
    language, with each question's median when attempts repeat; empty when
    no line logged any timing."""
    # Each figure as its own column: a million small tuples, not a million dicts.
    names = timing.TIMING_NAMES
    rows = (
        AnswerCheck.objects.filter(scoring=scoring, sealed=False, answer__isnull=False)
        .exclude(timing={})
        .values_list("question_id", "answer__language", *(f"timing__{name}" for name in names))
        .iterator(chunk_size=20000)
    )
    question_ids: list[str] = []
    languages: list[str] = []
    timings: list[timing.AnswerTiming] = []
    for question_id, language, *values in rows:
        question_ids.append(question_id)
        languages.append(language)
        timings.append(timing.AnswerTiming(**dict(zip(names, values, strict=True))))
    if not timings:
        return {}
    groups: dict[str, list[int]] = {"all": list(range(len(timings)))}
    for index, language in enumerate(languages):
        groups.setdefault(f"language={language}", []).append(index)
    repeated = scoring.run.repetitions > 1
    summaries = {}
    for name, indexes in sorted(groups.items(), key=lambda item: (item[0] != "all", item[0])):
        summary = timing.timing_summary(
            [timings[i] for i in indexes],
            question_ids=[question_ids[i] for i in indexes] if repeated else None,
        )
        summaries[name] = without_questions(summary)
    return summaries


def _finish(scoring: Scoring) -> None:
    """Count the questions not run and add the chunks' slice counts up into
    the scoring's scores."""
    chunks = list(scoring.chunks.all())
    totals = merge_slice_counts(*(chunk.slices for chunk in chunks), _not_run(scoring))
    scoring.stable = _stable(scoring)
    scoring.timing = _timing(scoring)
    from reviewapp.selectors import count_attempts  # selectors reads this module's names

    scoring.attempt_counts = asdict(count_attempts(scoring))
    Score.objects.bulk_create(
        Score(scoring=scoring, slice=slice_name, measure=measure, k=c["k"], n=c["n"])
        for slice_name, measures in totals.items()
        for measure, c in measures.items()
    )
    scoring.status = Scoring.Status.DONE
    scoring.progress = 100
    scoring.unmatched_answers = sum(chunk.unmatched_answers for chunk in chunks)
    scoring.sealed_answers = AnswerCheck.objects.filter(
        scoring=scoring, sealed=True, answer__isnull=False
    ).count()
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


def scoring_open_sealed(*, scoring: Scoring, opened_by, reason: str) -> Scoring:
    """Open the sealed part of a scoring: its figures and findings are shown
    from now on, labelled as the sealed part. Records who, when and why;
    refuses an empty reason. Opening twice keeps the first record."""
    reason = reason.strip()
    if not reason:
        raise UploadRejected("say why the sealed part is opened: the reason is kept with the scoring")
    Scoring.objects.filter(id=scoring.id, sealed_opened_at__isnull=True).update(
        sealed_opened_by=opened_by, sealed_opened_at=timezone.now(), sealed_reason=reason
    )
    scoring.refresh_from_db()
    return scoring
