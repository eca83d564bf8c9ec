"""The compare page's and the gate's paired tables, counted in the database,
against the per-question successes counted in Python (the reference path)."""

import importlib
import random
from decimal import Decimal

from django.apps import apps
from django.db import connection
from django.test import SimpleTestCase, TestCase
from django.test.utils import CaptureQueriesContext

from reviewapp.models import (
    AnswerCheck,
    Assistant,
    AssistantVersion,
    QuestionOutcome,
    QuestionSet,
    Scoring,
    SetVersion,
)
from reviewapp.scorings.services import store_question_outcomes
from reviewapp.versions.comparison import (
    _side_outcomes,
    compare_versions,
    paired_tables,
    question_successes,
    resolved_questions,
)
from reviewapp.versions.records import DEFAULT_KEY, Record, version_record
from scoring.measures import MEASURES
from scoring.stats.paired import paired, paired_from_table
from tests.fixtures import bare_run

QUESTIONS = [f"q{index:03d}" for index in range(120)]


def python_tables(baseline, candidate, measures=MEASURES) -> dict:
    """The tables as compare_versions counted them before the database did."""
    base, cand = question_successes(baseline), question_successes(candidate)
    subset = resolved_questions(base) & resolved_questions(cand)
    return {
        measure: (
            paired(base[measure], cand[measure]).table,
            paired(
                {q: v for q, v in base[measure].items() if q in subset},
                {q: v for q, v in cand[measure].items() if q in subset},
            ).table,
        )
        for measure in measures
    }


