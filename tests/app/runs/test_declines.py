"""A set or run with no question expecting a decline says so wherever it is
shown (spec 000: "No refusal cases. An assistant that answers everything
scores well.")."""

import json

from django.test import TestCase
from django.urls import reverse
from django.utils.html import escape

from reviewapp.models import ApiToken, Run
from scoring.declines import NO_DECLINE_WARNING
from tests.conftest import SHARED_DATA
from tests.helpers import PASSWORD, example_file, jsonl, make_user

RUN_FILE = "answers_run_assistant-1.3_set-1.2.jsonl"


def answers_only_set():
    """Set 1.2 without its two decline questions."""
    lines = (SHARED_DATA / "questions_set-1.2.jsonl").read_text().splitlines()
    kept = [line for line in lines if json.loads(line).get("expected_behaviour") != "decline"]
    return jsonl(*kept, name="questions_set-1.2.jsonl")


class NoDeclineWarningTests(TestCase):
    def setUp(self):
        self.user = make_user("lead")
        self.client.login(username="lead", password=PASSWORD)
        _, key = ApiToken.issue(user=self.user, name="ci")
        self.auth = {"HTTP_AUTHORIZATION": f"Bearer {key}"}

    def upload(self, set_file):
        with self.captureOnCommitCallbacks(execute=True):
            self.client.post(reverse("set-list"), {"file": set_file})
            self.client.post(reverse("run-upload"), {"file": example_file(RUN_FILE)})
        return Run.objects.get()

    def test_it_warns_on_the_set_page_the_run_page_and_the_api(self):
        run = self.upload(answers_only_set())
        warning = NO_DECLINE_WARNING.format(what="set 1.2")
        self.assertContains(self.client.get(reverse("set-detail", args=["1.2"])), escape(warning))
        self.assertContains(self.client.get(run.get_absolute_url()), escape(warning))
        body = self.client.get(f"/api/runs/{run.id}", **self.auth).json()
        self.assertEqual(body["warnings"], [warning])

    def test_it_warns_when_a_set_without_declines_is_uploaded_through_the_api(self):
        with self.captureOnCommitCallbacks(execute=True):
            response = self.client.post("/api/question-sets", {"file": answers_only_set()}, **self.auth)
        self.assertEqual(response.status_code, 201)
        self.assertEqual(response.json()["warnings"], [NO_DECLINE_WARNING.format(what="set 1.2")])

    def test_it_does_not_warn_when_the_set_holds_decline_questions(self):
        run = self.upload(example_file("questions_set-1.2.jsonl"))
        self.assertNotContains(self.client.get(reverse("set-detail", args=["1.2"])), "expects a decline")
        self.assertNotContains(self.client.get(run.get_absolute_url()), "expects a decline")
        self.assertEqual(self.client.get(f"/api/runs/{run.id}", **self.auth).json()["warnings"], [])


def answers_only_run():
    """The example run without its answers to the two decline questions."""
    lines = (SHARED_DATA / RUN_FILE).read_text().splitlines()
    kept = [line for line in lines if json.loads(line).get("question_id") not in ("a06", "a08")]
    return jsonl(*kept, name=RUN_FILE)


def renamed_set(set_file, version: str):
    """``set_file``'s questions under the header of set version ``version``."""
    lines = set_file.read().decode().splitlines()
    return jsonl({"set_version": version}, *lines[1:], name=f"questions_set-{version}.jsonl")


class NoDeclineWarningListTests(TestCase):
    """The set list and the version's dashboard say it too, in the same words."""

    def setUp(self):
        make_user("lead")
        self.client.login(username="lead", password=PASSWORD)

    def test_it_warns_on_the_set_list_for_the_version_without_declines_only(self):
        self.client.post(reverse("set-list"), {"file": example_file("questions_set-1.2.jsonl")})
        self.client.post(reverse("set-list"), {"file": renamed_set(answers_only_set(), "1.2-nodecline")})
        response = self.client.get(reverse("set-list"))
        self.assertContains(response, escape(NO_DECLINE_WARNING.format(what="set 1.2-nodecline")), count=1)
        self.assertNotContains(response, escape(NO_DECLINE_WARNING.format(what="set 1.2")))

    def test_it_warns_on_the_dashboard_of_a_version_whose_runs_had_none(self):
        with self.captureOnCommitCallbacks(execute=True):
            self.client.post(reverse("set-list"), {"file": answers_only_set()})
            self.client.post(reverse("run-upload"), {"file": answers_only_run()})
        response = self.client.get(reverse("version-dashboard", args=["assistant-1.3"]))
        self.assertEqual(response.context["warnings"], [NO_DECLINE_WARNING.format(what="set 1.2")])
        self.assertContains(response, escape(NO_DECLINE_WARNING.format(what="set 1.2")), count=1)

    def test_it_does_not_warn_on_the_dashboard_when_the_set_has_declines(self):
        with self.captureOnCommitCallbacks(execute=True):
            self.client.post(reverse("set-list"), {"file": example_file("questions_set-1.2.jsonl")})
            self.client.post(reverse("run-upload"), {"file": example_file(RUN_FILE)})
        response = self.client.get(reverse("version-dashboard", args=["assistant-1.3"]))
        self.assertEqual(response.context["warnings"], [])
