"""A run with three attempts per question, timings and timeouts, through
ingest, scoring and the run page; its figures equal the library's."""

import csv
import io

from django.urls import reverse

from reviewapp.models import Scoring
from reviewapp.runs.services.question_sets import set_version_create
from reviewapp.runs.services.runs import run_receive
from scoring import synthetic, timing
from scoring.logfile import normalise_question
from scoring.runner import score_file
from tests.helpers import PASSWORD, BaseTestCase, jsonl


class RepeatedRunTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
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
        # The ten questions never asked failed all three attempts: those
        # expecting an answer all sit in numeric accuracy's "0 of 3".
        asked = {row["question_id"] for row in self.rows}
        unasked = [q for qid, q in self.questions.items() if qid not in asked]
        self.assertEqual(len(unasked), 10)
        expecting = sum(q["expected_behaviour"] == "answer" for q in unasked)
        self.assertGreater(expecting, 0)
        self.assertGreaterEqual(clean["numeric_accuracy"]["distribution"]["0 of 3"], expecting)
        stored = self.scoring.stable["all"]["numeric_accuracy"]
        self.assertEqual(stored["stable"]["n"], sum(stored["distribution"].values()))

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
        # 80 questions asked 3 times = 240 lines; the timed-out ones failed; 10 × 3 not run.
        timeouts = sum(row.get("status") == "timeout" for row in self.rows)
        self.assertEqual(len(self.rows), 240)
        self.assertContains(
            page,
            f"N = 90 questions × 3 = <strong>270</strong> attempts: {240 - timeouts} scored + "
            f"{timeouts} failed (no answer) + 30 not run.",
            html=False,
        )
        # The stored stable figures and distribution, as the table prints them.
        numeric = self.scoring.stable["all"]["numeric_accuracy"]
        self.assertContains(
            page, f'<span class="k-n">{numeric["stable"]["k"]}/{numeric["stable"]["n"]}</span>', html=False
        )
        self.assertContains(
            page, " · ".join(f"{label}: {count}" for label, count in numeric["distribution"].items())
        )
        # The timeout rate of all 240 logged attempts, in the timing table.
        self.assertContains(page, "P90 the nearest-rank ⌈0.9 n⌉-th value")
        self.assertContains(page, f'<span class="k-n">{timeouts}/240</span>', html=False)

    def library_question_times(self) -> list[dict]:
        e2e = self.library().timing["all"]["e2e"]["by_source"]["timestamps"]
        return timing.slowest_questions(e2e["per_question"])

    def test_the_run_page_lists_the_slowest_questions_by_their_median_time(self):
        self.client.login(username="lead", password=PASSWORD)
        page = self.client.get(self.run_obj.get_absolute_url())
        expected = self.library_question_times()
        self.assertEqual(len(expected), 80)
        self.assertContains(page, "Each question's median time")
        self.assertContains(page, "the 20 slowest of 80 questions")
        slowest = expected[0]
        self.assertContains(
            page,
            f'<tr><th scope="row">{slowest["question_id"]}</th><td class="num">{slowest["median_s"]:.2f}</td>'
            f'<td class="num">{slowest["samples"]} of {slowest["attempts"]}</td></tr>',
            html=False,
        )
        self.assertNotContains(page, f'<th scope="row">{expected[20]["question_id"]}</th>', html=False)
        url = reverse("export-question-times", args=[self.run_obj.id, self.scoring.id])
        self.assertContains(page, f'href="{url}"')

    def test_the_csv_export_lists_every_question_slowest_first(self):
        self.client.login(username="lead", password=PASSWORD)
        url = reverse("export-question-times", args=[self.run_obj.id, self.scoring.id])
        response = self.client.get(url)
        self.assertEqual(response["Content-Type"], "text/csv; charset=utf-8")
        rows = list(csv.reader(io.StringIO(response.content.decode())))
        self.assertEqual(
            rows[0], ["run", "scoring", "e2e_source", "question_id", "median_s", "samples", "attempts"]
        )
        expected = [
            [str(self.run_obj.id), str(self.scoring.id), "timestamps", row["question_id"],
             "" if row["median_s"] is None else repr(row["median_s"]), str(row["samples"]), str(row["attempts"])]
            for row in self.library_question_times()
        ]  # fmt: skip
        self.assertEqual(rows[1:], expected)

    def test_the_csv_export_takes_only_get_and_readers_of_runs(self):
        url = reverse("export-question-times", args=[self.run_obj.id, self.scoring.id])
        self.client.login(username="lead", password=PASSWORD)
        self.assertEqual(self.client.post(url).status_code, 405)
        self.client.login(username="outsider", password=PASSWORD)
        self.assertEqual(self.client.get(url).status_code, 403)


