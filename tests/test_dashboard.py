import io
import json
import uuid

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import TestCase
from django.urls import reverse

from reviewapp.models import ApiToken, Assignment, Run, Sample, SampleItem
from reviewapp.services.review import JudgementInput, judgement_submit, rubric_default
from reviewapp.services.runs import run_receive
from tests.fixtures import load_generated_run
from tests.helpers import PASSWORD, make_user


def upload_variant(base: Run, assistant: str, change) -> Run:
    """The base run's answers, changed by ``change``, as another version's run."""
    lines = [json.loads(a.raw) for a in base.answers.order_by("line_number")]
    rows = [change(dict(row)) for row in lines]
    body = "\n".join(map(json.dumps, rows)).encode()
    upload = SimpleUploadedFile(f"answers_run_{assistant}_set-{base.set_version.version}.jsonl", body)
    with TestCase.captureOnCommitCallbacks(execute=True):
        received = run_receive(upload=upload)
    return Run.objects.get(id=received.run.id)


def declines_everything(row):
    return {**row, "declined": True, "answer": "I cannot answer this.", "cited_ids": []}


def same_answers(row):
    return {**row, "latency_ms": 1}  # other bytes, same content to score


class GateTests(TestCase):
    @classmethod
    def setUpTestData(cls):
        cls.baseline = load_generated_run(answers=120, assistant="bot-1.0")
        cls.worse = upload_variant(cls.baseline, "bot-2.0", declines_everything)
        cls.same = upload_variant(cls.baseline, "bot-1.1", same_answers)

    def gate(self, *args):
        out = io.StringIO()
        with pytest.raises(SystemExit) as exit_info:
            call_command("gate", *args, stdout=out)
            raise SystemExit(0)
        return exit_info.value.code, json.loads(out.getvalue() or "{}")

    def test_it_passes_a_candidate_no_worse_than_the_baseline(self):
        code, verdict = self.gate("--baseline", "bot-1.0", "--candidate", "bot-1.1")
        self.assertEqual(code, 0)
        self.assertTrue(verdict["passed"])
        numeric = verdict["measures"]["numeric_accuracy"]["paired"]
        self.assertEqual((numeric["difference"], numeric["table"][0][1], numeric["table"][1][0]), (0.0, 0, 0))
        self.assertEqual(numeric["label"], "measured")

    def test_it_fails_a_candidate_significantly_worse_on_the_common_questions(self):
        code, verdict = self.gate(
            "--baseline", "bot-1.0", "--candidate", "bot-2.0", "--measure", "numeric_accuracy"
        )
        self.assertEqual(code, 1)
        numeric = verdict["measures"]["numeric_accuracy"]
        self.assertEqual(numeric["verdict"], "fail")
        self.assertLess(numeric["paired"]["mcnemar_p"], 0.05)
        self.assertIn("significantly worse", numeric["reasons"][0])

    def test_it_fails_a_measure_below_its_floor_and_a_drop_beyond_the_limit(self):
        code, verdict = self.gate(
            "--baseline",
            "bot-1.0",
            "--candidate",
            "bot-1.1",
            "--measure",
            "numeric_accuracy",
            "--floor",
            "numeric_accuracy=0.99",
        )
        self.assertEqual(code, 1)
        self.assertIn("below the floor of 0.99", verdict["measures"]["numeric_accuracy"]["reasons"][0])

    def test_it_says_which_measures_it_could_not_judge(self):
        code, verdict = self.gate(
            "--baseline", "bot-1.0", "--candidate", "bot-2.0", "--measure", "citation_validity"
        )
        self.assertEqual(code, 0)
        self.assertEqual(verdict["not_judged"], ["citation_validity"])

    def test_it_exits_2_when_it_cannot_judge_at_all(self):
        code, verdict = self.gate("--baseline", "bot-1.0", "--candidate", "nobody-9")
        self.assertEqual(code, 2)
        self.assertEqual(verdict["error"], "no assistant version 'nobody-9' (candidate)")
        code, verdict = self.gate(
            "--baseline", "bot-1.0", "--candidate", "bot-1.1", "--floor", "numeric_accuracy"
        )
        self.assertEqual((code, verdict["error"]), (2, "a floor is MEASURE=RATE, not 'numeric_accuracy'"))

    def test_it_answers_the_same_through_the_api(self):
        _, key = ApiToken.issue(user=make_user("pipeline"), name="ci")
        auth = {"HTTP_AUTHORIZATION": f"Bearer {key}"}
        worse = self.client.get(
            "/api/gate",
            {"baseline": "bot-1.0", "candidate": "bot-2.0", "measure": "numeric_accuracy"},
            **auth,
        )
        self.assertEqual(worse.status_code, 409)
        self.assertFalse(worse.json()["passed"])
        fine = self.client.get("/api/gate", {"baseline": "bot-1.0", "candidate": "bot-1.1"}, **auth)
        self.assertEqual((fine.status_code, fine.json()["passed"]), (200, True))
        missing = self.client.get("/api/gate", {"baseline": "bot-1.0", "candidate": "x"}, **auth)
        self.assertEqual(missing.status_code, 422)

    def test_it_compares_two_versions_on_their_common_questions_on_a_page(self):
        make_user("manager")
        self.client.login(username="manager", password=PASSWORD)
        page = self.client.get(
            reverse("version-compare"), {"set": "gen-1", "baseline": "bot-1.0", "candidate": "bot-2.0"}
        )
        numeric = next(c for c in page.context["comparisons"] if c.measure == "numeric_accuracy")
        self.assertEqual(numeric.paired.table[1][0], 0)  # the declining version never wins a question
        self.assertContains(page, "measured")
        self.assertContains(page, f"With {numeric.paired.n} paired questions, differences under")


