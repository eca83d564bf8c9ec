"""A scoring's answers exported for other tools: an Inspect eval log that
Inspect's own reader takes, and Ragas-style JSON Lines, both carrying this
app's checks, answer by answer."""

import json

import pytest
from django.test import TestCase
from django.urls import reverse

from reviewapp.models import Scoring
from tests.helpers import PASSWORD, example_file, make_user


class AnswerExportTests(TestCase):
    def setUp(self):
        make_user("lead")
        self.client.login(username="lead", password=PASSWORD)
        # The spec's running example, its questions taken from the log.
        with self.captureOnCommitCallbacks(execute=True):
            response = self.client.post(
                reverse("run-upload"),
                {
                    "file": example_file("running_example.jsonl"),
                    "assistant_version": "assistant-1.3",
                    "set_version": "1.3",
                    "set_from_file": "on",
                },
            )
        self.assertEqual(response.status_code, 302)
        self.scoring = Scoring.objects.get(status=Scoring.Status.DONE)

    def export(self, fmt: str) -> bytes:
        name = {"ragas.jsonl": "export-answers-ragas", "inspect.json": "export-answers-inspect"}[fmt]
        response = self.client.get(reverse(name, args=(self.scoring.run_id, self.scoring.id)))
        self.assertEqual(response.status_code, 200)
        return b"".join(response.streaming_content)

    def test_the_ragas_lines_carry_each_answer_with_its_checks(self):
        lines = [json.loads(line) for line in self.export("ragas.jsonl").splitlines()]
        self.assertEqual(len(lines), 8)
        by_id = {line["reviewapp"]["question_id"]: line for line in lines}
        a03 = by_id["a03"]
        self.assertIn("35", a03["response"])
        self.assertEqual(a03["reference"], "41")
        self.assertEqual(a03["reviewapp"]["checks"]["numeric_accuracy"], {"k": 0, "n": 1})
        self.assertEqual(a03["reviewapp"]["checks"]["unsupported_numbers"]["k"], 1)
        self.assertEqual({f["kind"] for f in a03["reviewapp"]["findings"]}, {"numeric", "unsupported"})
        self.assertTrue(a03["retrieved_contexts"], "the evidence is written as passages")
        self.assertEqual(by_id["a06"]["reference"], "(a refusal)")
        self.assertEqual(by_id["a06"]["reviewapp"]["checks"]["refusal_accuracy"], {"k": 0, "n": 1})
        self.assertEqual(by_id["a01"]["reviewapp"]["findings"], [])

    def test_the_inspect_log_is_read_by_inspects_own_reader(self):
        log_reader = pytest.importorskip("inspect_ai.log")
        path = self.tmp_path / "export.json"
        path.write_bytes(self.export("inspect.json"))
        log = log_reader.read_eval_log(str(path))
        self.assertEqual(log.status, "success")
        self.assertEqual(log.eval.model, "assistant-1.3")
        self.assertEqual(len(log.samples), 8)
        samples = {sample.id: sample for sample in log.samples}
        a03 = samples["a03"]
        self.assertEqual(a03.output.completion[:20], json_answer("a03")[:20])
        self.assertEqual(a03.scores["numeric_accuracy"].value, "I")
        self.assertIn("expected 41", a03.scores["numeric_accuracy"].explanation)
        self.assertEqual(a03.scores["unsupported_numbers"].metadata["k"], 1)
        self.assertEqual(samples["a01"].scores["numeric_accuracy"].value, "C")
        self.assertEqual(samples["a07"].scores["citation_validity"].answer, "1/2")
        # The run's figures are the log's results, with k and n.
        results = {score.name: score.metrics for score in log.results.scores}
        self.assertEqual(results["numeric_accuracy"]["k"].value, 5)
        self.assertEqual(results["numeric_accuracy"]["n"].value, 6)
        self.assertAlmostEqual(results["refusal_accuracy"]["rate"].value, 0.5)

    def test_a_scoring_not_done_has_nothing_to_export(self):
        Scoring.objects.filter(id=self.scoring.id).update(status=Scoring.Status.SCORING)
        response = self.client.get(
            reverse("export-answers-ragas", args=(self.scoring.run_id, self.scoring.id))
        )
        self.assertEqual(response.status_code, 404)

    @pytest.fixture(autouse=True)
    def _tmp(self, tmp_path):
        self.tmp_path = tmp_path


def json_answer(question_id: str) -> str:
    from tests.conftest import SHARED_DATA

    for line in (SHARED_DATA / "running_example.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record.get("question_id") == question_id:
            return record["answer"]
    raise KeyError(question_id)


class NotRunAttemptExportTests(TestCase):
    """With repeated attempts, each attempt the run holds no answer for is
    exported once, under its own number, so no two samples share an id and
    epoch (Inspect refuses that)."""

    def test_each_missing_attempt_keeps_its_number(self):
        from reviewapp.runs.services.question_sets import set_version_create
        from scoring.logfile import normalise_question
        from tests.helpers import jsonl

        make_user("lead")
        self.client.login(username="lead", password=PASSWORD)
        questions = [
            {"question_id": q, "language": "en", "expected_behaviour": "answer", "expected_values": [7.6]}
            for q in ("q1", "q2")
        ]
        set_version_create(version="rep-1", questions=[normalise_question(q) for q in questions])

        def line(question_id, attempt):
            return {
                "question_id": question_id, "attempt": attempt, "language": "en", "retrieved_ids": ["S"],
                "retrieved_values": [7.6], "answer": "It was 7.6.", "cited_ids": [], "declined": False,
            }  # fmt: skip

        upload = jsonl(
            {"assistant_version": "rep-bot-1", "set_version": "rep-1", "repetitions": 3},
            line("q1", 1),
            line("q2", 1),
            line("q2", 2),
        )
        with self.captureOnCommitCallbacks(execute=True):
            self.client.post(reverse("run-upload"), {"file": upload})
        scoring = Scoring.objects.get(status=Scoring.Status.DONE)
        response = self.client.get(reverse("export-answers-ragas", args=(scoring.run_id, scoring.id)))
        lines = [json.loads(row) for row in b"".join(response.streaming_content).splitlines()]
        attempts = sorted((r["reviewapp"]["question_id"], r["reviewapp"]["attempt"]) for r in lines)
        self.assertEqual(attempts, [("q1", 1), ("q1", 2), ("q1", 3), ("q2", 1), ("q2", 2), ("q2", 3)])
        not_run = [r for r in lines if r["reviewapp"]["status"] == "not_run"]
        self.assertEqual(len(not_run), 3)
