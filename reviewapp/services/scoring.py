"""Scoring a stored run against a set version with the scoring library."""

from __future__ import annotations

import json
import logging

from django.db import transaction
from django.utils import timezone

from reviewapp.models import Answer, AnswerCheck, Finding, Run, Score, Scoring, SetVersion
from reviewapp.services.question_sets import questions_for_scoring
from reviewapp.services.uploads import UploadRejected
from scoring.measures import COUNT_COLUMNS, check_answer, merge_slice_counts, slice_counts

logger = logging.getLogger(__name__)

CHUNK = 2000


def scoring_request(*, run: Run, set_version: SetVersion, requested_by=None) -> Scoring:
    """Queue a scoring of ``run`` against ``set_version``; a scoring that
    exists already is returned as it is (results are never made twice)."""
    if run.status != Run.Status.STORED:
        raise UploadRejected(f"run {run.id} has no stored answers to score ({run.status})")
    with transaction.atomic():
        scoring, created = Scoring.objects.get_or_create(
            run=run, set_version=set_version, defaults={"requested_by": requested_by}
        )
        if created:
            transaction.on_commit(lambda: queue_scoring(scoring.id))
    return scoring


def scoring_retry(*, scoring: Scoring) -> bool:
    """Queue a failed scoring again; False when it had not failed."""
    reset = Scoring.objects.filter(id=scoring.id, status=Scoring.Status.FAILED).update(
        status=Scoring.Status.QUEUED, error="", progress=0
    )
    if reset:
        transaction.on_commit(lambda: queue_scoring(scoring.id))
    return bool(reset)


def queue_scoring(scoring_id: int) -> None:
    from reviewapp.tasks import score_run_task

    score_run_task.delay(scoring_id)


def scoring_perform(*, scoring_id: int) -> Scoring | None:
    """Check every answer of the run, store per-answer checks, findings and
    per-slice counts. Returns None when the scoring was not queued (a repeated
    task is a no-op). Rows of an earlier, failed attempt are replaced."""
    claimed = Scoring.objects.filter(id=scoring_id, status=Scoring.Status.QUEUED).update(
        status=Scoring.Status.SCORING, progress=0, started_at=timezone.now()
    )
    if not claimed:
        return None
    scoring = Scoring.objects.select_related("run", "set_version").get(id=scoring_id)
    try:
        _score(scoring)
    except Exception as error:
        logger.exception("scoring %s failed", scoring.id)
        scoring.status = Scoring.Status.FAILED
        scoring.error = f"{type(error).__name__}: {error}"
        scoring.save(update_fields=("status", "error"))
    return scoring


def _score(scoring: Scoring) -> None:
    questions = questions_for_scoring(scoring.set_version)
    for model in (AnswerCheck, Finding, Score):
        model.objects.filter(scoring=scoring).delete()

    answers = Answer.objects.filter(run=scoring.run).only("id", "raw").order_by("id")
    total = scoring.run.answer_count or 1
    done = unmatched = 0
    totals: dict = {}
    last_id = 0
    while True:
        chunk = list(answers.filter(id__gt=last_id)[:CHUNK])
        if not chunk:
            break
        last_id = chunk[-1].id
        check_rows, finding_rows, checks = [], [], []
        for answer in chunk:
            record = json.loads(answer.raw)
            question = questions.get(record["question_id"])
            if question is None:
                unmatched += 1
                continue
            check = check_answer(record, question)
            checks.append(check)
            check_rows.append(
                AnswerCheck(
                    scoring=scoring,
                    answer_id=answer.id,
                    numbers=[number.as_dict() for number in check.numbers],
                    **dict(zip(COUNT_COLUMNS, check.counts, strict=True)),
                )
            )
            finding_rows += [
                Finding(scoring=scoring, answer_id=answer.id, kind=f.kind, detail=f.detail)
                for f in check.findings
            ]
        with transaction.atomic():
            AnswerCheck.objects.bulk_create(check_rows)
            Finding.objects.bulk_create(finding_rows)
        totals = merge_slice_counts(totals, slice_counts(checks))
        done += len(chunk)
        Scoring.objects.filter(id=scoring.id).update(progress=min(99, done * 100 // total))

    with transaction.atomic():
        Score.objects.bulk_create(
            Score(scoring=scoring, slice=slice_name, measure=measure, k=c["k"], n=c["n"])
            for slice_name, measures in totals.items()
            for measure, c in measures.items()
        )
        scoring.status = Scoring.Status.DONE
        scoring.progress = 100
        scoring.unmatched_answers = unmatched
        scoring.finished_at = timezone.now()
        scoring.save(update_fields=("status", "progress", "unmatched_answers", "finished_at"))
