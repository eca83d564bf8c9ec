"""Faults with real processes: a worker killed mid-chunk and mid-ingest, a
database connection terminated mid-work, Redis stopped during an upload.
Each time the work must finish by itself, with counts equal to a clean run's.

The workers and Celery beat run as subprocesses against this test's
PostgreSQL database, with short leases so that the sweep acts in seconds.
"""

import signal
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client

from reviewapp.models import Answer, ApiToken, Run, Scoring, ScoringChunk
from tests.helpers import make_user
from tests.provider_servers import SlowJudgeServer
from tests.worker_processes import (
    CHUNK,
    WORKER_APP_NAME,
    RedisServer,
    assert_counts_equal_a_clean_run,
    broker_at,
    generated_run,
    judge_by,
    upload,
)

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_a_worker_killed_mid_chunk_leaves_work_that_another_finishes(running, tmp_path):
    path, questions = generated_run(tmp_path, answers=3 * CHUNK, version="fault-chunk")
    first = running.worker()
    running.beat()
    run = upload(path)

    running.wait(
        lambda: ScoringChunk.objects.filter(scoring__run=run, status="scoring").exists(),
        what="a chunk being scored",
    )
    time.sleep(0.2)  # well inside the chunk's second of work
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    killed = list(
        ScoringChunk.objects.filter(scoring__run=run, status="scoring").values_list("id", flat=True)
    )
    assert len(killed) == 1, "the worker was to die with a chunk in its hands"
    assert Scoring.objects.get(run=run).status == "scoring"

    running.worker()
    running.wait(lambda: Scoring.objects.get(run=run).is_final, what="the scoring to finish after the kill")
    assert ScoringChunk.objects.get(id=killed[0]).attempts >= 2
    assert_counts_equal_a_clean_run(run, path, questions)


def test_a_worker_killed_mid_ingest_leaves_a_run_that_another_stores(running, tmp_path):
    path, questions = generated_run(tmp_path, answers=60_000, version="fault-ingest")
    first = running.worker()
    running.beat()
    run = upload(path)

    running.wait(lambda: Run.objects.get(id=run.id).status == "ingesting", what="the ingest to start")
    time.sleep(0.5)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    assert Run.objects.get(id=run.id).status == "ingesting", "the worker was to die while storing answers"
    assert not Answer.objects.filter(run=run).exists()  # its transaction was rolled back

    running.worker()
    running.wait(
        lambda: Scoring.objects.filter(run=run, status__in=("done", "failed")).exists(),
        what="the run to be stored and scored after the kill",
    )
    stored = Run.objects.get(id=run.id)
    assert (stored.status, stored.answer_count, stored.attempts) == ("stored", 60_000, 2)
    assert_counts_equal_a_clean_run(run, path, questions)


def test_a_terminated_database_connection_is_retried(running, tmp_path):
    path, questions = generated_run(tmp_path, answers=3 * CHUNK, version="fault-connection")
    running.worker()
    run = upload(path)

    running.wait(
        lambda: ScoringChunk.objects.filter(scoring__run=run, status="scoring").exists(),
        what="a chunk being scored",
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = current_database() AND application_name = %s",
            [WORKER_APP_NAME],
        )
        assert cursor.fetchone()[0] >= 1
    running.wait(lambda: Scoring.objects.get(run=run).is_final, what="the scoring to finish after the cut")
    assert_counts_equal_a_clean_run(run, path, questions)


def test_an_upload_while_redis_is_down_waits_and_is_scored_when_it_is_back(running, tmp_path):
    path, questions = generated_run(tmp_path, answers=5_000, version="fault-redis")
    redis = RedisServer()
    running.broker = redis.url
    _, token = ApiToken.issue(user=make_user("pipeline"), name="ci")

    with broker_at(redis.url):
        # Redis is not running: the upload is stored and answered, never a 500.
        started = time.monotonic()
        response = Client().post(
            "/api/runs",
            {"file": SimpleUploadedFile(path.name, path.read_bytes())},
            HTTP_AUTHORIZATION=f"Bearer {token}",
        )
        assert time.monotonic() - started < 15
        assert response.status_code == 201, response.content
        body = response.json()
        assert (body["status"], body["waiting"]) == ("received", "queued, waiting for the broker")
        run = Run.objects.get(id=body["id"])
        assert run.queued_at is None

        running.processes.append(redis.start())
        running.worker()
        running.beat()
        running.wait(
            lambda: Scoring.objects.filter(run=run, status__in=("done", "failed")).exists(),
            what="the sweep to queue the waiting run once Redis was back, and the run to be scored",
        )
        assert Run.objects.get(id=run.id).queued_at is not None
        assert_counts_equal_a_clean_run(run, path, questions)


def test_a_worker_killed_mid_judging_loses_no_verdict_and_stores_none_twice(running, tmp_path):
    from reviewapp.models import JudgeChunk, JudgeRun, ModelVerdict

    path, _ = generated_run(tmp_path, answers=400, version="fault-judge")
    server = SlowJudgeServer(delay_s=0.1)
    try:
        first = running.worker()
        running.beat()
        run = upload(path)
        judge_run = judge_by(running, run, server, name="slow")
        calls = judge_run.estimate["calls"]
        running.wait(
            lambda: (
                ModelVerdict.objects.filter(judge_run=judge_run).exists()
                and JudgeChunk.objects.filter(judge_run=judge_run, status="running").exists()
            ),
            what="a judge chunk at work after one was stored",
        )
        time.sleep(0.3)  # inside the chunk's second of calls
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
        killed = list(
            JudgeChunk.objects.filter(judge_run=judge_run, status="running").values_list("id", flat=True)
        )
        assert len(killed) == 1, "the worker was to die with a judge chunk in its hands"

        running.worker()
        running.wait(
            lambda: JudgeRun.objects.get(id=judge_run.id).status in ("done", "failed"),
            what="the judge run to finish after the kill",
        )
        finished = JudgeRun.objects.get(id=judge_run.id)
        assert (finished.status, finished.error) == ("done", "")
        verdicts = ModelVerdict.objects.filter(judge_run=judge_run)
        assert verdicts.count() == calls
        assert verdicts.values("answer_id").distinct().count() == calls
        assert not verdicts.exclude(error="").exists()
        assert JudgeChunk.objects.get(id=killed[0]).attempts >= 2
        # What the killed worker had asked came from the response cache: at
        # most the calls in flight when it died were paid twice.
        assert calls <= server.counter["answered"] <= calls + judge_run.judge_versions.get().concurrency
    finally:
        server.close()
