"""An Inspect log whose run did not finish, on the import page, the run page
and POST /api/imports: its status and how much of its plan it holds are
said, and the samples it planned and lacks are cancelled attempts."""

import tempfile
from pathlib import Path

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import TestCase
from django.urls import reverse

from reviewapp.models import ApiToken, Run
from tests.app.runs import test_views_imports
from tests.helpers import PASSWORD, make_user
from tests.inspect_logs import statistics_samples, write_inspect_log

NOTE = (
    "the log's status is started: 3 of the 5 planned samples are present (5 samples x 1 epoch); "
    "the 2 not run are imported as cancelled attempts, counted in N"
)


def interrupted_log() -> SimpleUploadedFile:
    """An interrupted run's log (its journal alone) holding 3 of its 5 samples."""
    with tempfile.TemporaryDirectory() as folder:
        path = write_inspect_log(
            Path(folder) / "interrupted.eval",
            samples=statistics_samples(3),
            sample_ids=[1, 2, 3, 4, 5],
            layout="journal",
            status="started",
        )
        return SimpleUploadedFile("interrupted.eval", path.read_bytes())


class IncompleteLogPageTests(TestCase):
    def setUp(self):
        make_user("lead")
        self.client.login(username="lead", password=PASSWORD)

    def test_it_says_the_logs_status_and_plan_then_counts_the_attempts_not_run(self):
        page = self.client.post(reverse("run-import"), {"file": interrupted_log()})
        self.assertContains(page, "· 3 of 5 planned samples · status started ·")
        self.assertContains(page, NOTE.replace("the log's", "The log&#x27;s", 1) + ".")
        done = test_views_imports.ImportPageTests.confirm(
            self, page.context["form"].initial["key"], "gpt-4o", "stats-1"
        )
        run = Run.objects.get()
        self.assertRedirects(done, reverse("run-detail", args=[run.id]), fetch_redirect_response=False)
        self.assertEqual(run.imported_from, f"Inspect AI eval log: interrupted.eval ({NOTE})")
        statuses = sorted((a.question_id, a.status) for a in run.answers.all())
        self.assertEqual(
            statuses, [("1", "ok"), ("2", "ok"), ("3", "ok"), ("4", "cancelled"), ("5", "cancelled")]
        )
        detail = self.client.get(reverse("run-detail", args=[run.id]))
        self.assertContains(detail, NOTE.replace("'", "&#x27;"))


class IncompleteLogApiTests(TestCase):
    def setUp(self):
        _, key = ApiToken.issue(user=make_user("pipeline"), name="ci")
        self.auth = {"HTTP_AUTHORIZATION": f"Bearer {key}"}

    def test_its_preview_and_its_run_say_the_same_as_the_page(self):
        shown = self.client.post("/api/imports", {"file": interrupted_log(), "preview": "true"}, **self.auth)
        self.assertEqual(shown.status_code, 200, shown.content)
        body = shown.json()
        self.assertEqual(
            (body["status"], body["samples"], body["planned"], body["note"]), ("started", 3, 5, NOTE)
        )
        with self.captureOnCommitCallbacks(execute=True):
            made = self.client.post("/api/imports", {"file": interrupted_log()}, **self.auth)
        self.assertEqual(made.status_code, 201, made.content)
        self.assertEqual(made.json()["imported_from"], f"Inspect AI eval log: interrupted.eval ({NOTE})")
        self.assertEqual(Run.objects.get().answers.filter(status="cancelled").count(), 2)
