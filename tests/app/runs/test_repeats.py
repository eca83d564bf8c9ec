"""Runs that ask each question several times, and attempts that ended without
an answer (spec 004), through ingestion."""

from django.db import IntegrityError, transaction
from django.test import TestCase

from reviewapp.models import Answer, Run, Scoring
from reviewapp.review.services.review import rubric_default
from reviewapp.review.services.samples import Frame, sample_draw
from reviewapp.runs.services.question_sets import set_version_create
from reviewapp.runs.services.runs import run_ingest, run_receive
from scoring.logfile import normalise_question, read_questions
from tests.conftest import SHARED_DATA
from tests.helpers import example_file, jsonl
from tests.scoring.test_logfile import BAD_REPEATS, QUESTIONS, attempt, three_times, timeout_line

SET_VERSION = "rep-1"


class RepeatsTestCase(TestCase):
    @classmethod
    def setUpTestData(cls):
        set_version_create(version=SET_VERSION, questions=[normalise_question(q) for q in QUESTIONS.values()])

    def ingest(self, header: dict, *lines, name: str = "run.jsonl") -> Run:
        """The run of a log with ``header`` (naming this test's set version)
        and ``lines``, after its ingestion; its scoring is left queued."""
        upload = jsonl(header | {"set_version": SET_VERSION}, *lines, name=name)
        received = run_receive(upload=upload)
        run_ingest(run_id=received.run.id)
        received.run.refresh_from_db()
        return received.run

    def stored(self, run: Run) -> list[tuple]:
        return list(
            Answer.objects.filter(run=run)
            .order_by("line_number")
            .values_list("line_number", "question_id", "attempt", "status", "declined")
        )


class RepeatedRunIngestTests(RepeatsTestCase):
    def test_it_rejects_each_bad_attempt_and_timing_with_its_line_and_stores_nothing(self):
        for case, (header, lines, expected) in BAD_REPEATS.items():
            with self.subTest(case):
                run = self.ingest(header, *lines)
                self.assertEqual(run.status, "rejected")
                self.assertEqual([(e["line"], e["field"], e["message"]) for e in run.line_errors], expected)
                self.assertEqual(run.line_error_count, len(expected))
                self.assertEqual(
                    run.error,
                    f"{len(expected)} problem{'s' * (len(expected) > 1)} in the file; no answer was stored",
                )
                self.assertEqual((run.answer_count, Answer.objects.filter(run=run).count()), (0, 0))
                self.assertFalse(Scoring.objects.filter(run=run).exists())

    def test_it_stores_three_attempts_of_each_question_with_their_numbers(self):
        lines = [attempt(question_id, number) for number in (1, 2, 3) for question_id in ("q1", "q2")]
        run = self.ingest(three_times(timeout_s=300, repeats=41), *lines)
        self.assertEqual((run.status, run.answer_count), ("stored", 6))
        self.assertEqual((run.repetitions, run.timeout_s, run.repeats_ref), (3, 300, "41"))
        self.assertEqual(
            self.stored(run),
            [
                (2, "q1", 1, "ok", False),
                (3, "q2", 1, "ok", False),
                (4, "q1", 2, "ok", False),
                (5, "q2", 2, "ok", False),
                (6, "q1", 3, "ok", False),
                (7, "q2", 3, "ok", False),
            ],
        )
        self.assertTrue(Scoring.objects.filter(run=run).exists())

    def test_it_stores_an_attempt_that_timed_out_without_an_answer_with_its_status(self):
        run = self.ingest(three_times(), attempt("q1", 1), timeout_line("q1", 2), attempt("q2", 1))
        self.assertEqual((run.status, run.answer_count), ("stored", 3))
        self.assertEqual(
            self.stored(run),
            [(2, "q1", 1, "ok", False), (3, "q1", 2, "timeout", False), (4, "q2", 1, "ok", False)],
        )
        timed_out = Answer.objects.get(run=run, attempt=2)
        self.assertEqual(timed_out.record, timeout_line("q1", 2))

    def test_it_takes_fewer_attempts_than_planned(self):
        run = self.ingest(three_times(), attempt("q1", 1), attempt("q1", 2), attempt("q2", 1))
        self.assertEqual((run.status, run.answer_count, run.repetitions), ("stored", 3, 3))

    def test_it_keeps_the_plan_of_a_run_made_once(self):
        set_version_create(version="1.2", questions=read_questions(SHARED_DATA / "questions_set-1.2.jsonl"))
        received = run_receive(upload=example_file("answers_run_assistant-1.3_set-1.2.jsonl"))
        run_ingest(run_id=received.run.id)
        run = Run.objects.get(id=received.run.id)
        self.assertEqual(
            (run.status, run.repetitions, run.timeout_s, run.repeats_ref), ("stored", 1, 600, "")
        )
        self.assertEqual(set(Answer.objects.filter(run=run).values_list("attempt", "status")), {(1, "ok")})

    def test_it_refuses_a_question_answered_twice_in_a_run_made_once(self):
        run = self.ingest({"assistant_version": "a-1"}, attempt("q1", None), attempt("q1", 1))
        self.assertEqual(run.status, "rejected")
        self.assertEqual(
            run.line_errors,
            [{"line": 3, "field": "question_id", "message": "'q1' already answered on line 2"}],
        )

    def test_it_rejects_a_header_with_a_bad_plan_and_stores_nothing(self):
        run = self.ingest(three_times(timeout_s=-1, repeats=0), attempt("q1", 1), attempt("q1", 2))
        self.assertEqual(run.status, "rejected")
        self.assertEqual(
            [(e["line"], e["field"]) for e in run.line_errors], [(1, "timeout_s"), (1, "repeats")]
        )
        self.assertEqual((run.repetitions, Answer.objects.filter(run=run).count()), (1, 0))

    def test_it_keeps_the_attempt_a_rerun_line_repeats_only_in_a_run_that_repeats_one(self):
        rerun = self.ingest(three_times(repeats=41), attempt("q1", 1, repeats_attempt=2))
        self.assertEqual((rerun.status, rerun.repeats_ref), ("stored", "41"))
        self.assertEqual(Answer.objects.get(run=rerun).record["repeats_attempt"], 2)
        unlinked = self.ingest(three_times(), attempt("q1", 1, repeats_attempt=2))
        self.assertEqual(unlinked.status, "rejected")
        self.assertEqual(
            unlinked.line_errors,
            [
                {
                    "line": 2,
                    "field": "repeats_attempt",
                    "message": "names an attempt of the run this one repeats, but the header names none: "
                    'add "repeats" to it',
                }
            ],
        )


class RepeatedAnswersTests(RepeatsTestCase):
    def test_it_holds_one_answer_per_attempt_of_a_question(self):
        run = self.ingest(three_times(), attempt("q1", 1))
        fields = {"run": run, "question_id": "q1", "language": "en", "declined": False, "raw": "{}"}
        Answer.objects.create(line_number=3, attempt=2, **fields)
        with self.assertRaises(IntegrityError), transaction.atomic():
            Answer.objects.create(line_number=4, attempt=2, **fields)
        self.assertEqual(Answer.objects.filter(run=run, question_id="q1").count(), 2)

    def test_it_draws_a_sample_from_every_attempt(self):
        lines = [attempt(question_id, number) for number in (1, 2, 3) for question_id in ("q1", "q2")]
        run = self.ingest(three_times(), *lines)
        sample = sample_draw(frame=Frame(run=run), size=10, seed=3, rubric_version=rubric_default())
        self.assertEqual((sample.frame_size, sample.items.count()), (6, 6))
