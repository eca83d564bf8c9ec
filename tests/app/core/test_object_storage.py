"""Uploads, imports and exports through an S3 file store (issue 29): what a
host receives is checked in its own data folder and put in the store, a
worker reads it back from there, and nothing stays on the host. A store that
cannot be reached or has lost a file is told in a sentence, with nothing
half-stored and work that is tried again."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, TestCase
from django.urls import reverse

from reviewapp.core import files, work
from reviewapp.models import ApiToken, Run, Scoring
from reviewapp.runs.services.imports import PENDING_MAX_AGE_S, pending_sweep
from reviewapp.runs.services.question_sets import set_version_create
from reviewapp.runs.services.runs import run_ingest, run_receive
from scoring import synthetic
from scoring.logfile import normalise_question
from tests.app.runs.test_views_imports import example, ragas_import_fields
from tests.fixtures import load_generated_run
from tests.helpers import PASSWORD, example_file, jsonl, make_user
from tests.object_store import ObjectStore
from tests.provider_servers import closed_port_url

# Real processes: bin/test runs these beside the rest of tests/app.
pytestmark = pytest.mark.integration

RUN_FILE = "answers_run_assistant-1.3_set-1.2.jsonl"


@pytest.fixture(scope="module")
def object_store():
    store = ObjectStore()
    yield store
    store.close()


def files_left(folder) -> list[Path]:
    return [path for path in Path(folder).rglob("*") if path.is_file()]


def received_run() -> Run:
    """A run received (its log in the store) but not yet ingested."""
    questions = synthetic.generate_question_set(questions=20, seed=3, set_version="s-1")
    set_version_create(version="s-1", questions=[normalise_question(q) for q in questions])
    rows = synthetic.generate_run(question_set=questions, answers=20, seed=4)
    return run_receive(upload=jsonl(*rows, name="answers_run_bot-1_set-s-1.jsonl")).run


class InStore:
    """Points the "data" storage at the test's object store, under a prefix of its own."""

    @pytest.fixture(autouse=True)
    def _in_store(self, object_store, settings):
        self.store = object_store
        self.settings = settings
        self.prefix = f"t-{uuid.uuid4().hex[:8]}"
        self.use_store()
        yield

    def use_store(self, **changes):
        # Through pytest-django's fixture, which tells Django's storages to start afresh.
        self.settings.STORAGES = {
            **self.settings.STORAGES,
            "data": self.store.storage(REVIEWAPP_S3_PREFIX=self.prefix, **changes),
        }

    def use_unreachable_store(self):
        self.use_store(REVIEWAPP_S3_ENDPOINT_URL=closed_port_url())

    def names(self, folder: str = "") -> list[str]:
        return [name.removeprefix(f"{self.prefix}/") for name in self.store.names(f"{self.prefix}/{folder}")]


