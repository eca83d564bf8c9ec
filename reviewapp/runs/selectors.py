"""Reads of runs and their answers that pages, the API and exports share."""

from __future__ import annotations

from django.utils import timezone

from reviewapp.core.work import stale_before
from reviewapp.models import Run


def run_is_stuck(run: Run) -> bool:
    """Not done, and nothing has moved for WORK_STALE_SECONDS: waiting for a
    broker that never took it, or claimed by a worker whose lease ran out."""
    now = timezone.now()
    if run.status == Run.Status.RECEIVED:
        return run.queued_at is None or run.queued_at < stale_before(now)
    if run.status == Run.Status.INGESTING:
        return run.lease_until is not None and run.lease_until < now
    return False
