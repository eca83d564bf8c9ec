"""Faults that used to wait minutes for a stale lease (issue 30): each must
recover on its own soon after the fault clears, with counts equal to a
clean run's.

The workers run with WORK_STALE_SECONDS at production's 300 s, so the slow
path (work sent again once its message is five minutes old) cannot rescue
a test; leases and the sweep are short (2 s and 1 s), so each recovery
bound below stands for production's 60 s target at its default intervals
(30 s leases, a sweep every 15 s). Each recovery time is printed, for
bench/README.md.
"""

import signal
import time

import pytest
from django.conf import settings
from django.db import connection

from reviewapp.models import Run, Scoring, ScoringChunk
from tests.worker_processes import (
    CHUNK,
    WORKER_APP_NAME,
    RedisServer,
    assert_counts_equal_a_clean_run,
    broker_at,
    generated_run,
    upload,
)

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

PRODUCTION_STALE = {"WORK_STALE_SECONDS": "300"}
# Seconds from the fault clearing to the scores: the sweep every second and
# 2 s leases, against the 300 s the slow path would take.
RECOVERED_WITHIN = 20


def _cut(statement_like: str | None = None) -> int:
    """Terminate the workers' database connections: all of them, or those
    running a statement like ``statement_like``."""
    running_it = " AND state = 'active' AND query ILIKE %s" if statement_like else ""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = current_database() AND application_name = %s" + running_it,
            [WORKER_APP_NAME, *([statement_like] if statement_like else [])],
        )
        return cursor.fetchone()[0]


def _scored(run) -> bool:
    return Scoring.objects.filter(run=run, status__in=("done", "failed")).exists()


def _recovered(running, run, since: float, what: str) -> float:
    running.wait(lambda: _scored(run), seconds=RECOVERED_WITHIN, what=what)
    took = time.monotonic() - since
    print(f"recovered in {took:.1f} s: {what}")
    return took


def _cut_while(running, statement_like: str, what: str) -> float:
    """Wait for a worker to run such a statement, cut its connection; the moment of the cut."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if _cut(statement_like):
            return time.monotonic()
        time.sleep(0.01)
    pytest.fail(f"no worker ran {statement_like} within 60 s: {what}")


def test_a_connection_cut_during_ingests_copy_is_retried_at_once(running, tmp_path):
    path, questions = generated_run(tmp_path, answers=40_000, version="cut-ingest-copy")
    running.worker(**PRODUCTION_STALE)
    running.beat(**PRODUCTION_STALE)
    run = upload(path)

    cut_at = _cut_while(running, 'COPY "reviewapp_answer" %', "storing the answers")
    _recovered(running, run, cut_at, "ingest's COPY cut")
    stored = Run.objects.get(id=run.id)
    assert (stored.status, stored.error) == ("stored", "")
    assert stored.outages >= 1, "the cut was to be counted as an outage"
    assert_counts_equal_a_clean_run(run, path, questions)


def test_a_connection_cut_during_a_chunks_copy_is_retried_at_once(running, tmp_path):
    path, questions = generated_run(tmp_path, answers=3 * CHUNK, version="cut-chunk-copy")
    running.worker(**PRODUCTION_STALE)
    running.beat(**PRODUCTION_STALE)
    run = upload(path)

    cut_at = _cut_while(running, 'COPY "reviewapp_answercheck" %', "writing a chunk's checks")
    _recovered(running, run, cut_at, "a chunk's COPY cut")
    assert ScoringChunk.objects.filter(scoring__run=run, outages__gte=1).exists()
    assert_counts_equal_a_clean_run(run, path, questions)


def test_connections_cut_again_and_again_never_count_as_a_worker_stopping(running, tmp_path):
    path, questions = generated_run(tmp_path, answers=3 * CHUNK, version="cut-often")
    running.worker(**PRODUCTION_STALE)
    running.beat(**PRODUCTION_STALE)
    run = upload(path)
    running.wait(lambda: Run.objects.get(id=run.id).status != "received", what="the ingest to start")

    # Every connection the workers open cut at once, for 6 s: as many cuts as
    # WORK_MAX_ATTEMPTS or more, each in the middle of some work (the retries
    # back off 1, 2, 4 s between them).
    cuts, until = 0, time.monotonic() + 6
    while time.monotonic() < until:
        cuts += _cut()
        time.sleep(0.05)
    assert cuts >= settings.WORK_MAX_ATTEMPTS
    _recovered(running, run, time.monotonic(), f"{cuts} connections cut over 6 s")
    scoring = Scoring.objects.get(run=run)
    assert (scoring.status, scoring.error) == ("done", "")
    assert_counts_equal_a_clean_run(run, path, questions)


def test_redis_restarted_empty_mid_scoring_has_its_lost_messages_sent_again(running, tmp_path):
    path, questions = generated_run(tmp_path, answers=4 * CHUNK, version="redis-emptied")
    redis = RedisServer()
    running.broker = redis.url
    running.processes.append(redis.start())
    with broker_at(redis.url):
        running.worker(**PRODUCTION_STALE)
        running.beat(**PRODUCTION_STALE)
        run = upload(path)
        running.wait(
            lambda: ScoringChunk.objects.filter(scoring__run=run, status="scoring").exists(),
            what="a chunk being scored",
        )
        redis.stop()
        time.sleep(3)
        running.processes.append(redis.start())  # empty: the queued chunks' messages are gone
        _recovered(running, run, time.monotonic(), "Redis restarted empty")
    assert_counts_equal_a_clean_run(run, path, questions)


def test_beat_and_a_worker_killed_mid_chunk_are_covered_by_the_next_worker(running, tmp_path):
    path, questions = generated_run(tmp_path, answers=3 * CHUNK, version="beat-and-worker")
    first = running.worker(**PRODUCTION_STALE)
    beat = running.beat(**PRODUCTION_STALE)
    run = upload(path)
    running.wait(
        lambda: ScoringChunk.objects.filter(scoring__run=run, status="scoring").exists(),
        what="a chunk being scored",
    )
    for process in (beat, first):
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)

    # No beat from here on: the worker looks for work left behind by itself.
    started = time.monotonic()
    running.worker(**PRODUCTION_STALE)
    _recovered(running, run, started, "beat and a worker killed, another worker started")
    assert_counts_equal_a_clean_run(run, path, questions)


def test_an_upload_during_a_redis_outage_with_beat_down_is_taken_by_a_worker(running, tmp_path):
    path, questions = generated_run(tmp_path, answers=5_000, version="no-beat-outage")
    redis = RedisServer()
    running.broker = redis.url
    with broker_at(redis.url):
        run = upload(path)  # Redis is not running
        assert Run.objects.get(id=run.id).queued_at is None
        running.processes.append(redis.start())
        worker = running.worker(**PRODUCTION_STALE)
        started = time.monotonic()
        _recovered(running, run, started, "an upload made while Redis was down, no beat")
    assert worker.poll() is None
    assert_counts_equal_a_clean_run(run, path, questions)
