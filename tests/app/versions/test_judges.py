"""Model graders' figures on the version dashboard, and a judge as a gate measure:
only a judge validated against people is taken."""

import uuid

from django.test import TestCase

from reviewapp.judges.services import judge_versions, judging
from reviewapp.judges.services.validation_sets import validation_set_draw
from reviewapp.judges.validation import judge_is_validated
from reviewapp.models import Adjudication, ModelVerdict, Run
from reviewapp.review.services.review import rubric_default
from reviewapp.review.services.samples import Frame, sample_draw
from reviewapp.versions.gate import GateRefused, gate_run
from scoring.stats.means import score_mean
from tests.fixtures import load_generated_run, twin
from tests.helpers import make_user


def judged(version, run: Run):
    judge_run = judging.judge_run_confirm(
        judge_run=judging.judge_run_estimate(judge_versions=[version], run=run)
    )
    for chunk_id in judge_run.chunks.values_list("id", flat=True):
        judging.judge_chunk_perform(chunk_id=chunk_id)
    judge_run.refresh_from_db()
    return judge_run


def settle_like_the_judge(judge_run, lead, *, items: int):
    """A lead decides a sample of the run as the judge graded it: the judge agrees with people."""
    sample = sample_draw(frame=Frame(run=judge_run.run), size=items, seed=3, rubric_version=rubric_default())
    verdicts = {v.answer_id: v for v in judge_run.verdicts.filter(metric="rubric")}
    for item in sample.items.all():
        verdict = verdicts.get(item.answer_id)
        if verdict is None:
            continue
        Adjudication.objects.create(
            item=item,
            revision=1,
            lead=lead,
            reason="checked against the records",
            grade=verdict.labels["grade"],
            rubric_answers=verdict.labels["answers"],
            submission_key=uuid.uuid4(),
        )
    return sample


class JudgeGateTests(TestCase):
    @classmethod
    def setUpTestData(cls):
        cls.lead = make_user("lead", "lead")
        cls.baseline_run = load_generated_run(answers=80, assistant="bot-1.0", version="gate-judge")
        # The candidate states a figure no record holds wherever the baseline gave a year.
        cls.candidate_run = twin(
            cls.baseline_run, "bot-2.0", lambda text: text.replace("2024", "2024 (999.5)")
        )
        cls.version = judge_versions.judge_version_save(
            name="numbers",
            provider="stand-in",
            model="",
            metrics=["rubric"],
            rubric_version=rubric_default(),
            concurrency=1,
            validation_min_items=10,
        )

    def test_an_unvalidated_judge_is_never_a_gate_measure(self):
        judged(self.version, self.baseline_run)
        judged(self.version, self.candidate_run)
        with self.assertRaises(GateRefused) as refused:
            gate_run(baseline="bot-1.0", candidate="bot-2.0", judge="numbers")
        self.assertEqual(refused.exception.field, "judge")
        self.assertEqual(
            str(refused.exception),
            "numbers v1 (stand-in judge (numbers only, not a language model)) is not validated against people "
            "(no validation set drawn): an unvalidated judge can never be a gate measure",
        )

    def test_a_validated_judge_is_a_paired_measure(self):
        baseline = judged(self.version, self.baseline_run)
        judged(self.version, self.candidate_run)
        settle_like_the_judge(baseline, self.lead, items=40)
        validation_set_draw(judge=self.version.judge, holdout_share=0.9, seed=1)
        self.assertTrue(judge_is_validated(self.version))
        verdict = gate_run(baseline="bot-1.0", candidate="bot-2.0", judge="numbers:v1")
        measure = verdict["measures"]["judge:numbers"]
        table = measure["paired"]["table"]
        # The candidate loses every question where it added an unsupported figure, and gains none.
        self.assertEqual(table[1][0], 0)
        self.assertGreater(table[0][1], 0)
        self.assertEqual(measure["verdict"], "fail")
        self.assertEqual(verdict["verdict"], "fail")

    def test_a_judge_without_the_rubric_gives_no_pass_or_fail(self):
        other = judge_versions.judge_version_save(
            name="faith", provider="stand-in", model="", metrics=["faithfulness"]
        )
        with self.assertRaisesMessage(GateRefused, "does not grade the rubric, so it gives no pass or fail"):
            gate_run(baseline="bot-1.0", candidate="bot-2.0", judge=other.judge.name)


