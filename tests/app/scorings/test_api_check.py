"""POST /api/check: the number check over the API. It agrees with the scorer
on every answer of the demo runs, refuses bad input by its field, writes
nothing, and opens only to a token holding the "check" scope."""

import gc
import json
from datetime import timedelta
from unittest import mock

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from reviewapp.api import CHECK_TOKENS
from reviewapp.core.roles import SCOPES
from reviewapp.management.commands.demo import DEMO_ANSWERS, GENERATED_RUNS, TIMEOUT_S
from reviewapp.models import ApiToken
from scoring import synthetic
from scoring.logfile import normalise_question
from scoring.measures import UNSUPPORTED_K, UNSUPPORTED_N, Options, check_answer
from tests.conftest import SHARED_DATA
from tests.helpers import BaseTestCase, make_user

URL = "/api/check"
A03 = "The under-five mortality rate was 35 per 1,000 live births in 2020 (HLTH_U5_MORT)."


def read_jsonl(name: str) -> list[dict]:
    rows = [json.loads(line) for line in (SHARED_DATA / name).read_text().splitlines() if line.strip()]
    return [row for row in rows if "question_id" in row]  # a header line holds none


def demo_lines() -> list[tuple[dict, dict]]:
    """(answer line, its question) for every line of the demo's runs: the
    spec's running example, the committed run of assistant-1.3 and runs
    generated as `manage.py demo` makes them (the same size and seeds: one
    answer a question, and three attempts with timeouts)."""
    lines = [(row, row) for row in read_jsonl("running_example.jsonl")]
    questions = {q["question_id"]: q for q in read_jsonl("questions_set-1.2.jsonl")}
    lines += [
        (row, questions[row["question_id"]]) for row in read_jsonl("answers_run_assistant-1.3_set-1.2.jsonl")
    ]
    generated = synthetic.generate_question_set(questions=DEMO_ANSWERS, seed=7, set_version="demo-1.0")
    questions = {q["question_id"]: normalise_question(q) for q in generated}
    for plan in GENERATED_RUNS:
        rows = synthetic.generate_run(
            question_set=generated,
            answers=DEMO_ANSWERS,
            seed=plan.seed,
            assistant_version=plan.assistant_version,
            repetitions=plan.repetitions,
            timeout_share=plan.timeout_share,
            timeout_s=TIMEOUT_S,
        )
        lines += [(row, questions[row["question_id"]]) for row in rows]
    return lines


def request_for(line: dict, question: dict, options: dict | None = None) -> dict:
    body = {
        "answer": line.get("answer") or "",
        "language": line.get("language") or "",
        "retrieved_values": line.get("retrieved_values") or [],
        "expected_values": question.get("expected_values") or [],
    }
    if options:
        body["options"] = options
    return body


