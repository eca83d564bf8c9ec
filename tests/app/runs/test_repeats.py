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
        first = self.ingest(three_times(), attempt("q1", 1), timeout_line("q1", 2), name="first.jsonl")
        rerun = self.ingest(three_times(repeats=first.id), attempt("q1", 1, repeats_attempt=2))
        self.assertEqual((rerun.status, rerun.repeats_ref), ("stored", str(first.id)))
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


class RepeatedAttemptLinkTests(RepeatsTestCase):
    """A line that repeats an attempt names one the repeated run holds and
    that failed (spec 004: an extra run is linked to the attempt it repeats,
    both receipts kept); else the line and field are named and nothing is
    stored (issue 27 point 8)."""

    def setUp(self):
        # q1: answered, then timed out, then not run; q2: answered, then not run twice.
        self.first = self.ingest(
            three_times(), attempt("q1", 1), timeout_line("q1", 2), attempt("q2", 1), name="first.jsonl"
        )

    def rerun(self, *lines, repeats=None):
        header = three_times(repeats=self.first.id if repeats is None else repeats)
        return self.ingest(header, *lines, name="rerun.jsonl")

    def errors(self, run: Run) -> list[tuple]:
        self.assertEqual((run.status, Answer.objects.filter(run=run).count()), ("rejected", 0))
        return [(e["line"], e["field"], e["message"]) for e in run.line_errors]

    def test_it_links_lines_to_a_timed_out_and_a_not_run_attempt_keeping_both_receipts(self):
        rerun = self.rerun(attempt("q1", 1, repeats_attempt=2), attempt("q2", 1, repeats_attempt=3))
        self.assertEqual((rerun.status, rerun.repeats_id), ("stored", self.first.id))
        self.assertEqual(
            [a.record["repeats_attempt"] for a in Answer.objects.filter(run=rerun).order_by("line_number")],
            [2, 3],
        )
        self.assertEqual(
            self.stored(self.first),
            [(2, "q1", 1, "ok", False), (3, "q1", 2, "timeout", False), (4, "q2", 1, "ok", False)],
        )

    def test_it_refuses_a_link_to_an_answered_attempt(self):
        run = self.rerun(attempt("q2", 1, repeats_attempt=3), attempt("q1", 1, repeats_attempt=1))
        self.assertEqual(
            self.errors(run),
            [
                (
                    3,
                    "repeats_attempt",
                    f"attempt 1 of q1 in run {self.first.id} was answered (status ok, line 2): only an "
                    "attempt that failed, timed out, was cancelled or refused, or was not run is repeated",
                )
            ],
        )

    def test_it_refuses_a_link_past_the_repeated_runs_plan(self):
        run = self.rerun(attempt("q1", 1, repeats_attempt=4))
        self.assertEqual(
            self.errors(run),
            [
                (
                    2,
                    "repeats_attempt",
                    f"run {self.first.id} planned 3 attempts of each question: it has no attempt 4",
                )
            ],
        )

    def test_it_refuses_a_link_into_a_run_that_is_not_stored(self):
        run = self.rerun(attempt("q1", 1, repeats_attempt=2), repeats=999999)
        self.assertEqual(
            self.errors(run),
            [
                (
                    2,
                    "repeats_attempt",
                    "the header's repeats names run 999999, which is not a stored run of a-1 on set rep-1: "
                    "there is no attempt of it to repeat",
                )
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
