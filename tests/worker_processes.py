"""Celery workers and beat as real processes against the test's PostgreSQL
database and Redis, with short leases so that the sweep acts in seconds:
for the tests of faults, of limits across workers and of hosts that share
no disk (tests/app/core/conftest.py makes the ``services`` and ``running``
fixtures from it)."""

import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection

from reviewapp.celery import app
from reviewapp.models import Answer, AnswerCheck, Finding, Run, Score, Scoring
from reviewapp.runs.services.question_sets import set_version_create
from reviewapp.runs.services.runs import run_receive
from scoring import synthetic
from scoring.logfile import normalise_question
from scoring.runner import score_file

CHUNK = 10_000  # answers per chunk: about a second of work, a wide window to kill in
JUDGE_KEY_VARIABLE = "LOCAL_JUDGE_API_KEY"
WORKER_APP_NAME = "reviewapp-fault-worker"


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
            # A killed worker's judge call slots come back in seconds, not the default 30.
            "REVIEWAPP_CALL_SLOT_LEASE_SECONDS": "3",
            # libpq names the workers' connections, so a test can cut theirs alone.
            "PGAPPNAME": WORKER_APP_NAME,
            # The key of the local provider's judges (judge_by), which listen on 127.0.0.1.
            JUDGE_KEY_VARIABLE: "sk-local-judge",
            "REVIEWAPP_JUDGE_BASE_URLS": "http://127.0.0.1",
            "REVIEWAPP_JUDGE_PRIVATE_ADDRESSES": "1",
        }
        settings.SCORING_CHUNK_ANSWERS = CHUNK
        self.processes: list[subprocess.Popen] = []
        self.logs: list[Path] = []
        app.conf.task_always_eager = False
        app.control.purge()  # tasks left by an earlier, interrupted run

    def start(self, *command: str, env: dict | None = None) -> subprocess.Popen:
        """``celery -A reviewapp <command>``, with ``env`` over the services' environment."""
        return self.spawn(
            [sys.executable, "-m", "celery", "-A", "reviewapp", *command, "--loglevel", "INFO"],
            name=command[0],
            env=env,
        )

    def spawn(self, argv: list[str], *, name: str, env: dict | None = None) -> subprocess.Popen:
        """A process of the services, its output in a log the failures show."""
        log = self.tmp_path / f"{name}-{len(self.logs)}.log"
        self.logs.append(log)
        process = subprocess.Popen(
            argv,
            env={**self.env, "CELERY_BROKER_URL": self.broker, **(env or {})},
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
        )
        self.processes.append(process)
        return process

    def worker(self, **env: str) -> subprocess.Popen:
        return self.start(
            "worker", "-P", "solo", "--without-heartbeat", "--without-mingle", "--without-gossip", env=env
        )

    def beat(self, **env: str) -> subprocess.Popen:
        return self.start("beat", "--schedule", str(self.tmp_path / f"beat-{len(self.logs)}"), env=env)

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


def judge_by(running, run: Run, server, *, name: str, concurrency: int = 4):
    """Once ``run`` is scored, start judging its answers' relevance with a
    judge version on ``server`` (tests.provider_servers.SlowJudgeServer)."""
    from reviewapp.judges.services import judge_versions, judging

    running.wait(lambda: Scoring.objects.filter(run=run, status="done").exists(), what="the run to be scored")
    version = judge_versions.judge_version_save(
        name=name,
        provider="openai",
        model="slow-judge",
        base_url=server.url,
        key_variable=JUDGE_KEY_VARIABLE,
        metrics=["answer_relevance"],
        concurrency=concurrency,
    )
    return judging.judge_run_confirm(
        judge_run=judging.judge_run_estimate(judge_versions=[version], run=Run.objects.get(id=run.id))
    )


def require_redis_and_postgres(what: str = "this test") -> str:
    """The Redis broker's URL; skips (fails, in CI) without Redis and PostgreSQL."""
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if not broker.startswith("redis") or connection.vendor != "postgresql":
        if os.environ.get("CI"):
            pytest.fail(f"CI must run {what} against Redis and PostgreSQL (bin/test sets them)")
        pytest.skip("needs CELERY_BROKER_URL=redis://… and DATABASE_URL=postgres://… (bin/test sets them)")
    return broker


class RedisServer:
    """A Redis of the test's own on a free port, to stop and start empty again."""

    def __init__(self):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> subprocess.Popen:
        argv = ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while not self.answers():
            if time.monotonic() > deadline:
                pytest.fail(f"redis did not start on port {self.port}")
            time.sleep(0.02)
        return self.process

    def stop(self) -> None:
        """As a crash would: nothing saved, every queued message gone."""
        self.process.kill()
        self.process.wait(timeout=10)

    def answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False


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
