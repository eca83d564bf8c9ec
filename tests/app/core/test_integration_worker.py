"""Upload over HTTP to the live app, score on a real Celery worker through
Redis, with PostgreSQL shared between them: the production path."""

import json
import os
import subprocess
import sys
import time
import urllib.request
import uuid

import pytest
from django.db import connection

from reviewapp.celery import app
from reviewapp.models import ApiToken
from tests.conftest import SHARED_DATA
from tests.helpers import make_user
from tests.worker_processes import require_redis_and_postgres

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def multipart(path, fields=None):
    boundary = uuid.uuid4().hex
    parts = []
    for name, value in (fields or {}).items():
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        )
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{path.name}"\r\n'
        "Content-Type: application/x-ndjson\r\n\r\n".encode()
        + path.read_bytes()
        + b"\r\n"
    )
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def call(url, token, *, file=None):
    headers = {"Authorization": f"Bearer {token}"}
    data = None
    if file is not None:
        data, headers["Content-Type"] = multipart(file)
    request = urllib.request.Request(url, data=data, headers=headers, method="POST" if file else "GET")
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, json.loads(response.read())


@pytest.fixture
def worker(settings, tmp_path):
    require_redis_and_postgres()
    db = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}",
        "REVIEWAPP_DATA_DIR": str(settings.DATA_DIR),
    }
    app.control.purge()  # tasks left by an earlier, interrupted run
    log = open(tmp_path / "worker.log", "w+")  # noqa: SIM115 - read back after the test
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "reviewapp",
            "worker",
            "-P",
            "solo",
            "--loglevel",
            "INFO",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    app.conf.task_always_eager = False
    try:
        yield log
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def test_it_scores_an_http_upload_on_a_real_worker(live_server, worker):
    _, token = ApiToken.issue(user=make_user("pipeline"), name="ci")
    status, created = call(
        f"{live_server.url}/api/question-sets", token, file=SHARED_DATA / "questions_set-1.2.jsonl"
    )
    assert (status, created["questions"]) == (201, 8)

    status, run = call(
        f"{live_server.url}/api/runs",
        token,
        file=SHARED_DATA / "answers_run_assistant-1.3_set-1.2.jsonl",
    )
    assert status == 201

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        _, run = call(f"{live_server.url}/api/runs/{run['id']}", token)
        if run["scorings"] and run["scorings"][0]["status"] in ("done", "failed"):
            break
        time.sleep(0.3)
    else:
        worker.seek(0)
        pytest.fail(f"no scores within 60 s; last state {run}; worker log:\n{worker.read()}")

    assert run["status"] == "stored"
    assert run["answers"] == 8
    scores = run["scorings"][0]["scores"]
    assert {m: (c["k"], c["n"]) for m, c in scores["all"].items()} == {
        "numeric_accuracy": (5, 6),
        "citation_validity": (7, 8),
        "refusal_accuracy": (1, 2),
        "answer_rate": (6, 6),
        "unsupported_numbers": (2, 8),
        "unsupported_answers": (2, 7),
    }
    assert {s for s in scores if s.startswith("language=")} == {"language=en", "language=fr"}
    worker.seek(0)
    log = worker.read()
    assert "ingest_run_task" in log and "score_chunk_task" in log  # the worker did the work
