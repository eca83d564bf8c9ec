"""Thin Celery tasks: they take ids and call services.

Each service claims its work with a lease (reviewapp/services/work.py), so a
repeated, redelivered or retried task is a no-op while the first is alive,
and takes the work up when it died.
"""

from celery import shared_task
from django.db import InterfaceError, OperationalError

from reviewapp.core.work import work_sweep
from reviewapp.judges.services.judging import judge_chunk_perform
from reviewapp.runs.services.runs import run_ingest
from reviewapp.scorings.services import scoring_chunk_perform, scoring_plan

# A lost database connection is worth retrying: the service gave its claim
# back before raising, so the retry takes the work at once.
RETRY = {"autoretry_for": (OperationalError, InterfaceError), "retry_backoff": True, "max_retries": 3}


@shared_task(**RETRY)
def ingest_run_task(run_id: int) -> None:
    run_ingest(run_id=run_id)


@shared_task(**RETRY)
def plan_scoring_task(scoring_id: int) -> None:
    scoring_plan(scoring_id=scoring_id)


@shared_task(**RETRY)
def score_chunk_task(chunk_id: int) -> None:
    scoring_chunk_perform(chunk_id=chunk_id)


@shared_task(**RETRY)
def judge_chunk_task(chunk_id: int) -> None:
    judge_chunk_perform(chunk_id=chunk_id)


@shared_task(ignore_result=True)
def sweep_work_task() -> dict:
    """Run by Celery beat every WORK_SWEEP_SECONDS; also clears imports left
    waiting for confirmation for more than a day."""
    from reviewapp.runs.services.imports import pending_sweep

    done = work_sweep()
    if removed := pending_sweep():
        done["pending imports removed"] = removed
    return done