class CheckTestCase(BaseTestCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        _, cls.key = ApiToken.issue(user=cls.lead, name="runtime", scopes=["check"])

    def setUp(self):
        # The cache outlives a test's transaction: start each test without it.
        CHECK_TOKENS.clear()
        self.addCleanup(CHECK_TOKENS.clear)

    def check(self, body, key: str | None = None):
        return self.client.post(
            URL,
            body if isinstance(body, bytes | str) else json.dumps(body),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {key or self.key}",
        )


class CheckAgreementTests(CheckTestCase):
    def test_it_counts_every_demo_answer_as_the_scorer_does(self):
        lines = [(line, question) for line, question in demo_lines() if (line.get("status") or "ok") == "ok"]
        self.assertGreater(len(lines), 4800)  # the timed-out attempts have no answer
        for first in range(0, len(lines), 1000):
            batch = lines[first : first + 1000]
            response = self.check({"answers": [request_for(line, question) for line, question in batch]})
            self.assertEqual(response.status_code, 200)
            results = response.json()["results"]
            self.assertEqual(len(results), len(batch))
            for (line, question), result in zip(batch, results, strict=True):
                scored = check_answer(line, question)
                self.assertEqual(
                    (result["numbers_counted"], result["numbers_unsupported"]),
                    (scored.counts[UNSUPPORTED_N], scored.counts[UNSUPPORTED_K]),
                    line,
                )
                self.assertEqual(
                    [
                        (n["text"], n["start"], n["counted"], n["supported"], n["matched"])
                        for n in result["numbers"]
                    ],
                    [
                        (c.number.text, c.number.start, c.counted, c.supported, c.matched)
                        for c in scored.numbers
                    ],
                )

    def test_it_counts_as_the_scorer_does_with_the_matching_options(self):
        lines = [(line, question) for line, question in demo_lines()[:1000] if line.get("answer")]
        options = {"rounding": True, "scale_words": True}
        response = self.check({"answers": [request_for(line, question, options) for line, question in lines]})
        self.assertEqual(response.status_code, 200)
        for (line, question), result in zip(lines, response.json()["results"], strict=True):
            scored = check_answer(line, question, options=Options(rounding=True, scale_words=True))
            self.assertEqual(
                (result["numbers_counted"], result["numbers_unsupported"]),
                (scored.counts[UNSUPPORTED_N], scored.counts[UNSUPPORTED_K]),
            )


class CheckAnswerTests(CheckTestCase):
    def test_it_checks_one_answer_and_places_each_number(self):
        response = self.check({"answer": A03, "language": "en", "retrieved_values": [41.0, 44.0]})
        self.assertEqual(response.status_code, 200)
        self.assertEqual(response["Content-Type"], "application/json; charset=utf-8")
        self.assertEqual(
            response.json(),
            {
                "verdict": "unsupported",
                "numbers_counted": 1,
                "numbers_unsupported": 1,
                "numbers": [
                    {
                        "text": "35",
                        "start": 34,
                        "end": 36,
                        "readings": [35.0],
                        "year": False,
                        "ordinal": False,
                        "counted": True,
                        "supported": False,
                        "matched": None,
                        "matched_in": None,
                    },
                    {
                        "text": "2020",
                        "start": 62,
                        "end": 66,
                        "readings": [2020.0],
                        "year": True,
                        "ordinal": False,
                        "counted": False,
                        "supported": None,
                        "matched": None,
                        "matched_in": None,
                    },
                ],
            },
        )
        self.assertEqual(A03[34:36], "35")

    def test_it_says_which_values_support_a_number_and_which_answers_have_none(self):
        response = self.check(
            {
                "answers": [
                    {
                        "answer": "Le taux était de 7,3 % puis 1.250 milliers.",
                        "language": "fr",
                        "retrieved_values": [7.3],
                        "expected_values": [1250],
                    },
                    {"answer": "No figure here.", "language": "en", "retrieved_values": []},
                    {"answer": A03, "language": "en", "retrieved_values": [35]},
                ]
            }
        )
        self.assertEqual(response.status_code, 200)
        body = response.json()
        self.assertEqual([r["verdict"] for r in body["results"]], ["supported", "no numbers", "supported"])
        self.assertEqual(body["answers_unsupported"], 0)
        self.assertEqual(
            [
                (n["text"], n["readings"], n["matched"], n["matched_in"])
                for n in body["results"][0]["numbers"]
            ],
            [("7,3", [7.3], 7.3, "retrieved"), ("1.250", [1.25, 1250.0], 1250.0, "expected")],
        )

    def test_it_applies_the_options(self):
        answer = {
            "answer": "About 7.6, or 1.2 million people.",
            "language": "en",
            "retrieved_values": [7.62, 1.2e6],
        }
        plain = self.check(answer).json()
        both = self.check({**answer, "options": {"rounding": True, "scale_words": True}}).json()
        self.assertEqual((plain["verdict"], plain["numbers_unsupported"]), ("unsupported", 2))
        self.assertEqual((both["verdict"], both["numbers_unsupported"]), ("supported", 0))
        self.assertEqual(both["numbers"][1]["readings"], [1.2, 1200000.0])

    def test_its_openapi_document_describes_the_body_and_the_answer(self):
        operation = self.client.get("/api/openapi.json").json()["paths"]["/api/check"]["post"]
        body = operation["requestBody"]["content"]["application/json"]
        self.assertEqual(
            [shape["title"] for shape in body["schema"]["anyOf"]], ["CheckAnswerIn", "CheckBatchIn"]
        )
        self.assertEqual(body["schema"]["anyOf"][1]["properties"]["answers"]["maxItems"], 1000)
        self.assertEqual(set(body["examples"]), {"one answer", "a batch"})
        answered = operation["responses"]["200"]["content"]["application/json"]["schema"]["anyOf"]
        self.assertEqual(
            answered,
            [{"$ref": "#/components/schemas/CheckOut"}, {"$ref": "#/components/schemas/CheckBatchOut"}],
        )
        self.assertEqual(operation["security"], [{"TokenAuth": []}])

    def test_it_writes_nothing(self):
        self.check({"answer": "7.6", "language": "en", "retrieved_values": [7.6]})  # records the token's use
        data = settings.DATA_DIR
        data.mkdir(parents=True, exist_ok=True)
        before = sorted(data.rglob("*"))
        with CaptureQueriesContext(connection) as queries:
            response = self.check(
                {"answers": [{"answer": "7.6 and 8", "language": "en", "retrieved_values": [7.6]}] * 3}
            )
        self.assertEqual(response.status_code, 200)
        # A token seen in the last 10 s is not looked up again, and its use was recorded.
        self.assertEqual([q["sql"] for q in queries], [])
        self.assertEqual(sorted(data.rglob("*")), before)


class CheckCollectorTests(CheckTestCase):
    def test_it_turns_the_garbage_collector_back_on_after_a_check_or_a_refusal(self):
        body = {"answer": "7.6", "language": "en", "retrieved_values": [7.6]}
        seen = []
        with mock.patch(
            "reviewapp.scorings.api._check_one",
            side_effect=lambda *a: seen.append(gc.isenabled()) or {"verdict": "no numbers"},
        ):
            self.check({"answers": [body, body]})
        self.assertEqual(seen, [False, False])
        self.assertTrue(gc.isenabled())
        self.assertEqual(self.check({"answers": [{**body, "retrieved_values": ["x"]}]}).status_code, 422)
        self.assertTrue(gc.isenabled())
        gc.disable()
        try:
            self.assertEqual(self.check(body).status_code, 200)
            self.assertFalse(gc.isenabled())  # left as it was found
        finally:
            gc.enable()


class CheckRefusalTests(CheckTestCase):
    def assertInvalid(self, response, field: str, message: str):
        self.assertEqual(response.status_code, 422, response.content)
        self.assertEqual(
            response.json(),
            {"detail": [{"type": "value_error", "loc": ["body", "payload", field], "msg": message}]},
        )

    def answers(self, count: int = 5, **changes) -> list[dict]:
        return [
            {"answer": "It was 7.6.", "language": "en", "retrieved_values": [7.6, 7.9, 8.4]}
            for _ in range(count)
        ]

    def test_it_names_a_value_that_is_not_a_number(self):
        for value, shown in (("8.4", "a string ('8.4')"), (True, "true"), (None, "null"), ([1], "a list")):
            answers = self.answers()
            answers[3]["retrieved_values"][2] = value
            self.assertInvalid(
                self.check({"answers": answers}),
                "answers[3].retrieved_values[2]",
                f"answers[3].retrieved_values[2] must be a number, not {shown}",
            )
        self.assertInvalid(
            self.check(
                {"answer": "7", "language": "en", "retrieved_values": [7], "expected_values": [7, "x"]}
            ),
            "expected_values[1]",
            "expected_values[1] must be a number, not a string ('x')",
        )
        self.assertInvalid(
            self.check({"answer": "7", "language": "en", "retrieved_values": "7"}),
            "retrieved_values",
            "retrieved_values must be a list of numbers, not a string ('7')",
        )

    def test_it_refuses_an_answer_over_100_kb(self):
        fits = "é" * 51200  # 102,400 bytes in UTF-8
        self.assertEqual(
            self.check({"answer": fits, "language": "fr", "retrieved_values": []}).status_code, 200
        )
        answers = self.answers()
        answers[1]["answer"] = fits + "7"
        self.assertInvalid(
            self.check({"answers": answers}),
            "answers[1].answer",
            "answers[1].answer is 102,401 bytes in UTF-8; an answer may hold at most 102,400",
        )

    def test_it_refuses_an_empty_batch_and_one_over_1000(self):
        self.assertInvalid(
            self.check({"answers": []}), "answers", "answers is empty: send 1 to 1,000 answers"
        )
        self.assertEqual(self.check({"answers": self.answers(1000)}).status_code, 200)
        self.assertInvalid(
            self.check({"answers": self.answers(1001)}),
            "answers",
            "answers holds 1,001 answers: send at most 1,000 per request",
        )

    def test_it_names_a_missing_an_unknown_or_a_mistyped_field(self):
        self.assertInvalid(
            self.check({"answer": "7", "retrieved_values": []}), "language", "language is required"
        )
        self.assertInvalid(
            self.check({"answer": "7", "language": "en", "retrieved_value": [7]}),
            "retrieved_value",
            "retrieved_value is not a field: an answer has answer, language, retrieved_values, "
            "expected_values, options",
        )
        self.assertInvalid(
            self.check({"answer": 7, "language": "en", "retrieved_values": [7]}),
            "answer",
            "answer must be a string, not int",
        )
        answers = self.answers()
        answers[2]["options"] = {"rounding": "yes"}
        self.assertInvalid(
            self.check({"answers": answers}),
            "answers[2].options.rounding",
            "answers[2].options.rounding must be true or false, not a string ('yes')",
        )
        answers[2]["options"] = {"distinct": True}
        self.assertInvalid(
            self.check({"answers": answers}),
            "answers[2].options.distinct",
            "answers[2].options.distinct is not an option: the options are rounding, scale_words",
        )
        answers[2] = "7.6"
        self.assertInvalid(self.check({"answers": answers}), "answers[2]", "answers[2] must be an object")
        self.assertInvalid(
            self.check({"answers": self.answers(), "language": "en"}),
            "language",
            'language is not a field: a batch is {"answers": [...]} alone',
        )

    def test_it_refuses_a_body_that_is_not_a_json_object(self):
        not_json = self.check(b"answer=7")
        self.assertEqual(not_json.status_code, 400)
        self.assertEqual(not_json.json()["detail"], "the body is not JSON")
        listed = self.check([{"answer": "7"}])
        self.assertEqual(listed.status_code, 422)
        self.assertEqual(
            listed.json()["detail"],
            [
                {
                    "type": "value_error",
                    "loc": ["body", "payload"],
                    "msg": 'the body must be an object: one answer, or {"answers": [...]}',
                }
            ],
        )

    def test_it_refuses_a_body_over_the_limit_unread(self):
        with mock.patch("reviewapp.scorings.api.CHECK_MAX_BODY_BYTES", 1000):
            response = self.check({"answers": self.answers(50)})
        self.assertEqual(response.status_code, 413)
        self.assertEqual(
            response.json(),
            {
                "detail": "the request was refused",
                "errors": ["the body is larger than 1,000 bytes: send fewer answers per request"],
            },
        )

    def test_it_takes_only_post(self):
        response = self.client.get(URL, HTTP_AUTHORIZATION=f"Bearer {self.key}")
        self.assertEqual(response.status_code, 405)


class CheckTokenTests(CheckTestCase):
    BODY = {"answer": "7.6", "language": "en", "retrieved_values": [7.6]}

    def test_it_refuses_a_missing_or_unknown_token(self):
        self.assertEqual(self.client.post(URL, self.BODY, content_type="application/json").status_code, 401)
        self.assertEqual(self.check(self.BODY, key="not-a-token").status_code, 401)

    def test_it_needs_the_check_scope(self):
        other_scopes = [name for name in SCOPES if name != "check"]
        _, key = ApiToken.issue(user=self.lead, name="ci", scopes=other_scopes)
        refused = self.check(self.BODY, key=key)
        self.assertEqual(refused.status_code, 403)
        self.assertEqual(refused.json(), {"detail": "This token does not hold the scope check."})

    def test_it_is_for_leads_and_admins_not_managers(self):
        _, key = ApiToken.issue(user=self.manager, name="ci")
        refused = self.check(self.BODY, key=key)
        self.assertEqual(refused.status_code, 403)
        self.assertEqual(
            refused.json(),
            {"detail": "Your role does not give access to this operation: it is for lead or admin."},
        )
        _, admin_key = ApiToken.issue(user=make_user("admin"), name="ci", scopes=["check"])
        self.assertEqual(self.check(self.BODY, key=admin_key).status_code, 200)

    def test_a_revoked_token_stops_working_within_10_seconds(self):
        token = ApiToken.objects.get(name="runtime")
        now = 1000.0
        with mock.patch.object(CHECK_TOKENS, "clock", lambda: now):
            self.assertEqual(self.check(self.BODY).status_code, 200)
            token.revoke()
            # A process that has just seen the token keeps it for at most 10 s…
            now += 9.9
            self.assertEqual(self.check(self.BODY).status_code, 200)
            # …then looks it up again, and finds it revoked.
            now += 0.1
            self.assertEqual(self.check(self.BODY).status_code, 401)
            now += 1
            self.assertEqual(self.check(self.BODY).status_code, 401)

    def test_a_token_not_seen_before_it_was_revoked_stops_at_once(self):
        ApiToken.objects.get(name="runtime").revoke()
        self.assertEqual(self.check(self.BODY).status_code, 401)

    def test_an_inactive_user_or_a_lost_role_stops_a_token_within_10_seconds(self):
        now = 1000.0
        with mock.patch.object(CHECK_TOKENS, "clock", lambda: now):
            self.assertEqual(self.check(self.BODY).status_code, 200)
            self.lead.groups.clear()
            now += 10
            self.assertEqual(self.check(self.BODY).status_code, 403)
            get_user_model().objects.filter(id=self.lead.id).update(is_active=False)
            now += 10
            self.assertEqual(self.check(self.BODY).status_code, 401)

    def test_an_expired_token_stops_at_once_even_when_kept(self):
        self.assertEqual(self.check(self.BODY).status_code, 200)
        # Expiring in the database alone: the kept copy still says when it expires.
        kept = CHECK_TOKENS.get(ApiToken.hash(self.key))
        kept.expires_at = timezone.now() - timedelta(seconds=1)
        self.assertEqual(self.check(self.BODY).status_code, 401)

    def test_it_records_the_tokens_use_at_most_once_a_minute(self):
        token = ApiToken.objects.get(name="runtime")
        self.assertIsNone(token.last_used_at)
        before = timezone.now()
        self.assertEqual(self.check(self.BODY).status_code, 200)
        token.refresh_from_db()
        first = token.last_used_at
        self.assertTrue(before <= first <= timezone.now())
        CHECK_TOKENS.clear()  # as another server process would, it looks the token up
        with CaptureQueriesContext(connection) as queries:
            self.assertEqual(self.check(self.BODY).status_code, 200)
        self.assertEqual([q["sql"] for q in queries if not q["sql"].startswith("SELECT")], [])
        token.refresh_from_db()
        self.assertEqual(token.last_used_at, first)
        ApiToken.objects.filter(id=token.id).update(last_used_at=first - timedelta(seconds=61))
        CHECK_TOKENS.clear()
        self.assertEqual(self.check(self.BODY).status_code, 200)
        token.refresh_from_db()
        self.assertGreater(token.last_used_at, first)
