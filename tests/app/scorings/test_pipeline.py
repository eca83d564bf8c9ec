"""The scoring pipeline's fast paths store and add up exactly what the
library's checks say: check and finding rows written by COPY with orjson,
the counts each chunk keeps for the adding up, the timing read back as typed
columns, and the questions-not-run shortcut (issue 16)."""

import json
from dataclasses import asdict
from types import SimpleNamespace

from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection, transaction
from django.test import TestCase, override_settings
from django.test.utils import CaptureQueriesContext

from reviewapp.core.bulk import _binary_types, insert_rows, json_text
from reviewapp.models import (
    Answer,
    AnswerCheck,
    Finding,
    Question,
    QuestionOutcome,
    Run,
    Score,
    Scoring,
    ScoringChunk,
)
from reviewapp.runs.services.question_sets import set_version_create
from reviewapp.runs.services.runs import _question_ids, run_receive
from reviewapp.scorings import services as scoring_service
from reviewapp.scorings.selectors import (
    DEFAULT_SLICE_FIELDS,
    check_numbers,
    count_attempts,
    without_questions,
)
from reviewapp.versions.comparison import question_successes
from scoring import synthetic, timing
from scoring.logfile import normalise_question
from scoring.measures import MEASURES, check_answer, not_run_check, slice_counts
from scoring.repeats import tally, with_question_clusters
from scoring.runner import TIMING_FIELDS as LOGGED_TIMING_FIELDS

REPETITIONS = 3
QUESTIONS = 40
QUESTION_FIELDS = ("question_id", "expected_behaviour", "expected_values", "stratum", "split")
TIMING_FIELDS = frozenset(LOGGED_TIMING_FIELDS)


def question_set(version: str) -> list[dict]:
    """Generated questions, a quarter of them sealed, one id with a backslash."""
    questions = synthetic.generate_question_set(questions=QUESTIONS, seed=31, set_version=version)
    for index, question in enumerate(questions):
        question["split"] = "sealed" if index % 4 == 3 else "tuning"
    questions[5]["question_id"] = "q\\back\\slash"
    return questions


def run_lines(questions: list[dict], *, complete: bool) -> list[str]:
    """Three attempts of each question, a tenth timed out, with text that
    COPY must escape; unless ``complete``, some attempts and questions left
    out, so that they are not run."""
    rows = synthetic.generate_run(
        question_set=questions,
        answers=len(questions),
        seed=32,
        repetitions=REPETITIONS,
        timeout_share=0.1,
    )
    for index, row in enumerate(rows):
        if row.get("status", "ok") == "ok" and index % 7 == 0:
            row["answer"] = 'Tab\there, new line\nthere, back\\slash, "quoted" and 12\u00a0345 é 7.5'
    if not complete:
        # Attempt 3 of q…1 never made; every attempt of the fourth question left out.
        left_out = {questions[1]["question_id"]: {3}, questions[3]["question_id"]: {1, 2, 3}}
        rows = [row for row in rows if row.get("attempt", 1) not in left_out.get(row["question_id"], ())]
    header = {"assistant_version": "bot-1", "set_version": "x", "repetitions": REPETITIONS, "timeout_s": 600}
    lines = [json.dumps(header)] + [json.dumps(row, ensure_ascii=False) for row in rows]
    # A byte-order mark, Windows line ends and a tab between fields: stored as logged.
    lines[1] = "\ufeff" + lines[1]
    lines[2] = lines[2].replace(', "language"', ',\t"language"')
    return lines


def upload(test: TestCase, version: str, *, complete: bool) -> Run:
    questions = question_set(version)
    set_version_create(version=version, questions=[normalise_question(q) for q in questions])
    lines = run_lines(questions, complete=complete)
    lines[0] = lines[0].replace('"set_version": "x"', f'"set_version": "{version}"')
    content = "\r\n".join(lines).encode() + b"\r\n"
    with test.captureOnCommitCallbacks(execute=True):
        received = run_receive(upload=SimpleUploadedFile(f"answers_run_bot-1_set-{version}.jsonl", content))
    run = Run.objects.get(id=received.run.id)
    assert run.status == Run.Status.STORED, run.line_errors
    return run


