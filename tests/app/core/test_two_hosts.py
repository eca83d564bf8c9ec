"""Web and workers on hosts that share no disk (issue 29, point 4): a gunicorn
web process and Celery workers, each with a data folder of its own, sharing
only PostgreSQL, Redis and an S3 API (moto's server, on 127.0.0.1). A run
uploaded through the web is ingested and scored by a worker, an import and
an export work, and a worker killed mid-chunk leaves nothing lost."""

import signal
import sys
import time
import urllib.parse
from pathlib import Path

import pytest
import requests
from django.contrib.auth.hashers import PBKDF2PasswordHasher

from reviewapp.models import ApiToken, Run, Scoring, ScoringChunk
from tests.app.runs.test_views_imports import EXAMPLES
from tests.helpers import PASSWORD, make_user
from tests.object_store import ObjectStore
from tests.provider_servers import closed_port_url
from tests.worker_processes import CHUNK, assert_counts_equal_a_clean_run, generated_run

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def hosts(running, tmp_path):
    store = ObjectStore()
    try:
        yield Hosts(running, tmp_path, store)
    finally:
        store.close()


class Hosts:
    def __init__(self, running, tmp_path: Path, store: ObjectStore):
        self.running, self.tmp_path, self.store = running, tmp_path, store
        self.folders: list[Path] = []

    def env(self, host: str) -> dict:
        folder = self.tmp_path / host
        folder.mkdir()
        self.folders.append(folder)
        return {**self.store.env, "REVIEWAPP_DATA_DIR": str(folder)}

    def web(self) -> str:
        port = int(urllib.parse.urlsplit(closed_port_url()).port)
        self.running.spawn(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "reviewapp.wsgi",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                "2",
            ],
            name="web",
            env={**self.env("web"), "DJANGO_ALLOWED_HOSTS": "127.0.0.1"},
        )
        url = f"http://127.0.0.1:{port}"
        self.running.wait(lambda: _answers(url), what="the web process to answer")
        return url

    def worker(self, host: str):
        return self.running.worker(**self.env(host))

    def files_left(self) -> list[Path]:
        return [path for folder in self.folders for path in folder.rglob("*") if path.is_file()]


def _answers(url: str) -> bool:
    try:
        return requests.get(f"{url}/login/", timeout=5).status_code == 200
    except requests.RequestException:
        return False


def test_a_run_and_an_import_go_through_web_and_workers_on_hosts_that_share_no_disk(hosts, tmp_path):
    path, questions = generated_run(tmp_path, answers=3 * CHUNK, version="two-hosts")
    pipeline = make_user("pipeline")
    _, key = ApiToken.issue(user=pipeline, name="ci")
    api = requests.Session()
    api.headers["Authorization"] = f"Bearer {key}"
    first = hosts.worker("worker-a")
    hosts.running.beat(**hosts.env("beat"))
    web = hosts.web()

    with path.open("rb") as stream:
        sent = api.post(f"{web}/api/runs", files={"file": (path.name, stream)}, timeout=60)
    assert sent.status_code == 201, sent.text
    run = Run.objects.get(id=sent.json()["id"])
    assert hosts.store.names("runs/") == [run.stored_name]

    # Killed mid-chunk, the worker's chunk is taken up by another, on another host.
    hosts.running.wait(
        lambda: ScoringChunk.objects.filter(scoring__run=run, status="scoring").exists(),
        what="a chunk being scored",
    )
    time.sleep(0.2)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    hosts.worker("worker-b")
    hosts.running.wait(
        lambda: Scoring.objects.get(run=run).is_final, what="the scoring to finish", seconds=120
    )
    assert_counts_equal_a_clean_run(run, path, questions)

    # An import, previewed and received by the web host, stored by the worker.
    with (EXAMPLES / "ragas_example.jsonl").open("rb") as stream:
        imported = api.post(
            f"{web}/api/imports",
            files={"file": ("ragas_example.jsonl", stream)},
            data={"assistant_version": "rag-1", "set_version": "ragas-1", "language": "en"},
            timeout=60,
        )
    assert imported.status_code == 201, imported.text
    imported_run = Run.objects.get(id=imported.json()["id"])
    hosts.running.wait(
        lambda: Scoring.objects.filter(run=imported_run, status="done").exists(),
        what="the import to be scored",
    )
    assert hosts.store.names("imports/") == []

    # The log exported by the web host, byte for byte as uploaded.
    lead = make_user("lead")
    # The tests hash passwords with MD5 (tests/conftest.py); the web process knows only its own hashers.
    lead.password = PBKDF2PasswordHasher().encode(PASSWORD, PBKDF2PasswordHasher().salt())
    lead.save(update_fields=["password"])
    browser = requests.Session()
    browser.get(f"{web}/login/", timeout=10)
    logged_in = browser.post(
        f"{web}/login/",
        data={"username": "lead", "password": PASSWORD, "csrfmiddlewaretoken": browser.cookies["csrftoken"]},
        headers={"Referer": f"{web}/login/"},
        timeout=10,
    )
    assert logged_in.url.rstrip("/") != f"{web}/login", "the lead could not log in"
    exported = browser.get(f"{web}/runs/{run.id}/log.jsonl", timeout=60)
    assert exported.status_code == 200
    assert exported.content == path.read_bytes()

    # Nothing stays on any host: what each received or read was in transit.
    assert hosts.files_left() == []
