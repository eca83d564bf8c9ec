"""The multi-turn protocol (spec 004): a set version declares the follow-up
each question's setups are sent, and each attempt's turns and follow-ups are
stored, labelled and counted on the run page, the answer page and the API."""

from django.db import connection
from django.urls import reverse

from reviewapp.core.errors import ApplicationError
from reviewapp.models import Answer, ApiToken, SetVersion
from reviewapp.runs.selectors import run_follow_up_counts
from reviewapp.runs.services.question_sets import set_version_upload
from reviewapp.runs.services.runs import run_receive
from tests.helpers import PASSWORD, BaseTestCase, jsonl

DECLARED = {"text": "The latest year available.", "max_turns": 2}
QUESTIONS = [
    {"question_id": f"q{n}", "language": "en", "expected_behaviour": "answer", "expected_values": [1.0]}
    for n in range(1, 5)
]


def line(question_id: str, **fields) -> dict:
    return {
        "question_id": question_id,
        "language": "en",
        "retrieved_ids": [],
        "retrieved_values": [],
        # 7 is neither retrieved nor expected: each answer has a finding to list.
        "answer": "It was 7.",
        "cited_ids": [],
        "declined": False,
        **fields,
    }


class FollowUpTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        declaring = [
            {**q, "follow_up": DECLARED} if q["question_id"] in ("q1", "q2") else q for q in QUESTIONS
        ]
        cls.set_version = set_version_upload(
            upload=jsonl({"set_version": "fu-1"}, *declaring, name="questions_set-fu-1.jsonl")
        )
        lines = [
            # The declared follow-up, one turn more than the set allows.
            line("q1", turns=3, follow_ups=[{"text": DECLARED["text"], "kind": "protocol"}]),
            # Logged as protocol, but not the declared text: ad hoc.
            line("q2", follow_ups=[{"text": "Say 2023.", "kind": "protocol"}]),
            line("q3", turns=2, follow_ups=[{"text": "Go on.", "kind": "resume"}]),
            line("q4"),
        ]
        header = {"assistant_version": "fu-bot-1", "set_version": "fu-1"}
        with cls.captureOnCommitCallbacks(execute=True):
            cls.run_obj = run_receive(upload=jsonl(header, *lines, name="run.jsonl")).run
        cls.run_obj.refresh_from_db()

    def setUp(self):
        self.client.login(username="lead", password=PASSWORD)

    def answer(self, question_id: str) -> Answer:
        return Answer.objects.get(run=self.run_obj, question_id=question_id)

    def test_the_set_version_stores_each_questions_declared_follow_up(self):
        stored = dict(self.set_version.questions.values_list("question_id", "follow_up"))
        self.assertEqual(stored, {"q1": DECLARED, "q2": DECLARED, "q3": None, "q4": None})

    def test_the_set_page_shows_the_declared_follow_up(self):
        response = self.client.get(reverse("set-detail", args=["fu-1"]))
        self.assertContains(response, "The latest year available.", count=2)
        self.assertContains(response, "(at most 2 turns)", count=2)

    def test_ingest_stores_the_turns_and_the_labelled_follow_ups(self):
        self.assertEqual(self.run_obj.status, "stored")
        stored = list(
            Answer.objects.filter(run=self.run_obj)
            .order_by("line_number")
            .values_list("question_id", "turns", "follow_ups", "follow_up_warnings")
        )
        self.assertEqual(
            stored,
            [
                (
                    "q1",
                    3,
                    [{"text": DECLARED["text"], "kind": "protocol"}],
                    ["took 3 turns, more than the 2 the set declares"],
                ),
                (
                    "q2",
                    2,
                    [{"text": "Say 2023.", "kind": "ad_hoc", "logged_kind": "protocol"}],
                    [
                        "follow_ups[0] is logged as protocol, but its text is not the one the set declares: "
                        "counted as ad hoc"
                    ],
                ),
                ("q3", 2, [{"text": "Go on.", "kind": "resume"}], []),
                ("q4", 1, [], []),
            ],
        )

    def test_the_run_page_counts_the_attempts_by_kind_of_follow_up(self):
        response = self.client.get(self.run_obj.get_absolute_url())
        self.assertContains(
            response,
            '<p class="follow-ups">3 attempts took follow-ups: 1 by protocol, 1 ad hoc, 1 resumed</p>',
        )

    def test_the_count_reads_only_the_attempts_that_took_follow_ups(self):
        # At 1M answers, reading every answer's follow-ups made the run page 540 ms
        # (bench_app.py); the partial index holds the few that took any. With
        # sequential scans off, a query the index's condition does not cover
        # would still scan, and the plan would not name it.
        if connection.vendor != "postgresql":
            self.skipTest("PostgreSQL's plan")
        query = Answer.objects.filter(run=self.run_obj).exclude(follow_ups=[]).values_list("follow_ups")
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_seqscan = off")
            plan = query.explain()
        self.assertIn("answer_with_follow_ups", plan)
        self.assertEqual(run_follow_up_counts(self.run_obj)["protocol"], 1)

    def test_the_run_pages_findings_label_the_attempts_that_left_the_protocol(self):
        response = self.client.get(self.run_obj.get_absolute_url())
        rows = [
            row
            for row in response.content.decode().split("<tr>")
            if "answer-detail" in row or "answer →" in row
        ]
        labelled = {
            question_id: [
                label
                for label in ("ad hoc", "resumed")
                if f'<span class="tag follow-up">{label}</span>' in row
            ]
            for row in rows
            for question_id in ("q1", "q2", "q3", "q4")
            if f"<code>{question_id}</code>" in row
        }
        self.assertEqual(labelled, {"q1": [], "q2": ["ad hoc"], "q3": ["resumed"], "q4": []})

    def test_the_answer_page_labels_each_follow_up_and_the_turns(self):
        url = reverse("answer-detail", args=[self.run_obj.id, self.answer("q2").id])
        response = self.client.get(url)
        self.assertContains(
            response, '<p class="turns">2 turns <span class="muted">(the set allows 2)</span></p>'
        )
        self.assertContains(
            response,
            '<li><span class="tag follow-up-ad_hoc">ad hoc</span> <span class="muted">(logged as protocol)</span>'
            " Say 2023.</li>",
        )
        self.assertContains(response, "its text is not the one the set declares: counted as ad hoc")
        resumed = self.client.get(reverse("answer-detail", args=[self.run_obj.id, self.answer("q3").id]))
        self.assertContains(resumed, '<li><span class="tag follow-up-resume">resumed</span> Go on.</li>')

    def test_an_answer_without_follow_ups_shows_no_turns(self):
        response = self.client.get(reverse("answer-detail", args=[self.run_obj.id, self.answer("q4").id]))
        self.assertNotContains(response, "<h3>Turns</h3>")

    def api_get(self, path: str):
        _, key = ApiToken.issue(user=self.lead, name="ci")
        return self.client.get(path, HTTP_AUTHORIZATION=f"Bearer {key}")

    def test_the_api_carries_an_attempts_turns_and_labelled_follow_ups(self):
        answer = self.answer("q2")
        body = self.api_get(f"/api/runs/{self.run_obj.id}/answers/{answer.id}").json()
        self.assertEqual(
            body,
            {
                "id": answer.id,
                "question_id": "q2",
                "attempt": 1,
                "status": "ok",
                "line_number": 3,
                "turns": 2,
                "follow_ups": [
                    {"text": "Say 2023.", "kind": "ad_hoc", "logged_kind": "protocol", "label": "ad hoc"}
                ],
                "follow_up_warnings": [
                    "follow_ups[0] is logged as protocol, but its text is not the one the set declares: "
                    "counted as ad hoc"
                ],
            },
        )

    def test_the_api_answer_of_another_run_is_not_found(self):
        answer = self.answer("q2")
        self.assertEqual(
            self.api_get(f"/api/runs/{self.run_obj.id + 1}/answers/{answer.id}").status_code, 404
        )

    def test_the_api_carries_the_counts(self):
        body = self.api_get(f"/api/runs/{self.run_obj.id}").json()
        self.assertEqual(
            body["follow_ups"],
            {
                "attempts": 3,
                "protocol": 1,
                "ad_hoc": 1,
                "resume": 1,
                "summary": "3 attempts took follow-ups: 1 by protocol, 1 ad hoc, 1 resumed",
            },
        )


