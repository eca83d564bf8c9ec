"""A paired sample compares each run's first attempt: with runs of several
attempts per question the pages say which attempt a pair holds, and with
runs of one attempt they say the figures rest on it (issue 27, point 4)."""

from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from reviewapp.models import Run
from reviewapp.paired.services import paired_draw
from reviewapp.runs.services.question_sets import set_version_create
from reviewapp.runs.services.runs import run_receive
from scoring import synthetic
from scoring.logfile import normalise_question
from tests.app.versions.test_clustered_figures import run_text
from tests.helpers import BaseTestCase

SET = "paired-attempts-1"


class PairedAttemptsTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        questions = synthetic.generate_question_set(questions=12, seed=61, set_version=SET)
        for question in questions:
            question["split"] = "tuning"
        set_version_create(version=SET, questions=[normalise_question(q) for q in questions])
        cls.runs = {}
        for assistant, seed, repetitions in (
            ("pa-1.0", 62, 3), ("pa-1.1", 63, 3), ("pa-1.2", 64, 1), ("pa-1.3", 65, 1),
        ):  # fmt: skip
            text = run_text(
                questions, assistant=assistant, seed=seed, repetitions=repetitions, set_version=SET
            )
            upload = SimpleUploadedFile(f"answers_run_{assistant}_set-{SET}.jsonl", text.encode())
            with cls.captureOnCommitCallbacks(execute=True):
                run_receive(upload=upload)
            cls.runs[assistant] = Run.objects.get(assistant_version__label=assistant)

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
            "One attempt per question: the settled pairs' figures rest on a single attempt at each "
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
