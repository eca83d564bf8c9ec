"""Thin Celery tasks: they take ids and call services."""

from celery import shared_task
from django.db import OperationalError

from reviewapp.services.runs import run_ingest
from reviewapp.services.scoring import scoring_perform


# A lost database connection is worth retrying; the services claim their work
# with a conditional update, so a retried or repeated task does nothing twice.
@shared_task(autoretry_for=(OperationalError,), retry_backoff=True, max_retries=3)
def ingest_run_task(run_id: int) -> None:
    run_ingest(run_id=run_id)


@shared_task(autoretry_for=(OperationalError,), retry_backoff=True, max_retries=3)
def score_run_task(scoring_id: int) -> None:
    scoring_perform(scoring_id=scoring_id)
