"""The judge-run API: estimate, confirm, follow, cancel and export a judge run."""

import json
import statistics

from django.test import TestCase, override_settings

from reviewapp.judges import selectors
from reviewapp.judges.services import judge_versions, judging
from reviewapp.models import ApiToken, JudgeChunk, JudgeRun, ModelVerdict, Run, Sample
from scoring.stats.means import MEAN_METHOD, score_mean
from tests.fixtures import load_generated_run, stand_in_version
from tests.helpers import BaseTestCase, make_user


def bearer(key: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {key}"}


@override_settings(JUDGE_CHUNK_ANSWERS=50)  # several chunks from a small run
class JudgeRunApiTestCase(BaseTestCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        cls.logged_run = load_generated_run(answers=120)
        cls.version = stand_in_version(name="api judge")
        _, cls.lead_key = ApiToken.issue(user=cls.lead, name="ci")
        _, cls.manager_key = ApiToken.issue(user=cls.manager, name="ci")
        _, cls.upload_only_key = ApiToken.issue(
            user=cls.lead, name="uploads", scopes=["runs:write", "runs:read"]
        )

    def create(self, key: str | None = None, **body):
        body = {"run_id": self.logged_run.id, "judge_versions": [self.version.id], **body}
        return self.client.post(
            "/api/judge-runs",
            json.dumps(body),
            content_type="application/json",
            **bearer(key or self.lead_key),
        )

    def post(self, path: str, key: str | None = None):
        return self.client.post(path, **bearer(key or self.lead_key))

    def get(self, path: str, key: str | None = None):
        return self.client.get(path, **bearer(key or self.lead_key))

    def estimated(self) -> JudgeRun:
        return JudgeRun.objects.get(id=self.create().json()["id"])


class JudgeRunCreateTests(JudgeRunApiTestCase):
    def test_it_estimates_the_cost_and_sends_nothing(self):
        response = self.create()
        self.assertEqual(response.status_code, 201)
        body = response.json()
        judge_run = JudgeRun.objects.get()
        answered = self.logged_run.answers.filter(status="ok").count()
        self.assertEqual((judge_run.status, judge_run.created_by), ("estimated", self.lead))
        self.assertEqual(body["status"], "estimated")
        self.assertEqual(body["estimate"], judge_run.estimate)
        self.assertEqual(body["estimate"]["answers"], answered)
        self.assertEqual(
            body["judge_versions"],
            [
                {
                    "id": self.version.id,
                    "judge": "api judge",
                    "number": 1,
                    "label": selectors.judge_label(self.version),
                    "metrics": ["rubric", "faithfulness"],
                }
            ],
        )
        self.assertEqual(body["progress"], {"chunks_done": 0, "chunks_total": 0, "percent": 0})
        self.assertEqual(
            [(row["metric"], row["verdicts"], row["mean_score"]) for row in body["counts"]],
            [("rubric", 0, None), ("faithfulness", 0, None)],
        )
        self.assertEqual((body["regrade_share"], body["regrade_sample"], body["error"]), (0.1, None, ""))
        self.assertEqual(body["links"]["confirm"], f"http://testserver/api/judge-runs/{judge_run.id}/confirm")
        self.assertEqual(body["links"]["run"], f"http://testserver/api/runs/{self.logged_run.id}")
        self.assertEqual(body["links"]["page"], f"http://testserver/judge-runs/{judge_run.id}/")
        self.assertFalse(ModelVerdict.objects.exists())
        self.assertFalse(JudgeChunk.objects.exists())

    def test_it_starts_at_once_when_asked_to_confirm(self):
        with self.captureOnCommitCallbacks(execute=True):
            response = self.create(confirm=True, regrade_share=0.5)
        self.assertEqual(response.status_code, 201)
        self.assertEqual(response.json()["status"], "queued")
        judge_run = JudgeRun.objects.get()
        self.assertEqual(judge_run.status, "done")
        self.assertEqual(judge_run.regrade_sample.size, 60)  # half of 120

    def test_it_names_the_field_it_refuses(self):
        cases = [
            ({"run_id": 999_999}, "run_id", "there is no run 999999"),
            ({"judge_versions": [self.version.id, 999_998]}, "judge_versions", "no judge version 999998"),
        ]
        for body, field, message in cases:
            response = self.create(**body)
            self.assertEqual(response.status_code, 422, body)
            self.assertEqual(
                response.json()["detail"],
                [{"type": "value_error", "loc": ["body", "payload", field], "msg": message}],
            )
        for body, field in (
            ({"regrade_share": 0}, "regrade_share"),
            ({"regrade_share": 1.5}, "regrade_share"),
            ({"judge_versions": []}, "judge_versions"),
        ):
            response = self.create(**body)
            self.assertEqual(response.status_code, 422, body)
            self.assertEqual(response.json()["detail"][0]["loc"], ["body", "payload", field])
        self.assertFalse(JudgeRun.objects.exists())

    def test_it_refuses_a_run_whose_answers_are_not_stored(self):
        Run.objects.filter(id=self.logged_run.id).update(status=Run.Status.RECEIVED)
        response = self.create()
        self.assertEqual(response.status_code, 422)
        self.assertEqual(
            response.json()["detail"][0],
            {
                "type": "value_error",
                "loc": ["body", "payload", "run_id"],
                "msg": f"run {self.logged_run.id}'s answers are not stored (it is received)",
            },
        )
        self.assertFalse(JudgeRun.objects.exists())


class JudgeRunLifecycleTests(JudgeRunApiTestCase):
    def test_confirming_runs_it_and_the_run_reports_progress_and_counts(self):
        judge_run = self.estimated()
        with self.captureOnCommitCallbacks(execute=True):
            response = self.post(f"/api/judge-runs/{judge_run.id}/confirm")
        self.assertEqual(response.status_code, 200)
        self.assertEqual(response.json()["status"], "queued")
        body = self.get(f"/api/judge-runs/{judge_run.id}").json()
        self.assertEqual(body["status"], "done")
        self.assertEqual(body["progress"], {"chunks_done": 3, "chunks_total": 3, "percent": 100})
        sample = Sample.objects.get()
        self.assertEqual((body["regrade_sample"], sample.size), (sample.id, 30))
        # The counts leave out the sealed answers until the sealed part is opened.
        verdicts = ModelVerdict.objects.shown().filter(judge_run=judge_run)
        expected = []
        for metric in ("rubric", "faithfulness"):
            scores = [score for score in verdicts.filter(metric=metric).values_list("score", flat=True)]
            defined = [score for score in scores if score is not None]
            # Answers clustered by question (scoring.stats.means, checked there).
            scored = list(
                verdicts.filter(metric=metric, score__isnull=False).values_list(
                    "score", "answer__question_id"
                )
            )
            mean = score_mean([score for score, _ in scored], [question for _, question in scored])
            expected.append(
                {
                    "judge_version": self.version.id,
                    "label": selectors.judge_label(self.version),
                    "metric": metric,
                    "verdicts": len(scores),
                    "failures": 0,
                    "undefined": len(scores) - len(defined),
                    "mean_score": statistics.fmean(defined),
                    "mean_low": mean.low,
                    "mean_high": mean.high,
                    "mean_effective_n": mean.effective_n,
                    "mean_method": MEAN_METHOD,
                }
            )
        self.assertEqual(len(body["counts"]), 2)
        for row, wanted in zip(body["counts"], expected, strict=True):
            self.assertAlmostEqual(row.pop("mean_score"), wanted.pop("mean_score"), places=9)
            self.assertEqual(row, wanted)
        stored = ModelVerdict.objects.filter(judge_run=judge_run).count()
        self.assertEqual(stored, body["estimate"]["calls"])
        self.assertLess(sum(row["verdicts"] for row in expected), stored)

    def test_confirming_again_changes_nothing(self):
        judge_run = self.estimated()
        first = self.post(f"/api/judge-runs/{judge_run.id}/confirm").json()
        again = self.post(f"/api/judge-runs/{judge_run.id}/confirm")
        self.assertEqual(again.status_code, 200)
        self.assertEqual(again.json(), first)
        self.assertEqual(JudgeChunk.objects.count(), 3)
        self.assertEqual(Sample.objects.count(), 1)

    def test_cancelling_stops_the_chunks_not_started(self):
        judge_run = self.estimated()
        self.post(f"/api/judge-runs/{judge_run.id}/confirm")  # queued: no worker took it in this test
        response = self.post(f"/api/judge-runs/{judge_run.id}/cancel")
        self.assertEqual(response.status_code, 200)
        self.assertEqual(response.json()["status"], "cancelled")
        self.assertEqual(set(judge_run.chunks.values_list("status", flat=True)), {"cancelled"})
        # A run confirmed before it was cancelled is answered as it is.
        again = self.post(f"/api/judge-runs/{judge_run.id}/confirm")
        self.assertEqual((again.status_code, again.json()["status"]), (200, "cancelled"))

    def test_it_refuses_to_start_a_run_cancelled_before_it_started(self):
        judge_run = self.estimated()
        self.post(f"/api/judge-runs/{judge_run.id}/cancel")
        response = self.post(f"/api/judge-runs/{judge_run.id}/confirm")
        self.assertEqual(response.status_code, 409)
        self.assertEqual(
            response.json(), {"detail": "this judge run was cancelled before it started; estimate a new one"}
        )
        judge_run.refresh_from_db()
        self.assertEqual((judge_run.status, judge_run.chunks_total), ("cancelled", 0))

    def test_it_exports_every_verdict_with_its_raw_completion(self):
        judge_run = self.estimated()
        with self.captureOnCommitCallbacks(execute=True):
            self.post(f"/api/judge-runs/{judge_run.id}/confirm")
        response = self.get(f"/api/judge-runs/{judge_run.id}/verdicts", key=self.manager_key)
        self.assertEqual(response.status_code, 200)
        self.assertEqual(response["Content-Type"], "application/x-ndjson")
        self.assertTrue(response.streaming)
        lines = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
        verdicts = list(ModelVerdict.objects.shown().filter(judge_run=judge_run).order_by("answer_id", "metric"))
        self.assertEqual(len(lines), len(verdicts))
        first, verdict = lines[0], verdicts[0]
        self.assertEqual(
            {key: first[key] for key in ("answer_id", "metric", "raw", "completions", "labels", "score")},
            {
                "answer_id": verdict.answer_id,
                "metric": verdict.metric,
                "raw": verdict.raw,
                "completions": verdict.completions,
                "labels": verdict.labels,
                "score": verdict.score,
            },
        )
        self.assertEqual(
            (first["judge"], first["judge_version"], first["judge_version_id"], first["judge_label"]),
            ("api judge", 1, self.version.id, selectors.judge_label(self.version)),
        )
        self.assertEqual(first["question_id"], verdict.answer.question_id)
        self.assertTrue(first["raw"])
        self.assertEqual(first["error"], "")


class JudgeRunRefusalTests(JudgeRunApiTestCase):
    def test_it_answers_404_for_an_unknown_judge_run(self):
        for method, path in (
            ("get", "/api/judge-runs/999999"),
            ("get", "/api/judge-runs/999999/verdicts"),
            ("post", "/api/judge-runs/999999/confirm"),
            ("post", "/api/judge-runs/999999/cancel"),
        ):
            response = getattr(self, method)(path)
            self.assertEqual(response.status_code, 404, path)
            self.assertEqual(response.json(), {"detail": "Not Found"}, path)

    def test_managers_read_but_may_not_start_or_cancel(self):
        judge_run = judging.judge_run_estimate(judge_versions=[self.version], run=self.logged_run)
        refused = self.create(key=self.manager_key)
        self.assertEqual(refused.status_code, 403)
        self.assertEqual(
            refused.json(),
            {"detail": "Your role does not give access to this operation: it is for lead or admin."},
        )
        for action in ("confirm", "cancel"):
            self.assertEqual(
                self.post(f"/api/judge-runs/{judge_run.id}/{action}", self.manager_key).status_code, 403
            )
        self.assertEqual(self.get(f"/api/judge-runs/{judge_run.id}", self.manager_key).status_code, 200)
        judge_run.refresh_from_db()
        self.assertEqual(judge_run.status, "estimated")
        self.assertEqual(JudgeRun.objects.count(), 1)

    def test_a_token_without_the_judges_scope_may_not_start_a_judge_run(self):
        response = self.create(key=self.upload_only_key)
        self.assertEqual(response.status_code, 403)
        self.assertEqual(response.json(), {"detail": "This token does not hold the scope judges:write."})
        self.assertFalse(JudgeRun.objects.exists())

    def test_it_refuses_a_missing_token(self):
        self.assertEqual(self.client.get("/api/judge-runs/1").status_code, 401)
        self.assertEqual(self.client.post("/api/judge-runs", {}).status_code, 401)

    def test_its_schema_describes_each_operation(self):
        paths = self.client.get("/api/openapi.json").json()["paths"]
        self.assertEqual(set(paths["/api/judge-runs"]), {"post"})
        self.assertEqual(set(paths["/api/judge-runs/{judge_run_id}"]), {"get"})
        self.assertEqual(
            set(paths["/api/judge-runs/{judge_run_id}/verdicts"]["get"]["responses"]["200"]["content"]),
            {"application/x-ndjson"},
        )
        for action in ("confirm", "cancel"):
            self.assertIn(
                "409" if action == "confirm" else "404",
                paths[f"/api/judge-runs/{{judge_run_id}}/{action}"]["post"]["responses"],
            )


class JudgeValidationApiTests(TestCase):
    def test_it_gives_the_validation_tables_and_says_what_is_missing(self):
        from reviewapp.models import ApiToken
        from reviewapp.review.services.review import rubric_default

        manager = make_user("manager-api", "manager")
        version = judge_versions.judge_version_save(
            name="numbers", provider="stand-in", model="", metrics=["rubric"], rubric_version=rubric_default()
        )
        _, key = ApiToken.issue(user=manager, name="ci")
        auth = {"HTTP_AUTHORIZATION": f"Bearer {key}"}
        response = self.client.get(f"/api/judges/{version.judge_id}/validation", **auth)
        self.assertEqual(response.status_code, 200)
        body = response.json()
        self.assertEqual(
            (body["judge"], body["judge_version"], body["title"], body["validation_set"], body["labels"]),
            ("numbers", 1, "internal consistency review (no human calibration)", None, []),
        )
        self.assertEqual(body["note"], "no validation set drawn")
        bad = self.client.get(f"/api/judges/{version.judge_id}/validation", {"split": "all"}, **auth)
        self.assertEqual(bad.status_code, 422)
        self.assertEqual(bad.json()["detail"][0]["loc"], ["query", "split"])
        self.assertEqual(self.client.get("/api/judges/999/validation", **auth).status_code, 404)
