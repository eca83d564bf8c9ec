"""Questions not run and the sealed part, through scoring and the run page."""

import json

from django.urls import reverse

from reviewapp.models import Finding, Score, Scoring
from reviewapp.runs.services.question_sets import set_version_create
from reviewapp.runs.services.runs import run_receive
from scoring.logfile import normalise_question
from tests.conftest import SHARED_DATA
from tests.helpers import PASSWORD, BaseTestCase, example_answers, jsonl


def example_questions() -> list[dict]:
    lines = (SHARED_DATA / "questions_set-1.2.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines[1:]]


class ScoringPartsTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        questions = example_questions()
        # a02 (answered, supported, English) is sealed; z01 and z02 are never answered.
        for question in questions:
            if question["question_id"] == "a02":
                question["split"] = "sealed"
        questions += [
            {
                "question_id": "z01",
                "language": "en",
                "expected_behaviour": "answer",
                "expected_values": [1.0],
            },
            {"question_id": "z02", "language": "fr", "expected_behaviour": "decline", "expected_values": []},
        ]
        set_version_create(version="parts-1", questions=[normalise_question(q) for q in questions])
        with cls.captureOnCommitCallbacks(execute=True):
            received = run_receive(
                upload=jsonl(*example_answers(), name="answers_run_bot-7_set-parts-1.jsonl")
            )
        cls.run_obj = received.run
        cls.scoring = Scoring.objects.get(run=cls.run_obj)

    def score(self, slice_name: str, measure: str) -> tuple[int, int]:
        score = Score.objects.get(scoring=self.scoring, slice=slice_name, measure=measure)
        return score.k, score.n

    def test_it_counts_questions_not_run_as_failures_and_lists_them(self):
        self.assertEqual((self.scoring.status, self.scoring.not_run), ("done", 2))
        # The running example's 5 of 6, less sealed a02 (a hit), plus z01 not run: 4 of 6.
        self.assertEqual(self.score("all", "numeric_accuracy"), (4, 6))
        self.assertEqual(self.score("all", "answer_rate"), (5, 6))
        self.assertEqual(self.score("all", "refusal_accuracy"), (1, 3))
        self.assertEqual(self.score("language=fr", "refusal_accuracy"), (0, 1))
        not_run = Finding.objects.filter(scoring=self.scoring, kind="not_run").order_by("question_id")
        self.assertEqual(
            [(f.question_id, f.answer_id, f.line_number) for f in not_run],
            [("z01", None, None), ("z02", None, None)],
        )
        self.client.login(username="lead", password=PASSWORD)
        page = self.client.get(self.run_obj.get_absolute_url(), {"kind": "not_run"})
        self.assertContains(page, "2 questions of set parts-1 were not run")
        self.assertContains(page, "<code>z01</code>", html=False)

    def test_it_keeps_the_sealed_part_out_of_every_figure_until_a_lead_opens_it(self):
        self.assertEqual(self.scoring.sealed_answers, 1)
        self.assertEqual(self.score("sealed:all", "numeric_accuracy"), (1, 1))
        self.assertFalse(Score.objects.filter(scoring=self.scoring, slice="split=sealed").exists())
        self.client.login(username="lead", password=PASSWORD)
        page = self.client.get(self.run_obj.get_absolute_url())
        self.assertContains(page, "Tuning part only: 1 answer to sealed questions is kept out")
        self.assertNotContains(page, "Sealed part <span")
        api_scores = self.client.get(
            reverse("export-scores", args=[self.run_obj.id, self.scoring.id, "json"])
        )
        self.assertNotIn("sealed:all", api_scores.json()["slices"])
        findings = self.client.get(
            reverse("export-findings", args=[self.run_obj.id, self.scoring.id, "json"])
        )
        self.assertNotIn("a02", {f["question_id"] for f in findings.json()["findings"]})

        # A manager cannot open it; a lead must say why.
        self.client.login(username="manager", password=PASSWORD)
        url = reverse("scoring-open-sealed", args=[self.run_obj.id, self.scoring.id])
        self.assertEqual(self.client.post(url, {"reason": "release"}).status_code, 403)
        self.client.login(username="lead", password=PASSWORD)
        self.client.post(url, {"reason": "  "})
        self.scoring.refresh_from_db()
        self.assertIsNone(self.scoring.sealed_opened_at)
        self.client.post(url, {"reason": "figures for the 2.0 release note"})
        self.scoring.refresh_from_db()
        self.assertEqual(
            (self.scoring.sealed_opened_by, self.scoring.sealed_reason),
            (self.lead, "figures for the 2.0 release note"),
        )
        page = self.client.get(self.run_obj.get_absolute_url())
        self.assertContains(page, "Sealed part <span")
        self.assertContains(page, "figures for the 2.0 release note")
        self.assertIn("sealed:all", self.client.get(
            reverse("export-scores", args=[self.run_obj.id, self.scoring.id, "json"])
        ).json()["slices"])  # fmt: skip
        # Opening is a GET-proof write.
        self.assertEqual(self.client.get(url).status_code, 405)