def expected_figures(scoring: Scoring) -> dict:
    """What the scoring must hold, from the library alone: each stored answer
    checked against its question, the attempts not made, and spec 004's
    timing added up from AnswerTiming objects, as before the fast paths."""
    questions = {
        row["question_id"]: row
        for row in Question.objects.filter(set_version=scoring.set_version).values(*QUESTION_FIELDS)
    }
    checks = {False: [], True: []}
    rows, findings, timings, logged_timing = {}, [], [], {}
    for answer in Answer.objects.filter(run=scoring.run).order_by("id"):
        record = json.loads(answer.raw)
        question = questions[answer.question_id]
        sealed = question["split"] == "sealed"
        check = check_answer(record, question, slice_fields=DEFAULT_SLICE_FIELDS)
        checks[sealed].append(check)
        logged = {}
        if not TIMING_FIELDS.isdisjoint(record):
            logged = timing.logged(timing.answer_timing(record, validated=True))
        rows[answer.id] = (check.counts, [n.as_dict() for n in check.numbers])
        logged_timing[answer.id] = logged
        findings += [(answer.id, f.kind, f.detail, sealed, answer.line_number) for f in check.findings]
        if logged and not sealed:
            timings.append((answer.language, answer.question_id, timing.AnswerTiming(**logged)))
    made = {}
    for question_id in Answer.objects.filter(run=scoring.run).values_list("question_id", flat=True):
        made[question_id] = made.get(question_id, 0) + 1
    not_run = {False: [], True: []}
    for question in Question.objects.filter(set_version=scoring.set_version).order_by("id").values():
        for _ in range(REPETITIONS - made.get(question["question_id"], 0)):
            not_run[question["split"] == "sealed"].append(
                not_run_check(question, slice_fields=DEFAULT_SLICE_FIELDS)
            )

    def counts(sealed: bool) -> dict:
        # Each part's counts, with the attempts of one question one cluster.
        every = checks[sealed] + not_run[sealed]
        return with_question_clusters(
            slice_counts(every, slice_fields=DEFAULT_SLICE_FIELDS),
            tally(every, answered=lambda check: True),
            slice_fields=DEFAULT_SLICE_FIELDS,
        )

    slices = scoring_service.part_slices(counts(False), counts(True))
    groups = {"all": timings}
    for entry in timings:
        groups.setdefault(f"language={entry[0]}", []).append(entry)
    summaries = {
        name: without_questions(
            timing.timing_summary([e[2] for e in entries], question_ids=[e[1] for e in entries])
        )
        for name, entries in sorted(groups.items(), key=lambda item: (item[0] != "all", item[0]))
    }
    return {
        "rows": rows,
        "logged_timing": logged_timing,
        "findings": sorted(findings),
        "slices": slices,
        "timing": summaries,
        "not_run": len(not_run[False]) + len(not_run[True]),
        "tuning_not_run": len(not_run[False]),
    }


def stored_outcomes(scoring: Scoring) -> dict[str, dict[str, bool]]:
    """The scoring's question outcomes, as question_successes gives them: a
    question's rows (one a chunk that holds its attempts) taken together."""
    bits = {}
    for row in QuestionOutcome.objects.filter(scoring=scoring):
        bits[row.question_id] = bits.get(row.question_id, 0) | row.outcomes
    outcomes = {measure: {} for measure in MEASURES}
    for question_id, question_bits in bits.items():
        for index, measure in enumerate(MEASURES):
            outcome = QuestionOutcome.outcome(question_bits, index)
            if outcome is not None:
                outcomes[measure][question_id] = bool(outcome)
    return outcomes


