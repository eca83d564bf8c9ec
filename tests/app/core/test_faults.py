"""Faults with real processes: a worker killed mid-chunk and mid-ingest, a
database connection terminated mid-work, Redis stopped during an upload.
Each time the work must finish by itself, with counts equal to a clean run's.

The workers and Celery beat run as subprocesses against this test's
PostgreSQL database, with short leases so that the sweep acts in seconds.
"""

import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client

from reviewapp.celery import app
from reviewapp.models import Answer, AnswerCheck, ApiToken, Finding, Run, Score, Scoring, ScoringChunk
from reviewapp.runs.services.question_sets import set_version_create
from reviewapp.runs.services.runs import run_receive
from scoring import synthetic
from scoring.logfile import normalise_question
from scoring.runner import score_file
from tests.helpers import make_user

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

CHUNK = 10_000  # answers per chunk: about a second of work, a wide window to kill in
WORKER_APP_NAME = "reviewapp-fault-worker"


@pytest.fixture
def services(settings, tmp_path):
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if not broker.startswith("redis") or connection.vendor != "postgresql":
        if os.environ.get("CI"):
            pytest.fail("CI must run the fault tests against Redis and PostgreSQL (bin/test sets them)")
        pytest.skip("needs CELERY_BROKER_URL=redis://… and DATABASE_URL=postgres://… (bin/test sets them)")
    return Services(settings=settings, tmp_path=tmp_path, broker=broker)