class VersionRecordTests(BaseTestCase):
    """Runs of one version on one set form its record: linked, pooled,
    excluded only with a reason, and named wherever figures use them."""

    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        questions = synthetic.generate_question_set(questions=60, seed=31, set_version="rec-1")
        for question in questions:
            question["split"] = "tuning"
        set_version_create(version="rec-1", questions=[normalise_question(q) for q in questions])
        cls.runs = []
        for seed in (32, 33):
            rows = synthetic.generate_run(question_set=questions, answers=60, seed=seed, timeout_share=0.1)
            header = {"assistant_version": "rec-bot-1", "set_version": "rec-1"}
            if cls.runs:
                header["repeats"] = cls.runs[0].id
            with cls.captureOnCommitCallbacks(execute=True):
                run = run_receive(upload=jsonl(header, *rows, name=f"run-{seed}.jsonl")).run
            run.refresh_from_db()
            cls.runs.append(run)

    def setUp(self):
        self.client.login(username="lead", password=PASSWORD)

    def all_counts(self, run):
        return {s.measure: (s.k, s.n) for s in run.scorings.get().scores.filter(slice="all")}

    def test_a_run_naming_the_one_it_repeats_is_linked_and_both_are_pooled(self):
        first, second = self.runs
        self.assertEqual(second.repeats_id, first.id)
        page = self.client.get("/versions/rec-bot-1/", {"set": "rec-1"})
        self.assertContains(page, f"runs #{first.id}, #{second.id} pooled as repeats")
        numeric = next(c for c in page.context["table"][0].cells if c.measure == "numeric_accuracy").rate
        one, two = self.all_counts(first)["numeric_accuracy"], self.all_counts(second)["numeric_accuracy"]
        self.assertEqual((numeric.k, numeric.n), (one[0] + two[0], one[1] + two[1]))
        self.assertEqual(page.context["record"].repetitions, 2)
        self.assertIn("numeric_accuracy", page.context["stable"]["all"])  # two attempts per question, pooled

    def test_leaving_a_run_out_needs_a_reason_and_shows_it(self):
        first, second = self.runs
        self.client.post(f"/runs/{second.id}/exclude/", {"reason": " "})
        second.refresh_from_db()
        self.assertEqual(second.excluded_reason, "")
        self.client.post(f"/runs/{second.id}/exclude/", {"reason": "the retrieval index was half built"})
        page = self.client.get("/versions/rec-bot-1/", {"set": "rec-1"})
        self.assertContains(page, "the retrieval index was half built")
        self.assertEqual(page.context["record"].used_runs, [first])
        numeric = next(c for c in page.context["table"][0].cells if c.measure == "numeric_accuracy").rate
        self.assertEqual((numeric.k, numeric.n), self.all_counts(first)["numeric_accuracy"])
        alone = self.client.get("/versions/rec-bot-1/", {"set": "rec-1", "run": second.id})
        self.assertContains(alone, f"run #{second.id} alone, as chosen")

    def test_the_gate_holds_timing_and_names_the_runs_it_used(self):
        import io
        import json

        from django.core.management import call_command

        from reviewapp.models import Answer

        out = io.StringIO()
        with self.assertRaises(SystemExit) as exited:
            call_command(
                "gate", "--baseline", "rec-bot-1", "--candidate", "rec-bot-1", "--measure", "answer_rate",
                "--max-p90", "0.5", "--max-timeout-rate", "0.5", stdout=out,
            )  # fmt: skip
        verdict = json.loads(out.getvalue())
        # The P90 fails, so the whole gate fails and exits 1.
        self.assertEqual((exited.exception.code, verdict["verdict"], verdict["exit_code"]), (1, "fail", 1))
        self.assertEqual(verdict["runs"]["candidate"], [run.id for run in self.runs])
        self.assertEqual(verdict["runs"]["baseline"], [run.id for run in self.runs])
        p90 = verdict["measures"]["e2e_p90"]
        self.assertEqual(p90["verdict"], "fail")  # generated answers take seconds
        self.assertGreater(p90["candidate"]["p90"], 0.5)
        self.assertEqual(p90["reasons"], [f"P90 {p90['candidate']['p90']:.2f} s is above the 0.5 s allowed"])
        # Timeouts as stored at ingest, of all 2 × 60 attempts; the baseline is the same record.
        stored = Answer.objects.filter(run__in=self.runs, status="timeout").count()
        timeouts = verdict["measures"]["timeout_rate"]
        self.assertEqual(timeouts["verdict"], "pass")
        self.assertEqual((timeouts["candidate"]["k"], timeouts["candidate"]["n"]), (stored, 120))
        self.assertGreater(stored, 0)
        self.assertEqual(timeouts["baseline"], timeouts["candidate"])
        # A version compared with itself: no discordant pair on the resolved subset either.
        subset = verdict["measures"]["answer_rate"]["on_resolved_subset"]
        self.assertEqual(
            (subset["table"][0][1], subset["table"][1][0], subset["difference_points"]), (0, 0, 0.0)
        )
        self.assertEqual(subset["n"], sum(subset["table"][0]) + sum(subset["table"][1]))
