"""What *Upload a run* says when the file is not what it takes: another
tool's file is named and pointed at *Import* (issue 25, point 6); the same
file sent again with other versions leads to its run, says what was not
applied and offers to score it again (point 5)."""

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import TestCase
from django.urls import reverse

from reviewapp.models import ApiToken, Run
from tests.app.runs.test_views_imports import example
from tests.helpers import PASSWORD, example_file, make_user

RUN_FILE = "answers_run_assistant-1.3_set-1.2.jsonl"


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


class SameFileAgainTests(TestCase):
    def setUp(self):
        make_user("lead")
        self.client.login(username="lead", password=PASSWORD)
        for name in ("questions_set-1.2.jsonl",):
            with self.captureOnCommitCallbacks(execute=True):
                self.client.post(reverse("set-list"), {"file": example_file(name)})
        with self.captureOnCommitCallbacks(execute=True):
            self.client.post(reverse("run-upload"), {"file": example_file(RUN_FILE)})
        self.run_obj = Run.objects.get()
        # Another version of the set, to score the same answers against.
        questions = example_file("questions_set-1.2.jsonl").read().decode().replace('"1.2"', '"1.2b"')
        with self.captureOnCommitCallbacks(execute=True):
            self.client.post(
                reverse("set-list"),
                {"file": SimpleUploadedFile("questions_set-1.2b.jsonl", questions.encode())},
            )

    def test_sending_it_again_with_other_versions_says_they_were_not_applied_and_offers_a_rescore(self):
        # It led to the old run and dropped what was typed, without a word.
        with self.captureOnCommitCallbacks(execute=True):
            response = self.client.post(
                reverse("run-upload"),
                {"file": example_file(RUN_FILE), "assistant_version": "assistant-9", "set_version": "1.2b"},
                follow=True,
            )
        self.assertEqual(Run.objects.count(), 1)
        self.assertRedirects(response, reverse("run-detail", args=[self.run_obj.id]) + "?rescore=1.2b")
        self.assertContains(response, f"This file was uploaded before as run {self.run_obj.id}")
        self.assertContains(
            response, "the assistant version assistant-9 and set version 1.2b you typed were not applied"
        )
        # The rescore form is open, on the set version typed.
        self.assertContains(response, '<details class="rescore" open>')
        self.assertEqual(response.context["rescore_form"].initial["set_version"], "1.2b")

    def test_sending_it_again_as_it_was_just_leads_to_the_run(self):
        with self.captureOnCommitCallbacks(execute=True):
            response = self.client.post(reverse("run-upload"), {"file": example_file(RUN_FILE)}, follow=True)
        self.assertContains(response, "This file was uploaded before")
        self.assertNotContains(response, "not applied")
