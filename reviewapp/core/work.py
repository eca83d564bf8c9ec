"""Background work that survives crashes and outages.

Every piece of work (a run's ingest, a scoring's planning, a chunk of
answers) is claimed with a conditional update that sets a lease. The worker
renews the lease while it works; a worker that dies stops renewing it, and
once it has run out the work can be claimed again, by a redelivered message
or by the periodic sweep, up to ``WORK_MAX_ATTEMPTS`` times, after which it
is marked failed with the reason. A message that arrives while the lease is
alive is a no-op. Handing work to the broker never fails a request: when the
broker cannot be reached the work waits, and the sweep queues it later.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from contextlib import contextmanager
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, connections
from django.db.models import F, Q
from django.utils import timezone

from reviewapp.models import JudgeChunk, JudgeRun, Run, Scoring, ScoringChunk

logger = logging.getLogger(__name__)

# Database errors worth trying again: a connection dropped or refused.
TRANSIENT = ("OperationalError", "InterfaceError")


def lease_end(now: datetime | None = None) -> datetime:
    return (now or timezone.now()) + timedelta(seconds=settings.WORK_LEASE_SECONDS)


def stale_before(now: datetime | None = None) -> datetime:
    """Work handed to the broker before this and still waiting is sent again."""
    return (now or timezone.now()) - timedelta(seconds=settings.WORK_STALE_SECONDS)


def claim(model, *, pk: int, waiting: Q, working: str, **changes) -> int | None:
    """Take row ``pk`` when it matches ``waiting``, or when it is ``working``
    with its lease run out, and set a fresh lease. Returns the attempt number
    the caller now holds (its fence: later writes check it), None when the
    work is not there to take (done, alive elsewhere, or out of attempts)."""
    now = timezone.now()
    taken = model.objects.filter(
        waiting | Q(status=working, lease_until__lt=now), id=pk, attempts__lt=settings.WORK_MAX_ATTEMPTS
    ).update(status=working, lease_until=lease_end(now), attempts=F("attempts") + 1, **changes)
    if not taken:
        return None
    return model.objects.values_list("attempts", flat=True).get(id=pk)


@contextmanager
def lease_kept(model, *, pk: int, attempt: int):
    """Renew the lease every third of its length while the block runs. The
    renewal goes through its own connection (a thread has its own), because
    the work's transaction hides its writes until it commits. SQLite, the
    embedded default, runs tasks in-process, where no worker can die apart
    from the page that started them; it needs no renewal."""
    if connection.vendor != "postgresql":
        yield
        return
    stop = threading.Event()

    def renew() -> None:
        try:
            while not stop.wait(settings.WORK_LEASE_SECONDS / 3):
                try:
                    model.objects.filter(id=pk, attempts=attempt).update(lease_until=lease_end())
                except Exception:  # a dropped connection: the next round opens a new one
                    logger.warning("could not renew the lease of %s %s", model.__name__, pk, exc_info=True)
                    connection.close()
        finally:
            connections.close_all()

    thread = threading.Thread(target=renew, name=f"lease-{model.__name__}-{pk}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def is_transient(error: BaseException) -> bool:
    return type(error).__name__ in TRANSIENT


def release(model, *, pk: int, attempt: int, waiting: str) -> None:
    """Give back a claim after a transient error, so that the task's retry
    can take it at once. The broken connection is dropped first; if the
    database is still away the lease simply runs out."""
    try:
        connection.close()
        model.objects.filter(id=pk, attempts=attempt).update(status=waiting, lease_until=None)
    except Exception:
        logger.warning("could not release %s %s; its lease will run out", model.__name__, pk, exc_info=True)


def send(task, *args) -> bool:
    """Hand a task to the broker; False (logged, never raised) when the
    broker cannot be reached within the short publish retry policy."""
    try:
        task.apply_async(args=args, retry=True, retry_policy=settings.WORK_PUBLISH_RETRY)
    except Exception as error:
        logger.warning("could not reach the broker for %s%s: %s", task.name, args, error)
        return False
    return True


def queue_ingest(run_id: int) -> bool:
    from reviewapp.tasks import ingest_run_task

    sent = send(ingest_run_task, run_id)
    if sent:
        Run.objects.filter(id=run_id).update(queued_at=timezone.now())
    return sent


def queue_plan(scoring_id: int) -> bool:
    from reviewapp.tasks import plan_scoring_task

    sent = send(plan_scoring_task, scoring_id)
    if sent:
        Scoring.objects.filter(id=scoring_id).update(queued_at=timezone.now())
    return sent


def queue_chunk(chunk_id: int) -> bool:
    from reviewapp.tasks import score_chunk_task

    sent = send(score_chunk_task, chunk_id)
    if sent:
        ScoringChunk.objects.filter(id=chunk_id).update(queued_at=timezone.now())
    return sent


def queue_judge_chunk(chunk_id: int) -> bool:
    from reviewapp.tasks import judge_chunk_task

    sent = send(judge_chunk_task, chunk_id)
    if sent:
        JudgeChunk.objects.filter(id=chunk_id).update(queued_at=timezone.now())
    return sent


def _waiting(model, status: str, now: datetime):
    """Rows in ``status`` never handed to the broker, or handed long ago."""
    return model.objects.filter(status=status).filter(
        Q(queued_at__isnull=True) | Q(queued_at__lt=stale_before(now))
    )


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


def work_sweep() -> dict[str, int]:
    """Queue what was never queued or whose worker died; fail what died too
    often. Returns what it did, by kind. Safe to run at any time and from
    several places: every queued task claims its work before doing it."""
    now = timezone.now()
    done: Counter = Counter()
    limit = settings.WORK_MAX_ATTEMPTS
    too_often = (
        f"the worker doing this stopped {limit} times without finishing (killed, or out of memory?); "
        "see the worker's log, then try again"
    )

    done["runs failed"] += _give_up(
        _waiting(Run, Run.Status.RECEIVED, now).filter(attempts__gte=limit), too_often
    )
    for run_id in _waiting(Run, Run.Status.RECEIVED, now).values_list("id", flat=True):
        done["runs queued"] += queue_ingest(run_id)
    dead_runs = Run.objects.filter(status=Run.Status.INGESTING, lease_until__lt=now)
    done["runs failed"] += _give_up(dead_runs.filter(attempts__gte=limit), too_often)
    for run_id in dead_runs.values_list("id", flat=True):
        done["runs taken up again"] += queue_ingest(run_id)

    waiting_plans = _waiting(Scoring, Scoring.Status.QUEUED, now).filter(chunks_total=0)
    done["scorings failed"] += _give_up(waiting_plans.filter(attempts__gte=limit), too_often)
    for scoring_id in waiting_plans.values_list("id", flat=True):
        done["scorings queued"] += queue_plan(scoring_id)
    dead_plans = Scoring.objects.filter(status=Scoring.Status.SCORING, chunks_total=0, lease_until__lt=now)
    done["scorings failed"] += _give_up(dead_plans.filter(attempts__gte=limit), too_often)
    for scoring_id in dead_plans.values_list("id", flat=True):
        done["scorings taken up again"] += queue_plan(scoring_id)

    waiting_chunks = _waiting(ScoringChunk, ScoringChunk.Status.QUEUED, now)
    dead_chunks = ScoringChunk.objects.filter(status=ScoringChunk.Status.SCORING, lease_until__lt=now)
    for chunks in (waiting_chunks, dead_chunks):
        done["chunks failed"] += _fail_chunks(chunks.filter(attempts__gte=limit), too_often)
    for chunk_id in waiting_chunks.values_list("id", flat=True):
        done["chunks queued"] += queue_chunk(chunk_id)
    for chunk_id in dead_chunks.values_list("id", flat=True):
        done["chunks taken up again"] += queue_chunk(chunk_id)

    waiting_judging = _waiting(JudgeChunk, JudgeChunk.Status.QUEUED, now)
    dead_judging = JudgeChunk.objects.filter(status=JudgeChunk.Status.RUNNING, lease_until__lt=now)
    for chunks in (waiting_judging, dead_judging):
        done["judge chunks failed"] += _fail_judge_chunks(chunks.filter(attempts__gte=limit), too_often)
    for chunk_id in waiting_judging.values_list("id", flat=True):
        done["judge chunks queued"] += queue_judge_chunk(chunk_id)
    for chunk_id in dead_judging.values_list("id", flat=True):
        done["judge chunks taken up again"] += queue_judge_chunk(chunk_id)
    return {kind: count for kind, count in done.items() if count}


def _fail_judge_chunks(chunks, reason: str) -> int:
    run_ids = list(chunks.values_list("judge_run_id", flat=True))
    failed = _give_up(chunks, reason)
    JudgeRun.objects.filter(id__in=run_ids).exclude(
        status__in=(JudgeRun.Status.FAILED, JudgeRun.Status.CANCELLED)
    ).update(status=JudgeRun.Status.FAILED, error=f"a chunk of answers: {reason}", finished_at=timezone.now())
    return failed


def run_is_stuck(run: Run) -> bool:
    """Not done, and nothing has moved for WORK_STALE_SECONDS: waiting for a
    broker that never took it, or claimed by a worker whose lease ran out."""
    now = timezone.now()
    if run.status == Run.Status.RECEIVED:
        return run.queued_at is None or run.queued_at < stale_before(now)
    if run.status == Run.Status.INGESTING:
        return run.lease_until is not None and run.lease_until < now
    return False


def scoring_is_stuck(scoring: Scoring) -> bool:
    """As run_is_stuck, for a scoring: waiting unplanned, or no chunk of it
    alive and nothing handed to the broker recently."""
    now = timezone.now()
    if scoring.status not in (Scoring.Status.QUEUED, Scoring.Status.SCORING):
        return False
    if scoring.chunks.filter(status=ScoringChunk.Status.SCORING, lease_until__gte=now).exists():
        return False
    if scoring.status == Scoring.Status.SCORING and not scoring.chunks_total:
        return scoring.lease_until is not None and scoring.lease_until < now
    recent = stale_before(now)
    sent = scoring.chunks.filter(queued_at__gte=recent).exists() or (
        scoring.queued_at is not None and scoring.queued_at >= recent
    )
    return not sent
