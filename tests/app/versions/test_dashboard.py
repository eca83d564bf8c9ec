import io
import json
import uuid

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import TestCase
from django.urls import reverse
from statsmodels.stats.proportion import proportion_confint

from reviewapp.core import files
from reviewapp.models import AnswerCheck, ApiToken, Assignment, Run, Sample, SampleItem, Score, Scoring
from reviewapp.review.services.review import JudgementInput, judgement_submit, rubric_default
from reviewapp.runs.services.runs import run_receive
from tests.fixtures import load_generated_run, twin
from tests.helpers import PASSWORD, BaseTestCase, KeepsClassFiles, make_user


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


def fails_questions(question_ids):
    """A change that makes the given questions decline, as a version that
    newly fails them would."""

    def change(row):
        return declines_everything(row) if row["question_id"] in question_ids else same_answers(row)

    return change


class GateTests(TestCase):
    @classmethod
    def setUpTestData(cls):
        # About 250 tuning questions expect an answer: enough to show no regression of 2 points.
        cls.baseline = load_generated_run(answers=450, assistant="bot-1.0")
        cls.worse = upload_variant(cls.baseline, "bot-2.0", declines_everything)
        cls.same = upload_variant(cls.baseline, "bot-1.1", same_answers)
        # Four questions the baseline got right, newly failed by the candidate.
        right = (
            AnswerCheck.objects.filter(scoring__run=cls.baseline, numeric_accuracy_k=1, sealed=False)
            .order_by("question_id")
            .values_list("question_id", flat=True)[:4]
        )
        cls.four_worse = upload_variant(cls.baseline, "bot-1.2", fails_questions(set(right)))

    def gate(self, *args):
        out = io.StringIO()
        with pytest.raises(SystemExit) as exit_info:
            call_command("gate", *args, stdout=out)
            raise SystemExit(0)
        return exit_info.value.code, json.loads(out.getvalue() or "{}")

    def test_it_passes_a_candidate_shown_no_worse_than_the_margin(self):
        code, verdict = self.gate(
            "--baseline", "bot-1.0", "--candidate", "bot-1.1", "--measure", "numeric_accuracy"
        )
        self.assertEqual((code, verdict["verdict"], verdict["passed"]), (0, "pass", True))
        numeric = verdict["measures"]["numeric_accuracy"]
        paired = numeric["paired"]
        self.assertEqual(
            (paired["difference_points"], paired["table"][0][1], paired["table"][1][0]), (0.0, 0, 0)
        )
        # No discordant pair still leaves an interval: it is what makes the pass a finding.
        self.assertLess(paired["low_points"], 0)
        self.assertGreater(paired["low_points"], -2)
        self.assertEqual(paired["label"], "measured")
        self.assertEqual(paired["interval"], "Newcombe hybrid score (method 10), two-sided 95 %")
        self.assertEqual((numeric["margin_points"], numeric["alpha"]), (2.0, 0.05))
        self.assertIn("one-sided 97.5 %", numeric["bound"])
        self.assertEqual(paired["baseline"], paired["candidate"])
        self.assertIn("intersection-union", verdict["multiplicity"])

    def test_it_calls_too_few_questions_inconclusive_not_a_pass(self):
        # The refusal questions are few: no regression is seen, none is ruled out.
        code, verdict = self.gate(
            "--baseline", "bot-1.0", "--candidate", "bot-1.1", "--measure", "refusal_accuracy"
        )
        refusal = verdict["measures"]["refusal_accuracy"]
        self.assertEqual((code, verdict["verdict"], refusal["verdict"]), (1, "inconclusive", "inconclusive"))
        self.assertIn("not shown safe", refusal["reasons"][0])
        self.assertGreater(refusal["pairs_to_settle"], refusal["paired"]["n"])

    def test_it_is_inconclusive_on_four_newly_failed_questions(self):
        code, verdict = self.gate(
            "--baseline", "bot-1.0", "--candidate", "bot-1.2", "--measure", "numeric_accuracy"
        )
        numeric = verdict["measures"]["numeric_accuracy"]
        paired = numeric["paired"]
        self.assertEqual(paired["discordant"], {"only_baseline_succeeds": 4, "only_candidate_succeeds": 0})
        self.assertEqual((code, numeric["verdict"]), (1, "inconclusive"))
        self.assertLess(paired["low_points"], -2)
        self.assertGreater(paired["high_points"], 0)
        self.assertIn(f"({numeric['pairs_to_settle']:,} in all) would settle it", numeric["reasons"][0])

    def test_it_fails_a_candidate_shown_worse(self):
        code, verdict = self.gate(
            "--baseline", "bot-1.0", "--candidate", "bot-2.0", "--measure", "numeric_accuracy"
        )
        self.assertEqual((code, verdict["verdict"], verdict["passed"]), (1, "fail", False))
        numeric = verdict["measures"]["numeric_accuracy"]
        self.assertLess(numeric["paired"]["high_points"], 0)
        self.assertTrue(numeric["reasons"][0].startswith("worse: the whole interval lies below zero"))

    def test_it_fails_a_drop_beyond_the_limit_and_a_floor_missed_for_sure(self):
        code, verdict = self.gate(
            "--baseline",
            "bot-1.0",
            "--candidate",
            "bot-1.2",
            "--measure",
            "numeric_accuracy",
            "--max-drop",
            "0.5",
        )
        self.assertEqual((code, verdict["measures"]["numeric_accuracy"]["verdict"]), (1, "fail"))
        self.assertIn(
            "more than the 0.5 points allowed", verdict["measures"]["numeric_accuracy"]["reasons"][0]
        )
        code, verdict = self.gate(
            "--baseline", "bot-1.0", "--candidate", "bot-1.1", "--measure", "numeric_accuracy",
            "--floor", "numeric_accuracy=0.999",
        )  # fmt: skip
        self.assertEqual((code, verdict["verdict"]), (1, "fail"))
        self.assertIn(
            "misses the floor of 99.9% for sure", verdict["measures"]["numeric_accuracy"]["reasons"][0]
        )

    def test_it_says_floor_not_shown_when_the_floor_lies_inside_the_interval(self):
        candidate = Score.objects.get(scoring__run=self.same, slice="all", measure="numeric_accuracy")
        floor = candidate.k / candidate.n  # the point estimate: inside its own interval
        code, verdict = self.gate(
            "--baseline", "bot-1.0", "--candidate", "bot-1.1", "--measure", "numeric_accuracy",
            "--floor", f"numeric_accuracy={floor}",
        )  # fmt: skip
        numeric = verdict["measures"]["numeric_accuracy"]
        self.assertEqual((code, numeric["verdict"]), (1, "inconclusive"))
        self.assertTrue(numeric["reasons"][0].startswith("floor not shown"))

    def test_it_exits_2_for_a_measure_it_cannot_judge(self):
        # The declining version cites nothing: citation validity has no pair.
        code, verdict = self.gate(
            "--baseline", "bot-1.0", "--candidate", "bot-2.0", "--measure", "citation_validity"
        )
        self.assertEqual((code, verdict["verdict"], verdict["passed"]), (2, "cannot judge", False))
        self.assertEqual(verdict["not_judged"], ["citation_validity"])

    def test_it_exits_2_with_the_reason_on_bad_options(self):
        code, verdict = self.gate("--baseline", "bot-1.0", "--candidate", "nobody-9")
        self.assertEqual(code, 2)
        self.assertEqual(verdict["error"], "no assistant version 'nobody-9' (candidate)")
        for option, field, message in (
            (("--floor", "numeric_accuracy"), "floor", "a floor is MEASURE=RATE"),
            (("--floor", "numeric=0.9"), "floor", "unknown measure 'numeric'"),
            (("--floor", "numeric_accuracy=90"), "floor", "the rate is a share from 0 to 1"),
            (("--margin", "-1"), "margin", "margin is in points, from 0 to under 100; got -1"),
            (("--max-drop", "150"), "max_drop", "max_drop is in points"),
            (("--max-p90", "0"), "max_p90", "max_p90 is in seconds, above 0"),
            (("--max-timeout-rate", "2"), "max_timeout_rate", "max_timeout_rate is a share from 0 to 1"),
        ):
            code, verdict = self.gate("--baseline", "bot-1.0", "--candidate", "bot-1.1", *option)
            self.assertEqual((code, verdict["field"]), (2, field))
            self.assertIn(message, verdict["error"])

    def test_it_answers_the_same_through_the_api(self):
        _, key = ApiToken.issue(user=make_user("pipeline"), name="ci")
        auth = {"HTTP_AUTHORIZATION": f"Bearer {key}"}
        worse = self.client.get(
            "/api/gate",
            {"baseline": "bot-1.0", "candidate": "bot-2.0", "measure": "numeric_accuracy"},
            **auth,
        )
        self.assertEqual((worse.status_code, worse.json()["verdict"]), (409, "fail"))
        unsure = self.client.get(
            "/api/gate",
            {"baseline": "bot-1.0", "candidate": "bot-1.2", "measure": "numeric_accuracy"},
            **auth,
        )
        self.assertEqual((unsure.status_code, unsure.json()["verdict"]), (409, "inconclusive"))
        fine = self.client.get(
            "/api/gate",
            {"baseline": "bot-1.0", "candidate": "bot-1.1", "measure": "numeric_accuracy", "margin": "2"},
            **auth,
        )
        self.assertEqual((fine.status_code, fine.json()["passed"]), (200, True))
        self.assertEqual(fine.json(), self.gate("--baseline", "bot-1.0", "--candidate", "bot-1.1",
                                                "--measure", "numeric_accuracy")[1])  # fmt: skip
        two = self.client.get(
            "/api/gate?baseline=bot-1.0&candidate=bot-1.1&measure=numeric_accuracy&measure=answer_rate",
            **auth,
        )
        self.assertEqual(list(two.json()["measures"]), ["numeric_accuracy", "answer_rate"])
        missing = self.client.get("/api/gate", {"baseline": "bot-1.0", "candidate": "x"}, **auth)
        self.assertEqual(missing.status_code, 422)
        unknown = self.client.get(
            "/api/gate", {"baseline": "bot-1.0", "candidate": "bot-1.1", "measure": "speed"}, **auth
        )
        self.assertEqual((unknown.status_code, unknown.json()["field"]), (422, "measure"))
        self.assertIn("'speed'", unknown.json()["error"])
        floor = self.client.get(
            "/api/gate", {"baseline": "bot-1.0", "candidate": "bot-1.1", "floor": "x"}, **auth
        )
        self.assertEqual((floor.status_code, floor.json()["field"]), (422, "floor"))
        margin = self.client.get(
            "/api/gate", {"baseline": "bot-1.0", "candidate": "bot-1.1", "margin": "abc"}, **auth
        )
        self.assertEqual(margin.status_code, 422)
        self.assertIn("margin", json.dumps(margin.json()))

    def test_its_openapi_schema_declares_no_body_on_the_get(self):
        schema = self.client.get("/api/openapi.json").json()
        operation = schema["paths"]["/api/gate"]["get"]
        self.assertNotIn("requestBody", operation)
        self.assertEqual(
            [p["name"] for p in operation["parameters"]],
            [
                "baseline",
                "candidate",
                "set_version",
                "measure",
                "margin",
                "max_drop",
                "floor",
                "max_p90",
                "max_timeout_rate",
                "judge",
                "unequal_attempts",
            ],
        )

    def test_it_compares_two_versions_on_their_common_questions_on_a_page(self):
        make_user("manager")
        self.client.login(username="manager", password=PASSWORD)
        page = self.client.get(
            reverse("version-compare"), {"set": "gen-1", "baseline": "bot-1.0", "candidate": "bot-2.0"}
        )
        numeric = next(c for c in page.context["comparisons"] if c.measure == "numeric_accuracy")
        self.assertEqual(numeric.paired.table[1][0], 0)  # the declining version never wins a question
        self.assertContains(page, "measured")
        self.assertContains(page, "Newcombe hybrid score (method 10)")
        self.assertContains(page, f"With {numeric.paired.n} paired questions, differences under")