def stored_slices(scoring: Scoring) -> dict:
    stored = {}
    for score in Score.objects.filter(scoring=scoring):
        counts = {"k": score.k, "n": score.n}
        if score.clusters is not None:
            counts["clusters"] = score.clusters
        stored.setdefault(score.slice, {})[score.measure] = counts
    return stored


@override_settings(SCORING_CHUNK_ANSWERS=7)
class PipelineFiguresTests(TestCase):
    @classmethod
    def setUpTestData(cls):
        cls.run_obj = upload(cls, "speed-holes", complete=False)
        cls.complete_run = upload(cls, "speed-whole", complete=True)

    def assert_scoring_holds_the_library_figures(self, run: Run) -> Scoring:
        scoring = run.scorings.get()
        self.assertEqual((scoring.status, scoring.error), ("done", ""))
        self.assertGreater(scoring.chunks_total, 10)
        expected = expected_figures(scoring)
        checks = AnswerCheck.objects.filter(scoring=scoring, answer__isnull=False).select_related(
            "scoring", "answer"
        )
        # The numbers are not stored: what the answer page shows is read again.
        self.assertFalse(checks.filter(numbers__isnull=False).exists())
        self.assertEqual(
            {c.answer_id: (c.counts_list, check_numbers(c, c.answer.record)) for c in with_counts(checks)},
            expected["rows"],
        )
        self.assertEqual(
            sorted(
                Finding.objects.filter(scoring=scoring, answer__isnull=False).values_list(
                    "answer_id", "kind", "detail", "sealed", "line_number"
                )
            ),
            expected["findings"],
        )
        self.assertEqual(stored_slices(scoring), expected["slices"])
        self.assertEqual(scoring.timing, expected["timing"])
        self.assertEqual(scoring.not_run, expected["not_run"])
        self.assertEqual(
            AnswerCheck.objects.filter(scoring=scoring, answer__isnull=True).count(), scoring.not_run
        )
        self.assertEqual(stored_outcomes(scoring), question_successes(SimpleNamespace(scorings=[scoring])))
        self.assertEqual(scoring.attempt_counts, asdict(count_attempts(scoring)))
        self.assertEqual(scoring.attempt_counts["not_run"], expected["tuning_not_run"])
        self.assertEqual(
            scoring.sealed_answers,
            AnswerCheck.objects.filter(scoring=scoring, sealed=True, answer__isnull=False).count(),
        )
        return scoring

    def test_it_stores_and_adds_up_what_the_library_says_with_attempts_not_made(self):
        scoring = self.assert_scoring_holds_the_library_figures(self.run_obj)
        self.assertEqual(scoring.not_run, 4)  # attempt 3 of one question, all 3 of another

    def test_it_stores_and_adds_up_what_the_library_says_with_every_attempt_made(self):
        scoring = self.assert_scoring_holds_the_library_figures(self.complete_run)
        self.assertEqual(scoring.not_run, 0)

    def test_scoring_again_replaces_the_question_outcomes(self):
        scoring = self.run_obj.scorings.get()
        before = stored_outcomes(scoring)
        self.assertGreater(sum(map(len, before.values())), QUESTIONS)
        Scoring.objects.filter(id=scoring.id).update(status=Scoring.Status.FAILED)
        with self.captureOnCommitCallbacks(execute=True):
            self.assertTrue(scoring_service.scoring_retry(scoring=scoring))
        scoring.refresh_from_db()
        self.assertEqual(scoring.status, Scoring.Status.DONE)
        self.assertEqual(stored_outcomes(scoring), before)
        tuning = Question.objects.filter(set_version=scoring.set_version).exclude(split="sealed")
        self.assertEqual(
            set(QuestionOutcome.objects.filter(scoring=scoring).values_list("question_id", flat=True)),
            set(tuning.values_list("question_id", flat=True)),
        )

    def test_the_not_run_shortcut_agrees_with_counting_each_questions_attempts(self):
        for run, expected in ((self.run_obj, 4), (self.complete_run, 0)):
            scoring = run.scorings.get()
            with transaction.atomic():
                _, tuning = scoring_service._not_run(scoring)
                self.assertEqual(scoring.not_run, expected)
                transaction.set_rollback(True)
            self.assertEqual(tuning, scoring.attempt_counts["not_run"])

    def test_it_keeps_each_answer_line_as_logged(self):
        first, second = Answer.objects.filter(run=self.run_obj).order_by("line_number")[:2]
        self.assertTrue(first.raw.startswith('{"question_id"'))  # the byte-order mark left out
        self.assertIn(',\t"language"', second.raw)
        self.assertFalse(second.raw.endswith("\r"))
        self.assertEqual(
            Answer.objects.filter(run=self.run_obj, question_id="q\\back\\slash").count(), REPETITIONS
        )

    def test_chunks_without_their_counts_are_added_up_from_the_rows(self):
        # As chunks stored before the counts were kept: the adding up reads them back.
        scoring = self.run_obj.scorings.get()
        before = Scoring.objects.get(id=scoring.id)
        for chunk in ScoringChunk.objects.filter(scoring=scoring):
            chunk.slices.pop(scoring_service.CHUNK_TALLY)
            chunk.save(update_fields=("slices",))
        Score.objects.filter(scoring=scoring).delete()
        Finding.objects.filter(scoring=scoring, answer__isnull=True).delete()
        AnswerCheck.objects.filter(scoring=scoring, answer__isnull=True).delete()
        Scoring.objects.filter(id=scoring.id).update(
            attempt_counts={}, sealed_answers=0, not_run=0, timing={}
        )
        scoring.refresh_from_db()
        with transaction.atomic():
            scoring_service._finish(scoring)
        scoring.refresh_from_db()
        for name in ("attempt_counts", "sealed_answers", "not_run", "timing", "stable"):
            self.assertEqual(getattr(scoring, name), getattr(before, name), name)
        self.assert_scoring_holds_the_library_figures(self.run_obj)

    def test_chunks_without_their_timing_are_added_up_from_the_checks(self):
        # As chunks checked before they kept their timing and their questions' outcomes: the
        # timing was in each check's JSON then. One chunk kept its own, as when a scoring is
        # added up after an upgrade.
        scoring = self.run_obj.scorings.get()
        before = Scoring.objects.get(id=scoring.id)
        outcomes = stored_outcomes(scoring)
        for answer_id, logged in expected_figures(scoring)["logged_timing"].items():
            AnswerCheck.objects.filter(scoring=scoring, answer_id=answer_id).update(timing=logged)
        kept = ScoringChunk.objects.filter(scoring=scoring).order_by("first_line")[2]
        ScoringChunk.objects.filter(scoring=scoring).exclude(id=kept.id).update(timing=None)
        QuestionOutcome.objects.filter(scoring=scoring).delete()
        Score.objects.filter(scoring=scoring).delete()
        Finding.objects.filter(scoring=scoring, answer__isnull=True).delete()
        AnswerCheck.objects.filter(scoring=scoring, answer__isnull=True).delete()
        Scoring.objects.filter(id=scoring.id).update(timing={})
        scoring.refresh_from_db()
        with transaction.atomic():
            scoring_service._finish(scoring)
        scoring.refresh_from_db()
        self.assertEqual(scoring.timing, before.timing)
        self.assertEqual(stored_outcomes(scoring), outcomes)
        self.assert_scoring_holds_the_library_figures(self.run_obj)

    def test_a_questions_attempts_in_several_chunks_make_one_outcome(self):
        # Seven lines a chunk and three attempts a question: some questions span two chunks,
        # each storing its part, which readers take together.
        scoring = self.run_obj.scorings.get()
        rows = list(QuestionOutcome.objects.filter(scoring=scoring).values_list("question_id", flat=True))
        self.assertGreater(len(rows), len(set(rows)))


