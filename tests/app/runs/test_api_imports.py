"""POST /api/imports: another tool's file becomes a run in one call, or, with
preview=true, shows what it would become and stores nothing."""

import json
from pathlib import Path

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import TestCase

from reviewapp.models import Answer, ApiToken, Run, SetVersion
from tests.helpers import make_user
from tests.scoring.imports.test_tabular import RAGAS_ARRAY

EXAMPLES = Path(__file__).resolve().parents[3] / "reviewapp" / "demo" / "imports"


def example(name: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, (EXAMPLES / name).read_bytes())


class ImportApiTests(TestCase):
    def setUp(self):
        self.user = make_user("pipeline")
        _, key = ApiToken.issue(user=self.user, name="ci")
        self.auth = {"HTTP_AUTHORIZATION": f"Bearer {key}"}

    def post(self, data):
        with self.captureOnCommitCallbacks(execute=True):
            return self.client.post("/api/imports", data, **self.auth)

    def test_an_inspect_log_becomes_a_scored_run_under_the_versions_it_names(self):
        response = self.post(
            {"file": example("inspect_example.eval"), "columns": "retrieved_contexts=contexts"}
        )
        self.assertEqual(response.status_code, 201, response.content)
        body = response.json()
        self.assertEqual(body["assistant_version"], "openai-gpt-4o")
        self.assertEqual(body["set_version"], "regional_statistics-0")
        self.assertTrue(body["imported_from"].startswith("Inspect AI eval log"))
        body = self.client.get(f"/api/runs/{body['id']}", **self.auth).json()
        self.assertEqual(body["status"], "stored")
        scores = body["scorings"][0]["scores"]["all"]
        run = Run.objects.get()
        # Every sample is a question expecting an answer, failed attempts included in n.
        self.assertEqual(scores["numeric_accuracy"]["n"], run.answers.count())
        self.assertEqual(scores["answer_rate"]["k"], run.answers.filter(status="ok", declined=False).count())
        # The evidence came from the named metadata key.
        self.assertTrue(all(a.record.get("retrieved_contexts") for a in run.answers.filter(status="ok")))
        # Sent again, the same file leads to its run.
        again = self.post({"file": example("inspect_example.eval"), "columns": "retrieved_contexts=contexts"})
        self.assertEqual(again.status_code, 200)
        self.assertTrue(again.json()["duplicate"])

    def test_a_preview_checks_the_whole_file_as_the_import_does(self):
        rows = "".join(f"{n},q{n},a{n},{n}\n" for n in (1, 2, 3, 4, 5, 6, 6))
        upload = SimpleUploadedFile("late.csv", f"id,question,response,reference\n{rows}".encode())
        body = self.post({"file": upload, "preview": "true", "assistant_version": "b", "set_version": "s"}).json()
        self.assertEqual(len(body["lines"]), 5)
        self.assertEqual(body["checked"], {"lines": 0, "problems": 1})
        self.assertEqual(len(body["errors"]), 1)
        self.assertIn("line 8", body["errors"][0])
        rows = "".join(f"{n},q{n},a{n},{n}\n" for n in range(1, 7))
        good = SimpleUploadedFile("good.csv", f"id,question,response,reference\n{rows}".encode())
        body = self.post({"file": good, "preview": "true", "assistant_version": "b", "set_version": "s"}).json()
        self.assertEqual((body["checked"], body["errors"]), ({"lines": 6, "problems": 0}, []))
        self.assertFalse(Run.objects.exists())

    def test_a_preview_shows_the_first_answers_and_stores_nothing(self):
        response = self.post({"file": example("ragas_example.jsonl"), "preview": "true"})
        self.assertEqual(response.status_code, 200, response.content)
        body = response.json()
        self.assertEqual(body["format"], "ragas")
        self.assertIn("user_input", body["fields"])
        self.assertEqual(body["columns"]["question"], "user_input")
        self.assertIn("7.6", body["lines"][0]["answer"])
        self.assertFalse(Run.objects.exists())
        self.assertFalse(SetVersion.objects.exists())

    def test_a_ragas_file_needs_its_versions_named(self):
        response = self.post({"file": example("ragas_example.jsonl")})
        self.assertEqual(response.status_code, 400)
        self.assertIn("assistant_version", " ".join(response.json()["errors"]))
        done = self.post(
            {"file": example("ragas_example.jsonl"), "assistant_version": "rag-1", "set_version": "ragas-1"}
        )
        self.assertEqual(done.status_code, 201, done.content)
        stored = self.client.get(f"/api/runs/{done.json()['id']}", **self.auth).json()
        self.assertEqual(stored["answers"], 5)
        self.assertEqual(Answer.objects.count(), 5)

    def test_bad_options_and_files_are_named_and_nothing_is_stored(self):
        cases = [
            ({"file": example("ragas_example.jsonl"), "columns": "colour=blue"}, "columns"),
            ({"file": example("ragas_example.jsonl"), "language": "english!"}, "language"),
            ({"file": example("inspect_example.eval"), "format": "csv"}, "zip"),
            (
                {
                    "file": example("answers_example.csv"),
                    "columns": "answer=Bot answer,reference=Gold",
                    "assistant_version": "bot-1",
                    "set_version": "csv-1",
                },
                "Gold",
            ),
        ]
        for data, named in cases:
            with self.subTest(named=named):
                response = self.post(data)
                self.assertEqual(response.status_code, 400, response.content)
                self.assertIn(named, " ".join(response.json()["errors"]))
        self.assertFalse(Run.objects.exists())
        self.assertFalse(SetVersion.objects.exists())

    def test_a_token_for_the_number_check_cannot_import(self):
        _, key = ApiToken.issue(user=self.user, name="runtime", scopes=["check"])
        response = self.client.post(
            "/api/imports", {"file": example("ragas_example.jsonl")}, HTTP_AUTHORIZATION=f"Bearer {key}"
        )
        self.assertEqual(response.status_code, 403)

    def test_a_ragas_json_array_becomes_a_run(self):
        # Ragas' repository keeps its datasets as one indented JSON array.
        upload = SimpleUploadedFile("ragas_dataset.json", json.dumps(RAGAS_ARRAY, indent=4).encode())
        response = self.post({"file": upload, "assistant_version": "rag-1", "set_version": "ragas-array-1"})
        self.assertEqual(response.status_code, 201, response.content)
        stored = self.client.get(f"/api/runs/{response.json()['id']}", **self.auth).json()
        self.assertEqual(stored["answers"], 2)
        run = Run.objects.get()
        self.assertEqual(
            [answer.record["answer"] for answer in run.answers.order_by("line_number")],
            [row["response"] for row in RAGAS_ARRAY],
        )

    def test_a_nested_mapping_reads_nested_json_lines(self):
        # Shaped like lm-eval's lines but not one (lm-eval's own reader takes
        # those): a mapping reaches into nested objects and lists.
        sample = {
            "id": 3,
            "doc": {"question": "How many legs has a spider?"},
            "target": "8",
            "outputs": [["A spider has 8 legs."]],
        }
        columns = "question_id=id,question=doc.question,answer=outputs[0][0],reference=target"
        upload = SimpleUploadedFile("samples_legs.jsonl", (json.dumps(sample) + "\n").encode())
        response = self.post({"file": upload, "format": "ragas", "columns": columns, "preview": "true"})
        self.assertEqual(response.status_code, 200, response.content)
        [line] = response.json()["lines"]
        self.assertEqual(
            (line["question_id"], line["question"], line["answer"]),
            ("3", "How many legs has a spider?", "A spider has 8 legs."),
        )
        self.assertIn("outputs[0][0]", response.json()["fields"])
        missing = self.post(
            {
                "file": SimpleUploadedFile("samples_legs.jsonl", (json.dumps(sample) + "\n").encode()),
                "format": "ragas",
                "columns": columns.replace("outputs[0][0]", "outputs[1][0]"),
                "assistant_version": "lm-1",
                "set_version": "legs-1",
            }
        )
        self.assertEqual(missing.status_code, 400)
        self.assertEqual(
            missing.json()["errors"],
            ["samples_legs.jsonl: line 1, field outputs[1][0]: missing: 'outputs' has 1 item, no item [1]"],
        )
        self.assertFalse(Run.objects.exists())


