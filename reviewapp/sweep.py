"""The sweep that Celery beat runs every WORK_SWEEP_SECONDS over every
domain's claimed work (runs, scorings, judge runs): it queues what was never
queued, takes up what a dead worker held once its lease ran out, and fails
what died too often. Above the domains, as it reads them all.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from reviewapp import tasks
from reviewapp.core.work import stale_before, stopped_too_often
from reviewapp.models import JudgeChunk, JudgeRun, Run, Scoring, ScoringChunk


def _waiting_rows(model, status: str, now: datetime, *, all_lost: bool = False):
    """Rows in ``status`` never handed to the broker, or handed long ago; all
    of them when the broker lost its messages."""
    waiting = model.objects.filter(status=status)
    if all_lost:
        return waiting
    return waiting.filter(Q(queued_at__isnull=True) | Q(queued_at__lt=stale_before(now)))


def _give_up(queryset, reason: str) -> int:
    return queryset.update(status="failed", error=reason, lease_until=None)


def _fail_chunks(chunks, reason: str) -> int:
    """Fail these chunks and the scorings they belong to, with the reason."""
    scoring_ids = list(chunks.values_list("scoring_id", flat=True))
    failed = _give_up(chunks, reason)
    Scoring.objects.filter(id__in=scoring_ids).exclude(status=Scoring.Status.FAILED).update(
        status=Scoring.Status.FAILED, error=f"a chunk of answers: {reason}"
    )
    return failed


def work_sweep(*, messages_lost: bool = False) -> dict[str, int]:
    """Queue what was never queued or whose worker died, and, when the broker
    lost its messages, everything waiting; fail what died too often. Returns
    what it did, by kind. Safe to run at any time and from several places:
    every queued task claims its work before doing it."""
    now = timezone.now()

    def _waiting(model, status):
        return _waiting_rows(model, status, now, all_lost=messages_lost)

    done: Counter = Counter()
    limit = settings.WORK_MAX_ATTEMPTS
    too_often = (
        f"the worker doing this stopped {limit} times without finishing (killed, or out of memory?); "
        "see the worker's log, then try again"
    )

    done["runs failed"] += _give_up(
        _waiting(Run, Run.Status.RECEIVED).filter(stopped_too_often()), too_often
    )
    for run_id in _waiting(Run, Run.Status.RECEIVED).values_list("id", flat=True):
        done["runs queued"] += tasks.queue_ingest(run_id)
    dead_runs = Run.objects.filter(status=Run.Status.INGESTING, lease_until__lt=now)
    done["runs failed"] += _give_up(dead_runs.filter(stopped_too_often()), too_often)
    for run_id in dead_runs.values_list("id", flat=True):
        done["runs taken up again"] += tasks.queue_ingest(run_id)

    waiting_plans = _waiting(Scoring, Scoring.Status.QUEUED).filter(chunks_total=0)
    done["scorings failed"] += _give_up(waiting_plans.filter(stopped_too_often()), too_often)
    for scoring_id in waiting_plans.values_list("id", flat=True):
        done["scorings queued"] += tasks.queue_plan(scoring_id)
    dead_plans = Scoring.objects.filter(status=Scoring.Status.SCORING, chunks_total=0, lease_until__lt=now)
    done["scorings failed"] += _give_up(dead_plans.filter(stopped_too_often()), too_often)
    for scoring_id in dead_plans.values_list("id", flat=True):
        done["scorings taken up again"] += tasks.queue_plan(scoring_id)

    waiting_chunks = _waiting(ScoringChunk, ScoringChunk.Status.QUEUED)
    dead_chunks = ScoringChunk.objects.filter(status=ScoringChunk.Status.SCORING, lease_until__lt=now)
    for chunks in (waiting_chunks, dead_chunks):
        done["chunks failed"] += _fail_chunks(chunks.filter(stopped_too_often()), too_often)
    for chunk_id in waiting_chunks.values_list("id", flat=True):
        done["chunks queued"] += tasks.queue_chunk(chunk_id)
    for chunk_id in dead_chunks.values_list("id", flat=True):
        done["chunks taken up again"] += tasks.queue_chunk(chunk_id)

    # Confirmed judge runs whose planning never reached a worker, or whose planner died.
    for judge_run_id in (
        _waiting(JudgeRun, JudgeRun.Status.QUEUED).filter(chunks_total=0).values_list("id", flat=True)
    ):
        done["judge runs queued"] += tasks.queue_judge_plan(judge_run_id)

    waiting_judging = _waiting(JudgeChunk, JudgeChunk.Status.QUEUED)
    dead_judging = JudgeChunk.objects.filter(status=JudgeChunk.Status.RUNNING, lease_until__lt=now)
    for chunks in (waiting_judging, dead_judging):
        done["judge chunks failed"] += _fail_judge_chunks(chunks.filter(stopped_too_often()), too_often)
    for chunk_id in waiting_judging.values_list("id", flat=True):
        done["judge chunks queued"] += tasks.queue_judge_chunk(chunk_id)
    for chunk_id in dead_judging.values_list("id", flat=True):
        done["judge chunks taken up again"] += tasks.queue_judge_chunk(chunk_id)
    return {kind: count for kind, count in done.items() if count}


def _fail_judge_chunks(chunks, reason: str) -> int:
    run_ids = list(chunks.values_list("judge_run_id", flat=True))
    failed = _give_up(chunks, reason)
    JudgeRun.objects.filter(id__in=run_ids).exclude(
        status__in=(JudgeRun.Status.FAILED, JudgeRun.Status.CANCELLED)
    ).update(status=JudgeRun.Status.FAILED, error=f"a chunk of answers: {reason}", finished_at=timezone.now())
    return failed