def with_counts(checks):
    for check in checks:
        check.counts_list = [getattr(check, column) for column in scoring_service.COUNT_COLUMNS]
        yield check


class ChunkRangesTests(TestCase):
    def receive(self, version: str, answers: int):
        questions = question_set(version)
        set_version_create(version=version, questions=[normalise_question(q) for q in questions])
        rows = synthetic.generate_run(question_set=questions, answers=answers, seed=3)
        content = "\n".join(json.dumps(row) for row in rows).encode()
        with self.captureOnCommitCallbacks(execute=True):
            return run_receive(
                upload=SimpleUploadedFile(f"answers_run_bot-1_set-{version}.jsonl", content),
                assistant_version="bot-1",
            ).run

    def test_it_cuts_a_runs_lines_into_ranges_of_the_size(self):
        with override_settings(SCORING_CHUNK_ANSWERS=3):
            run = self.receive("ranges-1", 8)
        self.assertEqual(scoring_service._chunk_ranges(run.id, 3), [(1, 3), (4, 6), (7, 8)])
        self.assertEqual(
            list(ScoringChunk.objects.values_list("first_line", "last_line", "answers")),
            [(1, 3, 3), (4, 6, 3), (7, 8, 2)],
        )

    def test_each_range_opens_at_an_answer_and_none_is_empty(self):
        # Lines without answers between them, as a combined log's question lines make.
        run = self.receive("ranges-2", 8)
        answers = Answer.objects.filter(run=run).order_by("line_number")
        for answer, line in zip(reversed(answers), reversed((1, 2, 10, 11, 12, 13, 30, 31)), strict=True):
            Answer.objects.filter(id=answer.id).update(line_number=line)
        self.assertEqual(scoring_service._chunk_ranges(run.id, 3), [(1, 9), (10, 12), (13, 29), (30, 31)])
        self.assertEqual(scoring_service._chunk_ranges(run.id, 100), [(1, 31)])

    def test_planning_reads_one_row_a_chunk(self):
        run = self.receive("ranges-3", 8)
        with CaptureQueriesContext(connection) as queries:
            scoring_service._chunk_ranges(run.id, 2)
        self.assertEqual(len(queries), 1 + 4)  # the last line, then each chunk's first
        self.assertTrue(all("LIMIT 1" in query["sql"] for query in queries.captured_queries))


