"""A run with three attempts per question, timings and timeouts, through
ingest, scoring and the run page; its figures equal the library's."""

from django.test import TestCase

from reviewapp.models import Scoring
from reviewapp.services.question_sets import set_version_create
from reviewapp.services.runs import run_receive
from scoring import synthetic
from scoring.logfile import normalise_question
from scoring.runner import score_file
from tests.helpers import PASSWORD, jsonl, make_user


class RepeatedRunTests(TestCase):
    @classmethod
    def setUpTestData(cls):
        questions = synthetic.generate_question_set(questions=90, seed=21, set_version="rep-1")
        for question in questions:
            question["split"] = "tuning"
        set_version_create(version="rep-1", questions=[normalise_question(q) for q in questions])
        # 80 of the 90 questions are asked, three times each; a few attempts time out.
        rows = synthetic.generate_run(
            question_set=questions, answers=80, seed=22, repetitions=3, timeout_share=0.05
        )
        header = {"assistant_version": "rep-bot-1", "set_version": "rep-1", "repetitions": 3}
        cls.rows = rows
        with cls.captureOnCommitCallbacks(execute=True):
            cls.run_obj = run_receive(
                upload=jsonl(header, *rows, name="answers_run_rep-bot-1_set-rep-1.jsonl")
            ).run
        cls.run_obj.refresh_from_db()
        cls.scoring = Scoring.objects.get(run=cls.run_obj)
        cls.questions = {q["question_id"]: normalise_question(q) for q in questions}
        cls.lead = make_user("lead")

    def library(self, tmp_path="/tmp"):
        import tempfile
        from pathlib import Path

        path = Path(tempfile.mkdtemp()) / "run.jsonl"
        synthetic.write_jsonl(path, self.rows, header={"repetitions": 3})
        return score_file(path, self.questions)

    def test_it_scores_n_equal_to_q_times_r_with_the_missing_attempts_not_run(self):
        self.assertEqual((self.run_obj.repetitions, self.scoring.status), (3, "done"))
        self.assertEqual(self.scoring.not_run, 10 * 3)
        clean = self.library()
        stored = {s.measure: (s.k, s.n) for s in self.scoring.scores.filter(slice="all")}
        self.assertEqual(stored, {m: (c["k"], c["n"]) for m, c in clean.slices["all"].items()})

    def test_it_keeps_stable_resolution_equal_to_the_librarys(self):
        clean = self.library().stable["all"]
        for measure, figure in clean.items():
            stored = self.scoring.stable["all"][measure]
            self.assertEqual(stored["stable"], figure["stable"], measure)
            self.assertEqual(stored["distribution"], figure["distribution"], measure)
        # Ten questions never asked failed all three attempts.
        self.assertGreaterEqual(clean["numeric_accuracy"]["distribution"]["0 of 3"], 1)

    def test_it_keeps_timeouts_out_of_latency_and_counts_them(self):
        timeouts = sum(row.get("status") == "timeout" for row in self.rows)
        overall = self.scoring.timing["all"]
        self.assertEqual(overall["failures"]["counts"]["timeout"], timeouts)
        self.assertEqual(overall["e2e"]["by_source"]["timestamps"]["n"], len(self.rows) - timeouts)
        self.assertEqual(overall["failures"]["wait"]["p50"], 600.0)
        self.assertEqual(overall["e2e"]["by_source"]["timestamps"]["question_medians"]["n"], 80)

    def test_the_run_page_shows_n_stable_resolution_and_timing(self):
        self.client.login(username="lead", password=PASSWORD)
        page = self.client.get(self.run_obj.get_absolute_url())
        self.assertContains(page, "N = 90 questions × 3 = <strong>270</strong> attempts", html=False)
        self.assertContains(page, "Stable resolution")
        self.assertContains(page, "passed in r of R")
        self.assertContains(page, "Timing")
        self.assertContains(page, "nearest-rank")
