"""Migrations that change what stored rows mean, run against rows made as
the migration before them left the tables."""

from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.models import JSONField, Value
from django.test import TransactionTestCase

BEFORE_LINES = ("reviewapp", "0031_follow_ups")
LINES = ("reviewapp", "0032_chunk_lines_and_timing")
BEFORE_NULLS = ("reviewapp", "0033_answer_run_unchecked")
NULLS = ("reviewapp", "0034_follow_up_sql_null")
STORED_NAMES = ("reviewapp", "0035_run_stored_name")


class MigrationTests(TransactionTestCase):
    def setUp(self):
        self.executor = MigrationExecutor(connection)
        self.latest = self.executor.loader.graph.leaf_nodes()

    def tearDown(self):
        # Leave the schema as every other test expects it.
        executor = MigrationExecutor(connection)
        executor.migrate(self.latest)

    def state_at(self, target):
        self.executor.migrate([target])
        self.executor = MigrationExecutor(connection)
        return self.executor.loader.project_state([target]).apps

    def migrate_to(self, target):
        self.executor.migrate([target])
        return MigrationExecutor(connection).loader.project_state([target]).apps

    def a_run(self, apps, **fields):
        assistant = apps.get_model("reviewapp", "Assistant").objects.create(name="bot")
        version = apps.get_model("reviewapp", "AssistantVersion").objects.create(
            assistant=assistant, label="bot-1"
        )
        question_set = apps.get_model("reviewapp", "QuestionSet").objects.create(name="s")
        set_version = apps.get_model("reviewapp", "SetVersion").objects.create(
            question_set=question_set, version="s-1"
        )
        run = apps.get_model("reviewapp", "Run").objects.create(
            assistant_version=version,
            set_version=set_version,
            file_name="r.jsonl",
            size_bytes=1,
            **{"file_path": "r.jsonl", **fields},
        )
        return run, set_version

    def test_chunks_cut_by_answer_id_are_cut_by_the_same_answers_lines(self):
        apps = self.state_at(BEFORE_LINES)
        run, set_version = self.a_run(apps)
        answer_model = apps.get_model("reviewapp", "Answer")
        answers = [
            answer_model.objects.create(
                run=run, line_number=line, question_id=f"q{line}", language="en", raw="{}", declined=False
            )
            for line in (2, 3, 5, 9)
        ]
        scoring = apps.get_model("reviewapp", "Scoring").objects.create(run=run, set_version=set_version)
        chunk_model = apps.get_model("reviewapp", "ScoringChunk")
        chunk_model.objects.create(
            scoring=scoring, first_answer_id=answers[0].id, last_answer_id=answers[1].id, answers=2
        )
        chunk_model.objects.create(
            scoring=scoring, first_answer_id=answers[2].id, last_answer_id=answers[3].id, answers=2
        )

        apps = self.migrate_to(LINES)
        chunks = apps.get_model("reviewapp", "ScoringChunk").objects.order_by("first_line")
        self.assertEqual(
            list(chunks.values_list("first_line", "last_line", "answers", "timing")),
            [(2, 3, 2, None), (5, 9, 2, None)],
        )

    def test_json_null_follow_ups_become_sql_null_and_declared_ones_stay(self):
        apps = self.state_at(BEFORE_NULLS)
        _, set_version = self.a_run(apps)
        question_model = apps.get_model("reviewapp", "Question")
        # JSON null, as COPY wrote None (the ORM writes SQL NULL).
        for question_id, follow_up in (
            ("q1", Value(None, JSONField())),
            ("q2", {"text": "Which year?", "max_turns": 2}),
        ):
            question_model.objects.create(
                set_version=set_version,
                question_id=question_id,
                language="en",
                expected_behaviour="answer",
                expected_values=[],
                follow_up=follow_up,
            )
        self.assertEqual(question_model.objects.filter(follow_up__isnull=False).count(), 2)

        apps = self.migrate_to(NULLS)
        questions = apps.get_model("reviewapp", "Question").objects
        self.assertEqual(
            list(questions.filter(follow_up__isnull=False).values_list("question_id", flat=True)), ["q2"]
        )
        self.assertEqual(questions.get(question_id="q2").follow_up, {"text": "Which year?", "max_turns": 2})

    def test_a_runs_path_on_the_host_becomes_its_name_in_the_file_store(self):
        apps = self.state_at(NULLS)
        digest = "ab" * 32
        run, _ = self.a_run(apps, file_path=f"/srv/reviewapp/var/runs/{digest}.jsonl", sha256=digest)
        apps = self.migrate_to(STORED_NAMES)
        stored = apps.get_model("reviewapp", "Run").objects.get(id=run.id)
        self.assertEqual(stored.stored_name, f"runs/{digest}.jsonl")