class ModelGradesOnTheDashboardTests(TestCase):
    def test_the_dashboard_labels_model_grades_and_says_they_are_not_validated(self):
        manager = make_user("manager", "manager")
        run = load_generated_run(answers=40, assistant="bot-1.0", version="dash-judge")
        version = judge_versions.judge_version_save(
            name="numbers",
            provider="stand-in",
            model="",
            metrics=["rubric", "faithfulness"],
            rubric_version=rubric_default(),
            concurrency=1,
        )
        judge_run = judged(version, run)
        self.client.force_login(manager)
        response = self.client.get(f"/versions/bot-1.0/?set={run.set_version.version}")
        self.assertContains(response, "Model graders")
        self.assertContains(response, "numbers v1 (stand-in judge (numbers only, not a language model))")
        self.assertContains(
            response, "<strong>internal consistency review (no human calibration)</strong>", html=False
        )
        shown = ModelVerdict.objects.shown().filter(judge_run=judge_run)  # the sealed part stays out
        resolved = shown.filter(metric="rubric", score=1.0).count()
        graded = shown.filter(metric="rubric").exclude(score=None).count()
        self.assertContains(response, f"{resolved}/{graded}")
        # The faithfulness mean carries its interval, answers clustered by question.
        scored = list(
            shown.filter(metric="faithfulness", error="")
            .exclude(score=None)
            .values_list("score", "answer__question_id")
        )
        mean = score_mean([score for score, _ in scored], [question for _, question in scored])
        self.assertContains(response, f"{mean.value:.3f} [{mean.low:.3f}–{mean.high:.3f}]")


class JudgeOnTheComparePageTests(TestCase):
    @classmethod
    def setUpTestData(cls):
        cls.lead = make_user("lead", "lead")
        cls.manager = make_user("manager", "manager")
        cls.baseline_run = load_generated_run(answers=80, assistant="bot-1.0", version="compare-judge")
        cls.candidate_run = twin(
            cls.baseline_run, "bot-2.0", lambda text: text.replace("2024", "2024 (999.5)")
        )
        cls.version = judge_versions.judge_version_save(
            name="numbers",
            provider="stand-in",
            model="",
            metrics=["rubric"],
            rubric_version=rubric_default(),
            concurrency=1,
            validation_min_items=10,
        )
        cls.baseline = judged(cls.version, cls.baseline_run)
        judged(cls.version, cls.candidate_run)

    def url(self) -> str:
        return f"/versions/compare/?set={self.baseline_run.set_version.version}&baseline=bot-1.0&candidate=bot-2.0"

    def test_an_unvalidated_judge_is_named_but_not_a_measure(self):
        self.client.force_login(self.manager)
        response = self.client.get(self.url())
        self.assertContains(response, "graded both versions, but is not validated against people")
        self.assertNotContains(response, "judge (validated against people)")

    def test_a_validated_judge_is_a_paired_row(self):
        settle_like_the_judge(self.baseline, self.lead, items=40)
        validation_set_draw(judge=self.version.judge, holdout_share=0.9, seed=1)
        self.client.force_login(self.manager)
        response = self.client.get(self.url())
        (row,) = response.context["judged"]
        self.assertEqual(
            row.label, "graded resolved by numbers v1 (stand-in judge (numbers only, not a language model))"
        )
        self.assertEqual(row.paired.table[1][0], 0)
        self.assertContains(response, "judge (validated against people)")
        self.assertNotContains(response, "is not validated against people")


class JudgeGateApiTests(TestCase):
    def test_the_api_answers_422_naming_the_judge_when_it_is_not_validated(self):
        from reviewapp.models import ApiToken

        lead = make_user("lead", "lead")
        run = load_generated_run(answers=40, assistant="bot-1.0", version="api-gate-judge")
        twin(run, "bot-2.0")
        judge_versions.judge_version_save(
            name="numbers", provider="stand-in", model="", metrics=["rubric"], rubric_version=rubric_default()
        )
        _, key = ApiToken.issue(user=lead, name="ci")
        response = self.client.get(
            "/api/gate",
            {"baseline": "bot-1.0", "candidate": "bot-2.0", "judge": "numbers"},
            HTTP_AUTHORIZATION=f"Bearer {key}",
        )
        self.assertEqual(response.status_code, 422)
        body = response.json()
        self.assertEqual((body["field"], body["verdict"]), ("judge", "cannot judge"))
        self.assertIn("is not validated against people", body["error"])
