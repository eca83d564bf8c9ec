from django.test import TestCase

from reviewapp.models import ApiToken, Run
from tests.helpers import example_file, make_user

RUN_FILE = "answers_run_assistant-1.3_set-1.2.jsonl"


class ApiTests(TestCase):
    def setUp(self):
        self.user = make_user("pipeline")
        _, key = ApiToken.issue(user=self.user, name="ci")
        self.auth = {"HTTP_AUTHORIZATION": f"Bearer {key}"}

    def post(self, path, data):
        with self.captureOnCommitCallbacks(execute=True):
            return self.client.post(path, data, **self.auth)

    def test_it_refuses_a_missing_or_wrong_token(self):
        self.assertEqual(self.client.get("/api/runs/1").status_code, 401)
        self.assertEqual(self.client.get("/api/runs/1", HTTP_AUTHORIZATION="Bearer nope").status_code, 401)

    def test_it_uploads_a_set_and_a_run_and_returns_scores(self):
        created = self.post("/api/question-sets", {"file": example_file("questions_set-1.2.jsonl")})
        self.assertEqual(created.status_code, 201)
        self.assertEqual(
            created.json(),
            {"version": "1.2", "question_set": "default", "questions": 8, "sealed": 0, "warnings": []},
        )
        response = self.post("/api/runs", {"file": example_file(RUN_FILE)})
        self.assertEqual(response.status_code, 201)
        run = Run.objects.get()
        self.assertEqual((run.source, run.uploaded_by), ("api", self.user))
        body = self.client.get(f"/api/runs/{run.id}", **self.auth).json()
        self.assertEqual(body["status"], "stored")
        scores = body["scorings"][0]["scores"]
        self.assertEqual(scores["all"]["numeric_accuracy"]["k"], 5)
        self.assertEqual(scores["all"]["numeric_accuracy"]["n"], 6)
        self.assertAlmostEqual(scores["all"]["numeric_accuracy"]["low"], 0.4365, places=4)
        # The example's header states no clocks: not stated, never 0.
        self.assertEqual(body["clock"], {"skew_ms": None, "precision_ms": None})

    def test_it_answers_a_duplicate_upload_with_the_existing_run(self):
        self.post("/api/question-sets", {"file": example_file("questions_set-1.2.jsonl")})
        first = self.post("/api/runs", {"file": example_file(RUN_FILE)}).json()
        again = self.post("/api/runs", {"file": example_file(RUN_FILE)})
        self.assertEqual(again.status_code, 200)
        self.assertEqual((again.json()["id"], again.json()["duplicate"]), (first["id"], True))

    def test_it_lists_what_is_wrong_with_a_refused_upload(self):
        response = self.post("/api/runs", {"file": example_file(RUN_FILE)})
        self.assertEqual(response.status_code, 400)
        self.assertEqual(
            response.json()["errors"],
            [f"{RUN_FILE}: set version 1.2 is not known here; upload its question set first"],
        )

    def test_it_reports_rejected_lines_on_the_run(self):
        self.post("/api/question-sets", {"file": example_file("questions_set-1.2.jsonl")})
        from tests.helpers import jsonl

        response = self.post(
            "/api/runs",
            {"file": jsonl('{"question_id": 3}'), "assistant_version": "a-1", "set_version": "1.2"},
        )
        body = self.client.get(f"/api/runs/{response.json()['id']}", **self.auth).json()
        self.assertEqual(body["status"], "rejected")
        self.assertEqual(
            body["line_errors"][0],
            {"line": 1, "field": "question_id", "message": "question_id must be a string, not 3"},
        )

    def test_it_serves_its_openapi_schema(self):
        schema = self.client.get("/api/openapi.json").json()
        self.assertIn("/api/runs", schema["paths"])
        self.assertIn("/api/runs/{run_id}", schema["paths"])
        self.assertIn("multipart/form-data", schema["paths"]["/api/runs"]["post"]["requestBody"]["content"])

    def test_a_nul_in_the_address_is_refused_as_its_other_malformed_parameters_are(self):
        # The schema's 422 holds a list of problems, each with where and what.
        for address, where in (("/api/runs/1?version=a%00b", "query"), ("/api/runs/a%00b", "path")):
            response = self.client.get(address, **self.auth)
            self.assertEqual(response.status_code, 422, address)
            [problem] = response.json()["detail"]
            self.assertEqual(problem["loc"], [where], address)
            self.assertIn("NUL character", problem["msg"])