class QueriesTests(TestCase):
    def queries_to_score(self, version: str, answers: int) -> int:
        questions = question_set(version)[:answers]
        set_version_create(version=version, questions=[normalise_question(q) for q in questions])
        rows = synthetic.generate_run(question_set=questions, answers=answers, seed=5)
        content = "\n".join(json.dumps(row) for row in rows).encode()
        with CaptureQueriesContext(connection) as queries, self.captureOnCommitCallbacks(execute=True):
            run_receive(
                upload=SimpleUploadedFile(f"answers_run_bot-1_set-{version}.jsonl", content),
                assistant_version="bot-1",
            )
        self.assertEqual(Scoring.objects.get(set_version__version=version).status, "done")
        return len(queries)

    def test_storing_and_scoring_take_as_many_queries_for_more_answers(self):
        # Nothing is read or written a row at a time: ten answers or forty, one chunk, the same
        # queries (after a first run, which also makes the assistant).
        self.queries_to_score("queries-first", 3)
        self.assertEqual(self.queries_to_score("queries-10", 10), self.queries_to_score("queries-40", 40))


class JsonColumnTests(TestCase):
    def test_it_writes_json_as_the_stdlib_reads_it(self):
        value = [{"text": '7,5 \\ "x"', "value": 7.5, "matched": None, "counted": True, "start": 1}]
        self.assertEqual(json.loads(json_text(value)), value)

    def test_it_leaves_non_finite_numbers_and_huge_integers_to_the_stdlib(self):
        for value in (
            [{"value": float("inf")}],
            {"n": 10**30},
            [{"v": float("nan")}],
            {"in": {"v": float("nan")}},
        ):
            self.assertEqual(json_text(value), json.dumps(value))

    def test_a_nullable_json_column_gets_sql_null_as_the_orm_stores_it(self):
        # A question set stored without follow-ups: as JSON null, every question matched
        # follow_up__isnull=False, and storing a run read a million of them back.
        questions = question_set("nulls-1")
        questions[0]["follow_up"] = {"text": "Which year?", "max_turns": 2}
        version = set_version_create(version="nulls-1", questions=[normalise_question(q) for q in questions])
        declared = version.questions.filter(follow_up__isnull=False)
        self.assertEqual(list(declared.values_list("question_id", flat=True)), [questions[0]["question_id"]])