class DashboardTests(TestCase):
    @classmethod
    def setUpTestData(cls):
        cls.logged_run = load_generated_run(answers=60, assistant="bot-1.0")
        cls.manager = make_user("manager")
        cls.reader = make_user("reader", "reviewer")
        cls.sample = Sample.objects.create(
            name="weighted",
            run=cls.logged_run,
            assistant_version=cls.logged_run.assistant_version,
            frame_size=60,
            size=4,
            strata_fields=["language"],
            allocation="proportional",
            seed=1,
            strata={
                "language=en": {"population": 20, "drawn": 2, "weight": 10.0},
                "language=fr": {"population": 2, "drawn": 2, "weight": 1.0},
            },
            rubric_version=rubric_default(),
        )
        answers = list(cls.logged_run.answers.order_by("id")[:4])
        for position, (answer, stratum, grade) in enumerate(
            zip(
                answers,
                ["language=en", "language=en", "language=fr", "language=fr"],
                ["resolved", "resolved", "unresolved", "unresolved"],
                strict=True,
            ),
            start=1,
        ):
            item = SampleItem.objects.create(
                sample=cls.sample, answer=answer, stratum=stratum, position=position
            )
            assignment = Assignment.objects.create(
                item=item, reviewer=cls.reader, alias=f"A{position}00", order=position
            )
            judgement_submit(
                assignment=assignment,
                author=cls.reader,
                data=JudgementInput(
                    addresses_question=True,
                    rubric_answers={
                        "series": "yes",
                        "period": "yes" if position != 4 else "no",
                        "unit": "yes",
                        "caveat": "na",
                        "unsupported_claim": "no",
                    },
                    grade=grade,
                ),
                submission_key=uuid.uuid4(),
            )

    def setUp(self):
        self.client.login(username="manager", password=PASSWORD)

    def test_it_weights_the_grades_by_the_recorded_strata_beside_the_unweighted_rate(self):
        page = self.client.get(reverse("version-dashboard", args=["bot-1.0"]))
        review = page.context["review"]
        resolved = next(g for g in review["grades"] if g["grade"] == "resolved")
        self.assertEqual((resolved["k"], resolved["n"]), (2, 4))
        self.assertAlmostEqual(resolved["rate"].value, 0.5)
        self.assertAlmostEqual(resolved["weighted"], 20 / 22)
        self.assertEqual((review["planned"], review["graded"]), (4, 4))
        period = next(r for r in review["rubric"] if r["key"] == "period")
        self.assertEqual((period["k"], period["n"]), (3, 4))
        caveat = next(r for r in review["rubric"] if r["key"] == "caveat")
        self.assertEqual(caveat["n"], 0)  # not applicable is left out of the rate

    def test_it_shows_every_automatic_rate_with_its_interval_and_the_chart(self):
        page = self.client.get(reverse("version-dashboard", args=["bot-1.0"]))
        self.assertContains(page, '<svg role="img" aria-label="numeric accuracy by version')
        self.assertContains(page, "<circle", count=6)
        self.assertContains(page, 'class="ci"')

    def test_a_manager_reads_and_exports_but_never_writes(self):
        scoring = self.logged_run.scorings.get()
        for name, args in (
            ("version-list", []),
            ("version-dashboard", ["bot-1.0"]),
            ("planner", []),
            ("export-scores", [self.logged_run.id, scoring.id, "csv"]),
            ("export-findings", [self.logged_run.id, scoring.id, "json"]),
            ("export-judgements", [self.sample.id, "csv"]),
            ("run-log", [self.logged_run.id]),
            ("register", []),
        ):
            self.assertEqual(self.client.get(reverse(name, args=args)).status_code, 200, name)
        for name, args in (("run-upload", []), ("sample-new", []), ("rubric-new", [])):
            self.assertEqual(self.client.post(reverse(name, args=args), {}).status_code, 403, name)
        self.assertEqual(self.client.get(reverse("lead-queue")).status_code, 403)

    def test_it_exports_scores_with_their_intervals(self):
        scoring = self.logged_run.scorings.get()
        text = self.client.get(
            reverse("export-scores", args=[self.logged_run.id, scoring.id, "csv"])
        ).content.decode()
        header, first = text.splitlines()[:2]
        self.assertEqual(header, "run,assistant_version,set_version,slice,measure,k,n,rate,low,high")
        self.assertTrue(first.startswith(f"{self.logged_run.id},bot-1.0,gen-1,all,"))
        data = self.client.get(reverse("export-scores", args=[self.logged_run.id, scoring.id, "json"])).json()
        self.assertEqual(set(data["slices"]["all"]["numeric_accuracy"]), {"k", "n", "rate", "low", "high"})

    def test_it_gives_the_log_back_exactly_as_uploaded(self):
        response = self.client.get(reverse("run-log", args=[self.logged_run.id]))
        body = b"".join(response.streaming_content)
        with open(self.logged_run.file_path, "rb") as stored:
            self.assertEqual(body, stored.read())
        import hashlib

        self.assertEqual(hashlib.sha256(body).hexdigest(), self.logged_run.sha256)

    def test_it_plans_sample_sizes(self):
        page = self.client.get(reverse("planner"), {"baseline": "8.5", "target": "6.5", "discordant": "6"})
        self.assertEqual(page.context["result"], {"independent": 2711, "paired": 1175})
        bad = self.client.get(reverse("planner"), {"baseline": "x", "target": "6.5"})
        self.assertContains(bad, "Give the rates as percentages.")