class BadFollowUpDeclarationTests(BaseTestCase):
    def test_a_set_with_a_bad_follow_up_is_refused_naming_the_line_and_field(self):
        bad = {**QUESTIONS[1], "follow_up": {"text": "More?", "max_turns": 0}}
        upload = jsonl({"set_version": "fu-bad"}, QUESTIONS[0], bad, name="questions_set-fu-bad.jsonl")
        with self.assertRaises(ApplicationError) as caught:
            set_version_upload(upload=upload)
        self.assertEqual(
            caught.exception.errors,
            [
                "questions_set-fu-bad.jsonl: line 3, field follow_up.max_turns: must be a whole number "
                "from 2 to 20, the turns an attempt may take with its follow-ups, not 0"
            ],
        )
        self.assertFalse(SetVersion.objects.filter(version="fu-bad").exists())


class SetWideFollowUpTests(BaseTestCase):
    def test_a_header_follow_up_is_stored_on_each_question_without_its_own(self):
        set_wide = {"text": "Use the latest figures.", "max_turns": 3}
        header = {"set_version": "fu-2", "follow_up": set_wide}
        questions = [{**QUESTIONS[0], "follow_up": DECLARED}, QUESTIONS[1]]
        set_version = set_version_upload(upload=jsonl(header, *questions, name="questions_set-fu-2.jsonl"))
        stored = dict(set_version.questions.values_list("question_id", "follow_up"))
        self.assertEqual(stored, {"q1": DECLARED, "q2": set_wide})