class InsertRowsTests(TestCase):
    """insert_rows writes what the ORM reads back, in COPY's binary format on
    PostgreSQL wherever every column's type allows it."""

    def test_every_column_of_an_answer_reads_back_as_written(self):
        run = upload(self, "rows-1", complete=True)
        raw = '{"answer": "7,5 \\\\ \\"x\\"\\t\u00e9", "n": 1}'
        rows = [
            (run.id, 900_001, "q-\u00e9\t1", 2, "timeout", "fr", True, 3, [{"text": "Why?"}], [], raw),
            (run.id, 900_002, "q2", 1, "ok", "en", False, 1, [], ["took 3 turns"], "{}"),
        ]
        columns = (
            "run_id", "line_number", "question_id", "attempt", "status", "language",
            "declined", "turns", "follow_ups", "follow_up_warnings", "raw",
        )  # fmt: skip
        self.assertEqual(insert_rows(Answer, columns, rows), 2)
        stored = Answer.objects.filter(line_number__gt=900_000).order_by("line_number").values_list(*columns)
        self.assertEqual([tuple(row) for row in stored], [tuple(row) for row in rows])
        if connection.vendor == "postgresql":
            self.assertEqual(
                _binary_types([Answer._meta.get_field(c) for c in columns])[-3:], ["jsonb", "jsonb", "text"]
            )

    def test_json_past_orjson_and_sql_null_go_through_binary_copy(self):
        scoring = upload(self, "rows-2", complete=True).scorings.get()
        check = AnswerCheck.objects.filter(scoring=scoring, answer__isnull=False).first()
        AnswerCheck.objects.filter(id=check.id).delete()
        columns = (*scoring_service.CHECK_COLUMNS, "numbers", "timing")
        numbers = [{"readings": [1.5], "n": 10**30}]  # past 64 bits: the stdlib writes it
        counts = [0] * len(scoring_service.COUNT_COLUMNS)
        insert_rows(AnswerCheck, columns, [(scoring.id, check.answer_id, "q", False, *counts, numbers, None)])
        stored = AnswerCheck.objects.get(scoring=scoring, answer_id=check.answer_id)
        self.assertEqual(stored.numbers[0]["n"], 10**30)
        self.assertEqual(stored.numbers[0]["readings"], [1.5])
        self.assertIsNone(stored.timing)
        self.assertTrue(AnswerCheck.objects.filter(id=stored.id, timing__isnull=True).exists())


class QuestionIdsTests(TestCase):
    def test_a_sets_ids_are_read_whole_even_one_holding_a_line_end(self):
        questions = question_set("ids-1")
        version = set_version_create(version="ids-1", questions=[normalise_question(q) for q in questions])
        ids = sorted(q["question_id"] for q in questions)
        self.assertEqual(sorted(_question_ids(version.id)), ids)
        # No id the checks let in holds one; one stored some other way is still read whole.
        Question.objects.filter(set_version=version, question_id=ids[0]).update(question_id="a\nb")
        self.assertEqual(sorted(_question_ids(version.id)), sorted(["a\nb", *ids[1:]]))
