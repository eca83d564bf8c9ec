"""Thin Celery tasks, and the queue_* calls that services use to send them.

A task takes ids and calls a service. Each service claims its work with a
lease (reviewapp/core/work.py), so a repeated, redelivered or retried task is
a no-op while the first is alive, and takes the work up when it died.

Services import this module to queue tasks, so each task imports its service
inside its body: the one import that runs against the grain, and the only
exception the import-cycle test allows (tests/app/core/test_import_cycles.py).
Task names are pinned, so that queued messages survive the code moving.
"""

import psycopg
from celery import shared_task
from django.db import InterfaceError, OperationalError
from django.utils import timezone

from reviewapp.core.files import StoreUnreachable
from reviewapp.core.work import send
from reviewapp.models import JudgeChunk, JudgeRun, Run, Scoring, ScoringChunk

# A lost database connection, or a file store that did not answer, is worth
# retrying: the service gave its claim back before raising, so the retry
# takes the work at once; past the retries the sweep sends it again. psycopg's
# own errors come from COPY, which Django does not wrap.
RETRY = {
    "autoretry_for": (
        OperationalError,
        InterfaceError,
        psycopg.OperationalError,
        psycopg.InterfaceError,
        StoreUnreachable,
    ),
    "retry_backoff": True,
    "max_retries": 3,
}


@shared_task(**RETRY, name="reviewapp.tasks.ingest_run_task")
def ingest_run_task(run_id: int) -> None:
    from reviewapp.runs.services.runs import run_ingest

    run_ingest(run_id=run_id)


@shared_task(**RETRY, name="reviewapp.tasks.plan_scoring_task")
def plan_scoring_task(scoring_id: int) -> None:
    from reviewapp.scorings.services import scoring_plan

    scoring_plan(scoring_id=scoring_id)


@shared_task(**RETRY, name="reviewapp.tasks.score_chunk_task")
def score_chunk_task(chunk_id: int) -> None:
    from reviewapp.scorings.services import scoring_chunk_perform

    scoring_chunk_perform(chunk_id=chunk_id)


@shared_task(**RETRY, name="reviewapp.tasks.judge_chunk_task")
def judge_chunk_task(chunk_id: int) -> None:
    from reviewapp.judges.services.judging import judge_chunk_perform

    judge_chunk_perform(chunk_id=chunk_id)


@shared_task(**RETRY, name="reviewapp.tasks.plan_judge_run_task")
def plan_judge_run_task(judge_run_id: int) -> None:
    from reviewapp.judges.services.judging import judge_run_plan

    judge_run_plan(judge_run_id=judge_run_id)


@shared_task(ignore_result=True, name="reviewapp.tasks.sweep_work_task")
def sweep_work_task() -> dict:
    """Run by Celery beat every WORK_SWEEP_SECONDS, and by a worker when beat
    has not run it lately (reviewapp.core.broker); also clears imports left
    waiting for confirmation for more than a day."""
    from reviewapp.core import broker
    from reviewapp.core.uploads import remove_leftovers
    from reviewapp.runs.services.imports import pending_sweep
    from reviewapp.sweep import work_sweep

    broker.heartbeat()
    lost = broker.messages_lost()
    done = work_sweep(messages_lost=lost)
    if lost:
        broker.messages_resent()
    if removed := pending_sweep():
        done["pending imports removed"] = removed
    if removed := remove_leftovers():
        done["upload leftovers removed"] = removed
    return done


def _queue(task, model, pk: int) -> bool:
    """Mark the work queued, then hand it to the broker (unmarked when the
    broker cannot be reached, so the sweep sends it). In that order: a write
    after the message was out held the row while the worker that took the
    message at once came to claim it."""
    model.objects.filter(id=pk).update(queued_at=timezone.now())
    if send(task, pk):
        return True
    model.objects.filter(id=pk).update(queued_at=None)
    return False


def queue_ingest(run_id: int) -> bool:
    return _queue(ingest_run_task, Run, run_id)


def queue_plan(scoring_id: int) -> bool:
    return _queue(plan_scoring_task, Scoring, scoring_id)


def queue_chunk(chunk_id: int) -> bool:
    return _queue(score_chunk_task, ScoringChunk, chunk_id)


def queue_judge_chunk(chunk_id: int) -> bool:
    return _queue(judge_chunk_task, JudgeChunk, chunk_id)


def queue_judge_plan(judge_run_id: int) -> bool:
    return _queue(plan_judge_run_task, JudgeRun, judge_run_id)