class Services:
    """Starts and stops workers and beat, and waits for the database to say so."""

    def __init__(self, *, settings, tmp_path: Path, broker: str):
        db = connection.settings_dict
        self.tmp_path = tmp_path
        self.broker = broker
        self.env = {
            **os.environ,
            "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}",
            "REVIEWAPP_DATA_DIR": str(settings.DATA_DIR),
            "REVIEWAPP_SCORING_CHUNK": str(CHUNK),
            "WORK_LEASE_SECONDS": "2",
            "WORK_STALE_SECONDS": "3",
            "WORK_SWEEP_SECONDS": "1",
            # libpq names the workers' connections, so a test can cut theirs alone.
            "PGAPPNAME": WORKER_APP_NAME,
        }
        settings.SCORING_CHUNK_ANSWERS = CHUNK
        self.processes: list[subprocess.Popen] = []
        self.logs: list[Path] = []
        app.conf.task_always_eager = False
        app.control.purge()  # tasks left by an earlier, interrupted run

    def start(self, *command: str) -> subprocess.Popen:
        log = self.tmp_path / f"{command[0]}-{len(self.logs)}.log"
        self.logs.append(log)
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "reviewapp", *command, "--loglevel", "INFO"],
            env={**self.env, "CELERY_BROKER_URL": self.broker},
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
        )
        self.processes.append(process)
        return process

    def worker(self) -> subprocess.Popen:
        return self.start(
            "worker", "-P", "solo", "--without-heartbeat", "--without-mingle", "--without-gossip"
        )

    def beat(self) -> subprocess.Popen:
        return self.start("beat", "--schedule", str(self.tmp_path / f"beat-{len(self.logs)}"))

    def stop_all(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()

    def wait(self, condition, *, seconds: float = 90, what: str = "") -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if condition():
                return
            time.sleep(0.02)
        logs = "\n".join(f"--- {log.name}\n{log.read_text()[-3000:]}" for log in self.logs)
        pytest.fail(f"not within {seconds} s: {what}\n{logs}")


@pytest.fixture
def running(services):
    yield services
    services.stop_all()


def generated_run(tmp_path: Path, *, answers: int, version: str) -> tuple[Path, dict]:
    """A question set stored in the app (all of it tuning, so that the app's
    "all" is the library's) and a run file answering it."""
    questions = synthetic.generate_question_set(questions=answers, seed=11, set_version=version)
    for question in questions:
        question["split"] = "tuning"
    set_version_create(version=version, questions=[normalise_question(q) for q in questions])
    path = tmp_path / f"answers_run_bot-9_set-{version}.jsonl"
    synthetic.write_jsonl(path, synthetic.generate_run(question_set=questions, answers=answers, seed=12))
    return path, {q["question_id"]: normalise_question(q) for q in questions}


def upload(path: Path) -> Run:
    return run_receive(upload=SimpleUploadedFile(path.name, path.read_bytes())).run


def assert_counts_equal_a_clean_run(run: Run, path: Path, questions: dict) -> None:
    clean = score_file(path, questions)
    scoring = Scoring.objects.get(run=run)
    assert (scoring.status, scoring.error) == ("done", "")
    stored = {}
    for score in Score.objects.filter(scoring=scoring):
        stored.setdefault(score.slice, {})[score.measure] = {
            "k": score.k,
            "n": score.n,
            "clusters": score.clusters,
        }
    # The counts and how their units cluster, as the library gives them.
    assert {name: stored[name] for name in clean.slices} == clean.slices
    # Nothing stored twice: one check per answer, the clean run's findings.
    assert Answer.objects.filter(run=run).count() == clean.answers
    assert AnswerCheck.objects.filter(scoring=scoring).count() == clean.answers
    assert Finding.objects.filter(scoring=scoring).count() == len(clean.findings)


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


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def broker_at(url: str):
    """Point this process's Celery app at another broker for a while."""
    # broker_url comes from Django's settings and cannot be changed on the
    # app once read; the write URL, which sending uses, can.
    app.conf.broker_write_url = url
    app._pool = None
    app.amqp._producer_pool = None
    try:
        yield
    finally:
        app.conf.broker_write_url = None
        app._pool = None
        app.amqp._producer_pool = None


def test_an_upload_while_redis_is_down_waits_and_is_scored_when_it_is_back(running, tmp_path):
    path, questions = generated_run(tmp_path, answers=5_000, version="fault-redis")
    port = free_port()
    broker = f"redis://127.0.0.1:{port}/0"
    running.broker = broker
    redis = ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"]
    _, token = ApiToken.issue(user=make_user("pipeline"), name="ci")

    with broker_at(broker):
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

        server = subprocess.Popen(redis, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        running.processes.append(server)
        running.wait(lambda: _answers_ping(port), seconds=10, what="redis to start")
        running.worker()
        running.beat()
        running.wait(
            lambda: Scoring.objects.filter(run=run, status__in=("done", "failed")).exists(),
            what="the sweep to queue the waiting run once Redis was back, and the run to be scored",
        )
        assert Run.objects.get(id=run.id).queued_at is not None
        assert_counts_equal_a_clean_run(run, path, questions)


def _answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class SlowJudgeServer:
    """An OpenAI-compatible endpoint that answers every chat completion with a
    relevance verdict after ``delay_s``, and counts the requests it answered."""

    def __init__(self, *, delay_s: float):
        import json
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        counter = {"answered": 0}
        lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                time.sleep(delay_s)
                body = json.dumps(
                    {
                        "id": "x",
                        "object": "chat.completion",
                        "created": 0,
                        "model": "slow-judge",
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": '{"score": 4, "reason": "fine"}'},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 100, "completion_tokens": 9, "total_tokens": 109},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                with lock:
                    counter["answered"] += 1

            def log_message(self, *args):
                pass

        self.counter = counter
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_a_worker_killed_mid_judging_loses_no_verdict_and_stores_none_twice(running, tmp_path):
    from reviewapp.judges.services import judge_versions, judging
    from reviewapp.models import JudgeChunk, JudgeRun, ModelVerdict

    path, _ = generated_run(tmp_path, answers=400, version="fault-judge")
    server = SlowJudgeServer(delay_s=0.1)
    running.env["FAULT_JUDGE_KEY"] = "sk-fault-judge"
    try:
        first = running.worker()
        running.beat()
        run = upload(path)
        running.wait(
            lambda: Scoring.objects.filter(run=run, status="done").exists(), what="the run to be scored"
        )
        version = judge_versions.judge_version_save(
            name="slow",
            provider="openai",
            model="slow-judge",
            base_url=server.url,
            key_variable="FAULT_JUDGE_KEY",
            metrics=["answer_relevance"],
            concurrency=4,
        )
        judge_run = judging.judge_run_confirm(
            judge_run=judging.judge_run_estimate(judge_versions=[version], run=Run.objects.get(id=run.id))
        )
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
        assert calls <= server.counter["answered"] <= calls + version.concurrency
    finally:
        server.close()