@pytest.mark.django_db
class TestRunsInTheStore(InStore):
    def test_an_uploaded_run_is_kept_in_the_store_scored_from_it_and_exported_from_it(self):
        run = load_generated_run(answers=60)
        assert run.status == Run.Status.STORED
        assert run.answer_count == 60
        assert Scoring.objects.get(run=run).status == Scoring.Status.DONE
        assert self.names("runs/") == [f"runs/{run.sha256}.jsonl"]
        assert run.stored_name == f"runs/{run.sha256}.jsonl"
        # Nothing of the upload or of the worker's copy stays on the host.
        assert files_left(settings.DATA_DIR) == []

        make_user("lead")
        client = Client()
        client.login(username="lead", password=PASSWORD)
        response = client.get(reverse("run-log", args=[run.id]))
        assert response.status_code == 200
        assert b"".join(response.streaming_content) == self.store.read(f"{self.prefix}/{run.stored_name}")

    def test_an_upload_while_the_store_cannot_be_reached_is_refused_and_can_be_sent_again(self):
        user = make_user("pipeline")
        _, key = ApiToken.issue(user=user, name="ci")
        client = Client(HTTP_AUTHORIZATION=f"Bearer {key}")
        client.post("/api/question-sets", {"file": example_file("questions_set-1.2.jsonl")})
        self.use_unreachable_store()
        refused = client.post("/api/runs", {"file": example_file(RUN_FILE)})
        assert refused.status_code == 503
        (message,) = refused.json()["errors"]
        assert message.startswith(f"{RUN_FILE}: the file store could not be reached")
        assert "nothing was stored; send the file again" in message
        assert not Run.objects.exists()
        assert files_left(settings.DATA_DIR) == []

        self.use_store()
        with TestCase.captureOnCommitCallbacks(execute=True):
            again = client.post("/api/runs", {"file": example_file(RUN_FILE)})
        assert again.status_code == 201
        assert Run.objects.get().status == Run.Status.STORED

    def test_the_upload_page_says_the_store_cannot_be_reached(self):
        make_user("lead")
        client = Client()
        client.login(username="lead", password=PASSWORD)
        questions = synthetic.generate_question_set(questions=5, seed=3, set_version="s-1")
        set_version_create(version="s-1", questions=[normalise_question(q) for q in questions])
        rows = synthetic.generate_run(question_set=questions, answers=5, seed=4)
        self.use_unreachable_store()
        upload = jsonl(*rows, name="answers_run_bot-1_set-s-1.jsonl")
        page = client.post(reverse("run-upload"), {"file": upload})
        assert page.status_code == 503
        assert "the file store could not be reached" in page.content.decode()
        assert not Run.objects.exists()

    def test_a_log_gone_from_the_store_fails_its_run_in_a_sentence(self):
        run = received_run()
        self.store.client.delete_object(
            Bucket=self.store.env["REVIEWAPP_S3_BUCKET"], Key=f"{self.prefix}/{run.stored_name}"
        )
        run_ingest(run_id=run.id)
        run.refresh_from_db()
        assert run.status == Run.Status.FAILED
        assert run.error == (
            f"The uploaded log is gone from the file store ({run.stored_name} is not in the file store): "
            "upload the file again."
        )
        make_user("lead")
        client = Client()
        client.login(username="lead", password=PASSWORD)
        assert run.error in client.get(run.get_absolute_url()).content.decode()


@pytest.mark.django_db(transaction=True)
class TestIngestWhileTheStoreIsAway(InStore):
    def test_a_store_away_during_ingest_gives_the_run_back_to_be_tried_again(self, monkeypatch):
        from reviewapp import tasks

        # Received, not ingested: here, after commit, the eager task would ingest it at once.
        monkeypatch.setattr(tasks, "queue_ingest", lambda run_id: True)
        run = received_run()
        self.use_unreachable_store()
        with pytest.raises(files.StoreUnreachable) as raised:
            run_ingest(run_id=run.id)
        assert work.is_transient(raised.value)  # the task retries it, and the sweep after
        run.refresh_from_db()
        assert (run.status, run.lease_until, run.error) == (Run.Status.RECEIVED, None, "")
        assert files_left(Path(settings.DATA_DIR) / files.COPIES) == []

        self.use_store()
        run_ingest(run_id=run.id)
        run.refresh_from_db()
        assert (run.status, run.answer_count) == (Run.Status.STORED, 20)