class PairedTablesTests(TestCase):
    @classmethod
    def setUpTestData(cls):
        cls.set_version = SetVersion.objects.create(
            question_set=QuestionSet.objects.create(name="compare-sql"), version="compare-sql-1"
        )
        cls.assistant = Assistant.objects.create(name="bot")

    def record(self, label: str, rng: random.Random, *, runs: int, sealed: set[str]) -> Record:
        """A version's record of ``runs`` scored runs, each holding a random
        part of the questions with up to three attempts each, counts that
        are sometimes zero (a measure that does not apply) and a sealed part."""
        version = AssistantVersion.objects.create(assistant=self.assistant, label=label)
        for number in range(runs):
            repetitions = rng.randint(1, 3)
            run = bare_run(
                version,
                self.set_version,
                f"{label}-{number}",
                sha256=f"{label}-{number}",
                repetitions=repetitions,
            )
            scoring = Scoring.objects.create(
                run=run,
                set_version=self.set_version,
                status=Scoring.Status.DONE,
                config_key=DEFAULT_KEY,
            )
            held = [q for q in QUESTIONS if rng.random() < 0.8]
            checks = []
            for question_id in held:
                for _ in range(rng.randint(1, repetitions)):
                    counts = {}
                    for measure in MEASURES:
                        n = rng.choice((0, 0, 1, 1, 1, 2))
                        # Mostly all or nothing, so that questions succeed often enough.
                        k = rng.choice((0, n, n, rng.randint(0, n)))
                        counts |= {f"{measure}_k": k, f"{measure}_n": n}
                    checks.append(
                        AnswerCheck(
                            scoring=scoring, question_id=question_id, sealed=question_id in sealed, **counts
                        )
                    )
            AnswerCheck.objects.bulk_create(checks)
            store_question_outcomes([scoring.id])  # as adding the scoring up does
        record = version_record(version, self.set_version)
        self.assertEqual(len(record.scorings), runs)
        return record

    def test_it_counts_the_same_tables_as_the_python_path_on_random_records(self):
        for seed in range(8):
            with self.subTest(seed=seed):
                rng = random.Random(seed)
                sealed = {q for q in QUESTIONS if rng.random() < 0.1}
                baseline = self.record(f"base-{seed}", rng, runs=rng.randint(1, 3), sealed=sealed)
                candidate = self.record(f"cand-{seed}", rng, runs=rng.randint(1, 3), sealed=sealed)
                expected = python_tables(baseline, candidate)
                self.assertEqual(paired_tables(baseline, candidate), expected)
                # Tables that are all zero would prove little.
                self.assertGreater(sum(sum(map(sum, expected[m][0])) for m in MEASURES), 100)
                self.assertGreater(sum(sum(map(sum, expected[m][1])) for m in MEASURES), 10)

    def test_it_gives_compare_versions_the_figures_paired_gave(self):
        rng = random.Random(99)
        baseline = self.record("base", rng, runs=2, sealed={"q000", "q001"})
        candidate = self.record("cand", rng, runs=1, sealed={"q000", "q001"})
        base = question_successes(baseline)
        cand = question_successes(candidate)
        subset = resolved_questions(base) & resolved_questions(cand)
        for comparison in compare_versions(baseline, candidate):
            with self.subTest(measure=comparison.measure):
                self.assertEqual(
                    comparison.paired, paired(base[comparison.measure], cand[comparison.measure])
                )
                self.assertEqual(
                    comparison.resolved,
                    paired(
                        {q: v for q, v in base[comparison.measure].items() if q in subset},
                        {q: v for q, v in cand[comparison.measure].items() if q in subset},
                    ),
                )

    def test_it_counts_every_measure_in_one_query(self):
        rng = random.Random(3)
        baseline = self.record("base", rng, runs=2, sealed=set())
        candidate = self.record("cand", rng, runs=2, sealed=set())
        with CaptureQueriesContext(connection) as queries:
            paired_tables(baseline, candidate)
        # Savepoints and settings aside, one query reads the stored outcomes, none the checks.
        reads = [query["sql"] for query in queries if "reviewapp_questionoutcome" in query["sql"]]
        self.assertEqual(len(reads), 1)
        self.assertFalse([query for query in queries if "reviewapp_answercheck" in query["sql"]])

    def test_it_counts_only_the_measures_asked_for(self):
        rng = random.Random(4)
        baseline = self.record("base", rng, runs=1, sealed=set())
        candidate = self.record("cand", rng, runs=3, sealed=set())
        measures = ("citation_validity", "unsupported_answers")
        tables = paired_tables(baseline, candidate, measures)
        self.assertEqual(tables, python_tables(baseline, candidate, measures))

    def test_it_pairs_a_record_with_itself(self):
        rng = random.Random(5)
        record = self.record("same", rng, runs=2, sealed={"q010"})
        tables = paired_tables(record, record)
        self.assertEqual(tables, python_tables(record, record))
        for on_common, _ in tables.values():
            self.assertEqual((on_common[0][1], on_common[1][0]), (0, 0))

    def test_it_gives_empty_tables_without_common_questions(self):
        rng = random.Random(6)
        baseline = self.record("base", rng, runs=1, sealed=set())
        candidate = self.record("cand", rng, runs=1, sealed=set())
        for model in (AnswerCheck, QuestionOutcome):
            model.objects.filter(scoring__in=candidate.scorings, question_id__in=QUESTIONS[:60]).delete()
            model.objects.filter(scoring__in=baseline.scorings, question_id__in=QUESTIONS[60:]).delete()
        empty = ((0, 0), (0, 0))
        self.assertEqual(paired_tables(baseline, candidate), {m: (empty, empty) for m in MEASURES})
        self.assertEqual(python_tables(baseline, candidate), {m: (empty, empty) for m in MEASURES})

    def test_the_bitwise_or_and_the_portable_one_agree(self):
        rng = random.Random(8)
        baseline = self.record("base", rng, runs=3, sealed=set())
        ids = [scoring.id for scoring in baseline.scorings[:2]]
        rows = (
            QuestionOutcome.objects.filter(scoring_id__in=[s.id for s in baseline.scorings])
            .values("question_id")
            .annotate(
                native=_side_outcomes(ids, connection.vendor),
                portable=_side_outcomes(ids, "portable"),
            )
        )
        self.assertGreater(len({row["native"] for row in rows}), 10)
        for row in rows:
            self.assertEqual(row["native"], row["portable"], row["question_id"])

    def test_the_migration_stores_the_outcomes_of_scorings_added_up_before(self):
        rng = random.Random(7)
        baseline = self.record("base", rng, runs=2, sealed={"q002"})
        candidate = self.record("cand", rng, runs=1, sealed={"q002"})
        expected = paired_tables(baseline, candidate)
        unfinished = baseline.scorings[0]
        Scoring.objects.filter(id=unfinished.id).update(status=Scoring.Status.SCORING)
        QuestionOutcome.objects.all().delete()
        migration = importlib.import_module("reviewapp.migrations.0022_question_outcomes")
        migration.store_outcomes_of_finished_scorings(apps, None)
        self.assertFalse(QuestionOutcome.objects.filter(scoring=unfinished).exists())
        Scoring.objects.filter(id=unfinished.id).update(status=Scoring.Status.DONE)
        store_question_outcomes([unfinished.id])
        self.assertEqual(paired_tables(baseline, candidate), expected)


class PairedFromTableTests(SimpleTestCase):
    def test_it_gives_the_figures_paired_gives_for_the_same_questions(self):
        rng = random.Random(1)
        for size in (0, 1, 7, 300):
            with self.subTest(size=size):
                baseline = {f"q{i}": rng.random() < 0.8 for i in range(size) if rng.random() < 0.9}
                candidate = {f"q{i}": rng.random() < 0.7 for i in range(size) if rng.random() < 0.9}
                expected = paired(baseline, candidate)
                self.assertEqual(paired_from_table(expected.table), expected)

    def test_it_takes_counts_a_database_returns_as_decimals(self):
        self.assertEqual(
            paired_from_table(((Decimal(50), Decimal(3)), (Decimal(9), Decimal(2)))),
            paired_from_table(((50, 3), (9, 2))),
        )
        table = paired_from_table(((Decimal(50), 3), (9, 2))).table
        self.assertEqual(table, ((50, 3), (9, 2)))
        self.assertEqual({type(cell) for row in table for cell in row}, {int})

    def test_it_refuses_a_negative_count(self):
        with self.assertRaisesMessage(ValueError, "counts cannot be negative; got ((1, -1), (0, 0))"):
            paired_from_table(((1, -1), (0, 0)))
