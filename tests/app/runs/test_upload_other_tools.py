"""Another tool's file sent to *Upload a run* is named as that tool's and
pointed at *Import*, which reads it; nothing is stored (issue 25, point 6)."""

from django.test import TestCase
from django.urls import reverse

from reviewapp.models import ApiToken, Run
from tests.app.runs.test_views_imports import example
from tests.helpers import PASSWORD, make_user


class OtherToolsOnUploadTests(TestCase):
    def setUp(self):
        make_user("lead")
        self.client.login(username="lead", password=PASSWORD)

    def test_an_inspect_log_is_named_and_sent_to_import(self):
        for name in ("inspect_example.eval", "inspect_example.json"):
            with self.subTest(name):
                response = self.client.post(reverse("run-upload"), {"file": example(name)})
                self.assertContains(response, f"{name}: this is an Inspect AI eval log", status_code=400)
                self.assertNotContains(response, "decompress it", status_code=400)
                self.assertContains(
                    response, f'<a href="{reverse("run-import")}">Import it</a>', status_code=400, html=True
                )
        self.assertFalse(Run.objects.exists())

    def test_ragas_and_csv_files_are_sent_to_import_too(self):
        for name, what in (("ragas_example.jsonl", "Ragas-style JSON Lines"), ("answers_example.csv", "CSV")):
            with self.subTest(name):
                response = self.client.post(reverse("run-upload"), {"file": example(name)})
                self.assertContains(response, f"{name}: this is {what}", status_code=400)
                self.assertContains(response, "Import", status_code=400)
        self.assertFalse(Run.objects.exists())

    def test_the_api_says_which_endpoint_reads_it(self):
        _, key = ApiToken.issue(user=make_user("pipeline"), name="ci")
        response = self.client.post(
            "/api/runs", {"file": example("inspect_example.eval")}, HTTP_AUTHORIZATION=f"Bearer {key}"
        )
        self.assertEqual(response.status_code, 400)
        self.assertIn("POST /api/imports", " ".join(response.json()["errors"]))