@pytest.mark.django_db
class TestImportsInTheStore(InStore):
    def test_a_pending_import_waits_in_the_store_and_a_second_confirmation_leads_to_its_run(self):
        make_user("lead")
        client = Client()
        client.login(username="lead", password=PASSWORD)
        fields = ragas_import_fields(client)
        (pending,) = self.names("imports/")
        assert files_left(settings.DATA_DIR) == []
        with TestCase.captureOnCommitCallbacks(execute=True):
            done = client.post(reverse("run-import-confirm"), fields)
        run = Run.objects.get()
        assert done.status_code == 302
        assert run.status == Run.Status.STORED
        # The pending file is put away, with a note of its run.
        assert self.names("imports/") == [f"{pending}.run"]
        again = client.post(reverse("run-import-confirm"), fields)
        assert again.url == run.get_absolute_url()
        assert pending_sweep(max_age_s=-1) == 1
        assert self.names("imports/") == []
        assert files_left(settings.DATA_DIR) == []

    def test_an_import_through_the_api_leaves_nothing_behind(self):
        user = make_user("pipeline")
        _, key = ApiToken.issue(user=user, name="ci")
        client = Client(HTTP_AUTHORIZATION=f"Bearer {key}")
        form = {
            "file": example("ragas_example.jsonl"),
            "assistant_version": "rag-1",
            "set_version": "ragas-1",
            "language": "en",
        }
        with TestCase.captureOnCommitCallbacks(execute=True):
            response = client.post("/api/imports", form)
        assert response.status_code == 201, response.content
        assert Run.objects.get().status == Run.Status.STORED
        assert self.names("imports/") == []
        assert self.names("runs/") == [Run.objects.get().stored_name]
        assert files_left(settings.DATA_DIR) == []

    def test_an_import_while_the_store_cannot_be_reached_is_refused(self):
        make_user("lead")
        client = Client()
        client.login(username="lead", password=PASSWORD)
        self.use_unreachable_store()
        page = client.post(reverse("run-import"), {"file": example("ragas_example.jsonl")})
        assert page.status_code == 503
        assert "the file store could not be reached" in page.content.decode()
        assert files_left(settings.DATA_DIR) == []


def test_a_missing_file_in_the_data_folder_is_told_as_missing(tmp_path, settings):
    settings.DATA_DIR = tmp_path
    with (
        pytest.raises(files.StoredFileMissing, match=r"runs/absent\.jsonl"),
        files.local_copy("runs/absent.jsonl"),
    ):
        pass


@pytest.mark.django_db
class TestFilesInTransit(InStore):
    def test_a_copy_a_killed_worker_left_is_removed_by_the_sweep_after_a_day(self):
        copies = Path(settings.DATA_DIR) / files.COPIES
        copies.mkdir(parents=True)
        left, reading = copies / "left.jsonl", copies / "reading.jsonl"
        left.write_text("{}")
        reading.write_text("{}")
        a_day_ago = time.time() - PENDING_MAX_AGE_S - 60
        os.utime(left, (a_day_ago, a_day_ago))
        assert pending_sweep() == 1
        assert files_left(settings.DATA_DIR) == [reading]


def _big_run(set_version: str, *, answers: int = 150, padding: int = 80_000) -> bytes:
    """A run log of about 12 MB (answers × padding): past two parts of 5 MB."""
    questions = synthetic.generate_question_set(questions=answers, seed=5, set_version=set_version)
    set_version_create(version=set_version, questions=[normalise_question(q) for q in questions])
    rows = synthetic.generate_run(question_set=questions, answers=answers, seed=6)
    for row in rows:
        row["answer"] = f"{row['answer']} {'x' * padding}"
    return ("\n".join(json.dumps(row) for row in rows) + "\n").encode()


@pytest.mark.django_db
class TestLargeUploads(InStore):
    def test_a_large_gzip_run_is_unpacked_on_arrival_and_kept_whole_in_the_store(self):
        log = _big_run("big-1")
        packed = gzip.compress(log, compresslevel=1)
        _, key = ApiToken.issue(user=make_user("pipeline"), name="ci")
        client = Client(HTTP_AUTHORIZATION=f"Bearer {key}")
        sent = client.post(
            "/api/runs", {"file": SimpleUploadedFile("answers_run_bot-1_set-big-1.jsonl.gz", packed)}
        )
        assert sent.status_code == 201, sent.content
        run = Run.objects.get()
        assert (run.sha256, run.size_bytes) == (hashlib.sha256(log).hexdigest(), len(log))
        assert self.store.read(f"{self.prefix}/{run.stored_name}") == log
        assert files_left(settings.DATA_DIR) == []