class DashboardTests(KeepsClassFiles, BaseTestCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        cls.logged_run = load_generated_run(answers=60, assistant="bot-1.0")
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
                    note="" if grade == "resolved" else "the figure asked for is not given",
                ),
                submission_key=uuid.uuid4(),
            )

    def setUp(self):
        super().setUp()
        self.client.login(username="manager", password=PASSWORD)

    def test_it_weights_the_grades_by_the_recorded_strata_beside_the_unweighted_rate(self):
        page = self.client.get(reverse("version-dashboard", args=["bot-1.0"]))
        review = page.context["review"]
        resolved = next(g for g in review["grades"] if g["grade"] == "resolved")
        self.assertEqual((resolved["k"], resolved["n"]), (2, 4))
        self.assertAlmostEqual(resolved["rate"].value, 0.5)
        weighted = resolved["weighted"]
        self.assertAlmostEqual(weighted.value, 20 / 22)
        # Both strata are uniform (p = 1 and p = 0). This test used to expect no
        # within-stratum variance and an effective n of the 4 items read: the
        # false precision of issue 24, point 3 (two items that both passed do
        # not make a share of 1 certain). The French stratum is read whole
        # (f = 1) and adds nothing; the English one, 2 of 2 from 20, adds
        # (20/22)²·(1 - 2/20)·p̃(1 - p̃)/2 with p̃ = (2 + z²/2)/(2 + z²) = 0.671190:
        # 0.082076. With p̃ = (20/22)·0.671190 + (2/22)·0.328810 = 0.640065 the
        # effective n is 0.640065·0.359935/0.082076 = 2.806925, and the interval
        # starts where Clopper–Pearson's on 20/22 of that does; it ends at 1,
        # where the normal interval 0.909 ± 1.96·0.2865 reaches.
        self.assertEqual(weighted.n, 4)
        self.assertAlmostEqual(weighted.variance, 0.082076, places=6)
        self.assertAlmostEqual(weighted.effective_n, 2.806925, places=6)
        low, _ = proportion_confint(weighted.effective_n * 20 / 22, weighted.effective_n, method="beta")
        self.assertAlmostEqual(weighted.low, low)
        self.assertEqual(weighted.high, 1.0)
        self.assertEqual((review["planned"], review["graded"]), (4, 4))
        self.assertContains(page, "sample, unweighted")
        self.assertContains(page, "graded coverage <strong>4 of 4</strong>", html=False)
        period = next(r for r in review["rubric"] if r["key"] == "period")
        self.assertEqual((period["k"], period["n"]), (3, 4))
        caveat = next(r for r in review["rubric"] if r["key"] == "caveat")
        self.assertEqual(caveat["n"], 0)  # not applicable is left out of the rate

    def test_it_weights_the_rubric_rates_and_passing_every_question_by_the_strata(self):
        # Issue 24, point 3: these ignored the weights. English: both items
        # answer "period" yes, 2 of 2 from 20; French: 1 of 2 from 2 (item 4
        # answers no). Weighted: (20/22)·1 + (2/22)·0.5 = 21/22, where the
        # sample, unweighted, has 3 of 4. Passing every rubric question is the
        # same split (item 4 fails on "period").
        from scoring.stats.rates import stratified_rate

        page = self.client.get(reverse("version-dashboard", args=["bot-1.0"]))
        review = page.context["review"]
        expected = stratified_rate([(2, 2, 20), (1, 2, 2)])
        period = next(r for r in review["rubric"] if r["key"] == "period")
        self.assertAlmostEqual(period["weighted"].value, 21 / 22)
        self.assertEqual(period["weighted"], expected)
        self.assertEqual((period["k"], period["n"], period["rate"].value), (3, 4, 0.75))
        passing = review["passes_rubric"]
        self.assertEqual((passing["k"], passing["n"]), (3, 4))
        self.assertEqual(passing["weighted"], expected)
        caveat = next(r for r in review["rubric"] if r["key"] == "caveat")
        self.assertIsNone(caveat["weighted"])  # nobody answered yes or no
        self.assertContains(page, "passes every rubric question <strong>95.5 %</strong>", html=False)
        self.assertContains(page, "sample, unweighted 3 of 4")
        self.assertContains(
            page, 'The rubric rates and "passes every rubric question" are weighted by strata'
        )

    def test_it_weights_both_severity_figures_by_the_strata_too(self):
        from reviewapp.review.services.severity import severity_weights_save
        from scoring.stats.rates import rate, severity_weighted_rate, stratified_rate

        items = list(self.sample.items.order_by("position").select_related("answer"))
        first_language = items[0].answer.language
        severity_weights_save(field="language", weights_text=f"{first_language} = 3", default_weight=1)
        page = self.client.get(reverse("version-dashboard", args=["bot-1.0"]))
        severity = page.context["review"]["severity"]
        # Nothing is a material error: 0 of 2 from 20 and 0 of 2 from 2.
        self.assertEqual(severity["stratified"], stratified_rate([(0, 2, 20), (0, 2, 2)]))
        self.assertEqual(severity["unweighted"], rate(0, 4))
        # Each item counts by its severity weight times its stratum's 20/2 or
        # 2/2: each stratum's items split by severity weight, each part
        # weighted by its estimated size times that weight.
        severity_weights = [3.0 if item.answer.language == first_language else 1.0 for item in items]
        cells, weights = [], []
        for positions, population in (((0, 1), 20), ((2, 3), 2)):
            for weight in dict.fromkeys(severity_weights[p] for p in positions):
                part = [p for p in positions if severity_weights[p] == weight]
                cells.append((0, len(part), population * len(part) / 2))
                weights.append(population * len(part) / 2 * weight)
        self.assertEqual(severity["weighted"], stratified_rate(cells, weights=weights))
        self.assertEqual(severity["severity_only"], severity_weighted_rate([False] * 4, severity_weights))
        self.assertContains(page, "<td>weighted by strata</td>", html=False)
        self.assertContains(page, "<td>sample, unweighted</td>", html=False)
        self.assertContains(page, "severity-weighted, sample, unweighted by strata")

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
        lines = text.splitlines()
        header, first = lines[:2]
        self.assertEqual(
            header,
            "run,assistant_version,set_version,slice,figure,k,n,effective_n,rate,low,high,mean_s,p50_s,p90_s",
        )
        self.assertTrue(first.startswith(f"{self.logged_run.id},bot-1.0,gen-1,all,"))
        # The generated log carries timestamps: its timing is exported beside the rates.
        e2e = next(line for line in lines if ",all,e2e from timestamps," in line).split(",")
        summary = scoring.timing["all"]["e2e"]["by_source"]["timestamps"]
        self.assertEqual((int(e2e[6]), float(e2e[13])), (summary["n"], summary["p90"]))
        data = self.client.get(reverse("export-scores", args=[self.logged_run.id, scoring.id, "json"])).json()
        self.assertEqual(
            set(data["slices"]["all"]["numeric_accuracy"]),
            {"k", "n", "rate", "low", "high", "effective_n", "clusters"},
        )

    def test_it_gives_the_log_back_exactly_as_uploaded(self):
        response = self.client.get(reverse("run-log", args=[self.logged_run.id]))
        body = b"".join(response.streaming_content)
        with open(files.storage().path(self.logged_run.stored_name), "rb") as stored:
            self.assertEqual(body, stored.read())
        import hashlib

        self.assertEqual(hashlib.sha256(body).hexdigest(), self.logged_run.sha256)

    def test_it_plans_sample_sizes(self):
        page = self.client.get(reverse("planner"), {"baseline": "8.5", "target": "6.5", "discordant": "6"})
        # McNemar's exact test needs 1,244 paired questions for 80 % power;
        # Connor's approximation said 1,175, where the exact power is 77.6 %.
        result = page.context["result"]
        self.assertEqual(
            {key: result[key] for key in ("independent", "paired", "connor", "gate", "margin_points")},
            {"independent": 2711, "paired": 1244, "connor": 1175, "gate": 1275, "margin_points": 2.0},
        )
        self.assertEqual(round(result["connor_power"], 3), 0.776)
        self.assertContains(page, "where the exact test has 77.6 % power, not 80 %")
        self.assertContains(page, "McNemar's exact test has 80.0 % power there")
        self.assertContains(page, "<strong>1275</strong> paired questions")
        bad = self.client.get(reverse("planner"), {"baseline": "x", "target": "6.5"})
        self.assertContains(bad, "Give the rates as percentages.")

    def test_it_plans_three_attempts_per_question_unless_told(self):
        # Spec 004: each configuration plans N = Q × R runs, three per question by default.
        page = self.client.get(reverse("planner"), {"baseline": "8.5", "target": "6.5", "discordant": "6"})
        result = page.context["result"]
        self.assertEqual(result["attempts"], 3)
        self.assertEqual(result["runs"], {"independent": 8133, "paired": 3732, "gate": 3825})
        self.assertContains(page, 'name="attempts" value="3"')
        self.assertContains(
            page, "At R = 3 attempts per question, each version answers N = Q × R times: 2711 × 3 = 8133"
        )
        self.assertNotContains(page, "One attempt per question")
        once = self.client.get(
            reverse("planner"), {"baseline": "8.5", "target": "6.5", "discordant": "6", "attempts": "1"}
        )
        self.assertEqual(once.context["result"]["runs"], {"independent": 2711, "paired": 1244, "gate": 1275})
        self.assertContains(
            once,
            "One attempt per question: the figures these runs will give rest on a single attempt at each "
            "question, so no stable-resolution rate is shown",
            count=1,
        )
        bad = self.client.get(reverse("planner"), {"baseline": "8.5", "target": "6.5", "attempts": "0"})
        self.assertEqual(bad.context["result"], None)
        self.assertContains(bad, "attempts per question must be a whole number from 1 to 100, not 0")

    def test_it_refuses_plans_that_cannot_be_made_with_a_sentence(self):
        for values, sentence in (
            ({"baseline": "100", "target": "90"}, "rates must lie strictly between 0 % and 100 %"),
            ({"baseline": "0", "target": "5"}, "rates must lie strictly between 0 % and 100 %"),
            ({"baseline": "8.5", "target": "8.45"}, "a difference under 0.1 point cannot be planned for"),
        ):
            page = self.client.get(reverse("planner"), values)
            self.assertEqual((page.status_code, page.context["result"]), (200, None))
            self.assertContains(page, sentence)


class VersionBeingScoredTests(BaseTestCase):
    """Seen in bench_app.py --compare: the first version's dashboard answered
    500 while a second version's first run on the same set was being scored
    (the versions chart pooled a record with no finished scoring)."""

    def test_both_dashboards_answer_while_the_other_versions_only_run_is_scored(self):
        baseline = load_generated_run(answers=30, assistant="bot-1.0")
        candidate = twin(baseline, "bot-1.1")
        Scoring.objects.filter(run=candidate).update(status=Scoring.Status.SCORING, finished_at=None)
        self.client.login(username="lead", password=PASSWORD)
        response = self.client.get(reverse("version-dashboard", args=["bot-1.0"]))
        self.assertEqual(response.status_code, 200)
        chart = {row["version"]: row["rate"] for row in response.context["chart"][0]["rows"]}
        self.assertIsNone(chart["bot-1.1"])  # no figure until its scoring is done
        self.assertIsNotNone(chart["bot-1.0"])
        response = self.client.get(reverse("version-dashboard", args=["bot-1.1"]))
        self.assertEqual(response.status_code, 200)
        self.assertIsNone(response.context["scoring"])
