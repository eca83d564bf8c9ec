"""Thin Celery tasks: they take ids and call services."""

from celery import shared_task
from django.db import OperationalError

from reviewapp.services.runs import run_ingest
from reviewapp.services.scoring import scoring_chunk_perform, scoring_plan

# A lost database connection is worth retrying; the services claim their work
# with a conditional update, so a retried or repeated task does nothing twice.
RETRY = {"autoretry_for": (OperationalError,), "retry_backoff": True, "max_retries": 3}


@shared_task(**RETRY)
def ingest_run_task(run_id: int) -> None:
    run_ingest(run_id=run_id)


@shared_task(**RETRY)
def plan_scoring_task(scoring_id: int) -> None:
    scoring_plan(scoring_id=scoring_id)


@shared_task(**RETRY)
def score_chunk_task(chunk_id: int) -> None:
    scoring_chunk_perform(chunk_id=chunk_id)
