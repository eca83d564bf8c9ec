"""A figure that rests on one attempt per question says so in one sentence,
the same on every page, and names spec 004's default of three (issue 27,
point 4)."""

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils.html import escape

from reviewapp.models import Run
from reviewapp.versions.gate import gate_run
from tests.fixtures import load_runs_with_attempts
from tests.helpers import BaseTestCase

SET = "one-attempt-1"


def one_attempt(figures: str, who: str = "") -> str:
    """The sentence as every page gives it."""
    return (
        f"One attempt per question{f' ({who})' if who else ''}: {figures} rest on a single attempt at "
        "each question, so no stable-resolution rate is shown (it takes repeated attempts to tell a "
        "question answered right every time from one answered right once). Spec 004's default is "
        "three attempts per question."
    )


class OneAttemptNoteTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        load_runs_with_attempts(
            version=SET, questions=20, seed=51, attempts={"once-1.0": 1, "once-1.1": 1, "thrice-1.2": 3}
        )

    def setUp(self):
        self.client.force_login(self.manager)

    def run_page(self, label: str):
        run = Run.objects.get(assistant_version__label=label)
        return self.client.get(reverse("run-detail", args=[run.id]))

    def test_the_run_page_says_its_rates_rest_on_one_attempt(self):
        self.assertContains(self.run_page("once-1.0"), escape(one_attempt("this run's rates")), count=1)
        self.assertNotContains(self.run_page("thrice-1.2"), "One attempt per question")

    def test_the_version_page_says_its_rates_rest_on_one_attempt(self):
        page = self.client.get(reverse("version-dashboard", args=["once-1.0"]), {"set": SET})
        self.assertContains(page, escape(one_attempt("this version's rates")), count=1)
        page = self.client.get(reverse("version-dashboard", args=["thrice-1.2"]), {"set": SET})
        self.assertNotContains(page, "One attempt per question")

    def test_the_version_page_of_one_attempt_reads_no_attempts_grade(self):
        # Its stable resolution is the note alone: a million answers' grades took it 3.6 s.
        with CaptureQueriesContext(connection) as queries:
            page = self.client.get(reverse("version-dashboard", args=["once-1.0"]), {"set": SET})
        self.assertContains(page, escape(one_attempt("the grades")), count=0)
        answers = [q["sql"] for q in queries.captured_queries if 'FROM "reviewapp_answer"' in q["sql"]]
        self.assertEqual(answers, [])

    def test_the_compare_page_names_the_versions_that_made_one_attempt(self):
        figures = "the paired differences and the common subset"
        both = {"baseline": "once-1.0", "candidate": "once-1.1", "set": SET}
        page = self.client.get(reverse("version-compare"), both)
        self.assertContains(page, escape(one_attempt(figures, "both versions")), count=1)
        one = {"baseline": "once-1.1", "candidate": "thrice-1.2", "set": SET}
        page = self.client.get(reverse("version-compare"), one)
        self.assertContains(page, escape(one_attempt(figures, "once-1.1")), count=1)

    def test_the_gate_page_names_the_versions_that_made_one_attempt(self):
        figures = "the gate's paired differences"
        both = {"baseline": "once-1.0", "candidate": "once-1.1", "set": SET}
        page = self.client.get(reverse("version-gate"), both)
        self.assertContains(page, escape(one_attempt(figures, "both versions")), count=1)
        one = {"baseline": "once-1.1", "candidate": "thrice-1.2", "set": SET, "unequal_attempts": "true"}
        page = self.client.get(reverse("version-gate"), one)
        self.assertContains(page, escape(one_attempt(figures, "once-1.1")), count=1)

    def test_the_gate_gives_the_sentence_in_its_answer_for_the_api_and_the_command(self):
        answer = gate_run(baseline="once-1.1", candidate="thrice-1.2", set_version=SET, unequal_attempts=True)
        self.assertEqual(answer["one_attempt"], one_attempt("the gate's paired differences", "once-1.1"))
        answer = gate_run(baseline="once-1.0", candidate="once-1.1", set_version=SET)
        self.assertEqual(answer["one_attempt"], one_attempt("the gate's paired differences", "both versions"))