class QaDatasetApiTests(TestCase):
    def test_a_multiple_choice_dataset_becomes_a_set_version(self):
        user = make_user("pipeline")
        _, key = ApiToken.issue(user=user, name="ci")
        response = self.client.post(
            "/api/question-sets",
            {"file": example("qa_mc_example.jsonl"), "version": "mc-1", "qa_task": "mc", "language": "en"},
            HTTP_AUTHORIZATION=f"Bearer {key}",
        )
        self.assertEqual(response.status_code, 201, response.content)
        lines = (EXAMPLES / "qa_mc_example.jsonl").read_text().splitlines()
        self.assertEqual(response.json()["questions"], len([line for line in lines if line.strip()]))
        refused = self.client.post(
            "/api/question-sets",
            {
                "file": example("qa_mc_example.jsonl"),
                "version": "mc-2",
                "qa_task": "mc",
                "qa_columns": "question=Q",
            },
            HTTP_AUTHORIZATION=f"Bearer {key}",
        )
        self.assertEqual(refused.status_code, 400)
        self.assertIn("Q", " ".join(refused.json()["errors"]))
        self.assertFalse(SetVersion.objects.filter(version="mc-2").exists())

    def test_an_arc_dataset_as_a_json_array_becomes_a_set_with_the_lettered_answer(self):
        user = make_user("pipeline")
        _, key = ApiToken.issue(user=user, name="ci")
        items = [
            {
                "id": "Mercury_1",
                "question": {
                    "stem": "Which gas do plants take in?",
                    "choices": [{"label": "A", "text": "oxygen"}, {"label": "B", "text": "carbon dioxide"}],
                },
                "answerKey": "B",
            }
        ]
        response = self.client.post(
            "/api/question-sets",
            {
                "file": SimpleUploadedFile("arc.json", json.dumps(items, indent=2).encode()),
                "version": "arc-1",
                "qa_task": "mc",
                "qa_columns": "question=question.stem,options=question.choices,correct=answerKey",
            },
            HTTP_AUTHORIZATION=f"Bearer {key}",
        )
        self.assertEqual(response.status_code, 201, response.content)
        [question] = SetVersion.objects.get(version="arc-1").questions.all()
        self.assertEqual((question.question_id, question.reference), ("Mercury_1", "B. carbon dioxide"))
