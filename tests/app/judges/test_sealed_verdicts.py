"""Issue 31, point 3: the model graders' figures, pages and API leave the
sealed answers out until their run's sealed part is opened, as the
automatic measures do."""

import json

from django.test import TestCase

from reviewapp.judges import selectors
from reviewapp.judges.services import judging
from reviewapp.models import ApiToken, ModelVerdict, Question, Scoring
from reviewapp.scorings.services import scoring_open_sealed
from reviewapp.versions.selectors import model_grade_rows
from tests.fixtures import load_generated_run, stand_in_version
from tests.helpers import make_user


class SealedVerdictTests(TestCase):
    @classmethod
    def setUpTestData(cls):
        cls.lead = make_user("lead", "lead")
        cls.manager = make_user("manager", "manager")
        cls.logged_run = load_generated_run(answers=60)
        _, cls.manager_key = ApiToken.issue(user=cls.manager, name="reads")

    def setUp(self):
        sealed = set(
            Question.objects.filter(set_version=self.logged_run.set_version, split="sealed").values_list(
                "question_id", flat=True
            )
        )
        judge_run = judging.judge_run_estimate(
            judge_versions=[stand_in_version(metrics=["faithfulness"])],
            run=self.logged_run,
            created_by=self.lead,
        )
        with self.captureOnCommitCallbacks(execute=True):
            self.judge_run = judging.judge_run_confirm(judge_run=judge_run)
        verdicts = ModelVerdict.objects.filter(judge_run=self.judge_run)
        self.all_verdicts = verdicts.count()
        self.sealed_verdicts = verdicts.filter(answer__question_id__in=sealed).count()
        assert 0 < self.sealed_verdicts < self.all_verdicts, "the run needs sealed and tuning answers graded"

    def counted(self) -> dict:
        (row,) = selectors.judge_run_counts(self.judge_run)
        (dashboard,) = model_grade_rows([self.logged_run])
        lines = self.client.get(
            f"/api/judge-runs/{self.judge_run.id}/verdicts", HTTP_AUTHORIZATION=f"Bearer {self.manager_key}"
        )
        api = json.loads(
            self.client.get(
                f"/api/judge-runs/{self.judge_run.id}", HTTP_AUTHORIZATION=f"Bearer {self.manager_key}"
            ).content
        )
        return {
            "page": row["verdicts"],
            "dashboard": dashboard["n"] + dashboard["failures"] + dashboard["undefined"],
            "export": len(b"".join(lines.streaming_content).splitlines()),
            "api": sum(count["verdicts"] for count in api["counts"]),
        }

    def test_sealed_answers_stay_out_of_every_model_graded_figure_until_opened(self):
        shown = self.all_verdicts - self.sealed_verdicts
        self.assertEqual(self.counted(), dict.fromkeys(("page", "dashboard", "export", "api"), shown))
        scoring_open_sealed(
            scoring=Scoring.objects.get(run=self.logged_run), opened_by=self.lead, reason="release"
        )
        self.assertEqual(
            self.counted(), dict.fromkeys(("page", "dashboard", "export", "api"), self.all_verdicts)
        )
