"""A paired sample compares each run's first attempt: with runs of several
attempts per question the pages say which attempt a pair holds, and with
runs of one attempt they say the figures rest on it (issue 27, point 4)."""

from django.urls import reverse

from reviewapp.paired.services import paired_draw
from tests.fixtures import load_runs_with_attempts
from tests.helpers import BaseTestCase

SET = "paired-attempts-1"


class PairedAttemptsTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        cls.runs = load_runs_with_attempts(
            version=SET, questions=12, seed=61, attempts={"pa-1.0": 3, "pa-1.1": 3, "pa-1.2": 1, "pa-1.3": 1}
        )

    def setUp(self):
        self.client.force_login(self.lead)

    def detail(self, a: str, b: str):
        sample = paired_draw(run_a=self.runs[a], run_b=self.runs[b], size=4, seed=1)
        return self.client.get(reverse("paired-detail", args=[sample.id]))

    def test_it_says_a_pair_of_runs_with_three_attempts_compares_attempt_1(self):
        page = self.detail("pa-1.0", "pa-1.1")
        self.assertContains(
            page,
            "Each pair compares attempt 1 of each run (run A made 3 attempts per question, run B 3): "
            "the figures below rest on that one attempt per question, and the other attempts are not "
            "read here.",
            count=1,
        )
        self.assertNotContains(page, "One attempt per question")

    def test_it_says_so_when_one_run_made_three_attempts_and_the_other_one(self):
        page = self.detail("pa-1.0", "pa-1.2")
        self.assertContains(
            page, "Each pair compares attempt 1 of each run (run A made 3 attempts per question, run B 1)"
        )

    def test_with_runs_of_one_attempt_it_gives_the_sentence_every_page_gives(self):
        page = self.detail("pa-1.2", "pa-1.3")
        self.assertContains(
            page,
            "One attempt per question: the settled pairs&#x27; figures rest on a single attempt at each "
            "question, so no stable-resolution rate is shown",
            count=1,
        )

    def test_the_draw_form_names_each_runs_attempts_per_question(self):
        page = self.client.get(reverse("paired-new"))
        run = self.runs["pa-1.0"]
        self.assertContains(
            page, f"run {run.id} · pa-1.0 on set {SET} · 36 answers · 3 attempts per question"
        )
        self.assertContains(
            page, "with runs of several attempts per question, a pair compares attempt 1 of each"
        )
