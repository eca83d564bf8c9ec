"""Background work that survives crashes and outages.

Every piece of work (a run's ingest, a scoring's planning, a chunk of
answers) is claimed with a conditional update that sets a lease. The worker
renews the lease while it works; a worker that dies stops renewing it, and
once it has run out the work can be claimed again, by a redelivered message
or by the periodic sweep, up to ``WORK_MAX_ATTEMPTS`` times, after which it
is marked failed with the reason. A claim given back after a transient error
(a database or file store outage) counts as an outage, not as an attempt:
outages never fail the work. A message that arrives while the lease is
alive is a no-op. Handing work to the broker never fails a request: when the
broker cannot be reached the work waits, and the sweep queues it later.
"""

from __future__ import annotations

import logging
import threading
from contextlib import contextmanager
from datetime import datetime, timedelta

from django.conf import settings
from django.db import OperationalError, connection, connections, transaction
from django.db.models import F, Q
from django.utils import timezone

logger = logging.getLogger(__name__)

# Errors worth trying again: a database connection dropped or refused, a
# file store that did not answer (reviewapp.core.files). By class name, so
# that Django's wrappers and psycopg's own errors (its COPY is not wrapped:
# a terminated connection there raises psycopg.errors.AdminShutdown, an
# OperationalError) are both found, without importing either here.
TRANSIENT = ("OperationalError", "InterfaceError", "StoreUnreachable")
# How long a claim waits for a row another transaction holds: longer than a
# short write takes, far shorter than the work it would otherwise wait behind.
CLAIM_LOCK_WAIT_MS = 1000
# PostgreSQL's lock_not_available, what a lock_timeout raises.
LOCK_NOT_AVAILABLE = "55P03"


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
    takeable = model.objects.filter(
        waiting | Q(status=working, lease_until__lt=now), ~stopped_too_often(), id=pk
    )
    with transaction.atomic():
        # A row another transaction holds for long is being worked on,
        # whatever its lease says (a long query can outlast the lease it
        # could not renew behind its own lock): give up after a short wait
        # rather than wait for it, which held a worker for as long as that
        # query ran. Not at once: a short write (the sweep or the sender
        # marking it queued) holds the row for milliseconds, and skipping it
        # then left a chunk waiting for the stale sweep (seen at 1M answers
        # under load, two chunks five minutes late).
        # Of this row alone: a model's default ordering can join another
        # table (a chunk's its scoring), whose row would then count too.
        if not _locked_within(takeable.order_by().select_for_update(of=("self",)), CLAIM_LOCK_WAIT_MS):
            return None
        taken = takeable.update(
            status=working, lease_until=lease_end(now), attempts=F("attempts") + 1, **changes
        )
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


def stopped_too_often() -> Q:
    """Work whose workers stopped WORK_MAX_ATTEMPTS times, outages not counted."""
    return Q(attempts__gte=F("outages") + settings.WORK_MAX_ATTEMPTS)


def _locked_within(rows, milliseconds: int) -> bool:
    """Whether ``rows`` (a select_for_update) found a row and locked it
    within ``milliseconds``; inside the caller's transaction, which keeps
    the lock. SQLite locks the whole database for a write and needs no wait."""
    if connection.vendor != "postgresql":
        return bool(list(rows.values_list("id", flat=True)))
    with connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL lock_timeout = '{int(milliseconds)}ms'")
    try:
        with transaction.atomic():  # a savepoint: the timed-out statement is left behind
            found = bool(list(rows.values_list("id", flat=True)))
    except OperationalError as error:
        if getattr(error.__cause__, "sqlstate", None) != LOCK_NOT_AVAILABLE:
            raise
        return False
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL lock_timeout = 0")
    return found


def held_by_a_transaction(model, pk: int) -> bool:
    """Whether another transaction holds row ``pk`` locked (a worker writing
    it): a page asks this instead of waiting behind that transaction, which
    may last minutes. SQLite has no row locks: False."""
    if connection.vendor != "postgresql":
        return False
    with transaction.atomic():
        free = model.objects.filter(id=pk).order_by().select_for_update(skip_locked=True, of=("self",))
        return not list(free.values_list("id", flat=True))


def is_transient(error: BaseException) -> bool:
    return any(kind.__name__ in TRANSIENT for kind in type(error).__mro__)


def release(model, *, pk: int, attempt: int, waiting: str) -> None:
    """Give back a claim after a transient error, counted as an outage, so
    that the task's retry can take it at once. Marked as never queued, so
    that the sweep's next round sends it should the retries run out first.
    The broken connection is dropped first; if the database is still away
    the lease simply runs out (and that attempt counts)."""
    try:
        connection.close()
        model.objects.filter(id=pk, attempts=attempt).update(
            status=waiting, lease_until=None, queued_at=None, outages=F("outages") + 1
        )
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


