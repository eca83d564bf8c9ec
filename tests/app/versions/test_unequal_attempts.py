"""Versions run with a different number of attempts per question are not
like for like: the versions page offers each version's last one with the same
number, and the gate cannot judge two unlike ones unless asked (issue 25,
point 2)."""

from django.urls import reverse

from reviewapp.models import ApiToken
from reviewapp.versions.gate import gate_run
from scoring.stats.gate import CANNOT_JUDGE, EXIT_CODES
from tests.fixtures import load_runs_with_attempts
from tests.helpers import BaseTestCase, make_user

SET = "attempts-1"


class UnequalAttemptsTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        # 1.0 and 1.1 once per question, 1.2 three times.
        load_runs_with_attempts(
            version=SET, questions=40, seed=41, attempts={"bot-1.0": 1, "bot-1.1": 1, "bot-1.2": 3}
        )

    def test_the_gate_cannot_judge_versions_with_unlike_attempts_unless_asked(self):
        answer = gate_run(baseline="bot-1.1", candidate="bot-1.2", set_version=SET)
        self.assertEqual(answer["verdict"], CANNOT_JUDGE)
        self.assertEqual(answer["exit_code"], EXIT_CODES[CANNOT_JUDGE])
        self.assertEqual(answer["exit_code"], 2)
        for entry in answer["measures"].values():
            self.assertEqual(entry["verdict"], CANNOT_JUDGE)
            self.assertIn("3 attempts per question and bot-1.1 1", " ".join(entry["reasons"]))
        asked = gate_run(baseline="bot-1.1", candidate="bot-1.2", set_version=SET, unequal_attempts=True)
        self.assertNotEqual(asked["verdict"], CANNOT_JUDGE)
        self.assertTrue(all(entry["verdict"] != CANNOT_JUDGE for entry in asked["measures"].values()))
        like = gate_run(baseline="bot-1.0", candidate="bot-1.1", set_version=SET)
        self.assertNotEqual(like["verdict"], CANNOT_JUDGE)

    def test_the_api_and_the_page_say_the_same(self):
        user = make_user("pipeline")
        _, key = ApiToken.issue(user=user, name="ci")
        query = {"baseline": "bot-1.1", "candidate": "bot-1.2", "set_version": SET}
        body = self.client.get("/api/gate", query, HTTP_AUTHORIZATION=f"Bearer {key}").json()
        self.assertEqual((body["verdict"], body["exit_code"]), (CANNOT_JUDGE, 2))
        asked = self.client.get(
            "/api/gate", query | {"unequal_attempts": "true"}, HTTP_AUTHORIZATION=f"Bearer {key}"
        ).json()
        self.assertNotEqual(asked["verdict"], CANNOT_JUDGE)
        self.client.force_login(self.manager)
        page = self.client.get(
            reverse("version-gate"), {"baseline": "bot-1.1", "candidate": "bot-1.2", "set": SET}
        )
        self.assertEqual(page.context["answer"]["verdict"], CANNOT_JUDGE)

    def test_the_versions_page_offers_the_last_version_with_as_many_attempts(self):
        self.client.force_login(self.manager)
        page = self.client.get(reverse("version-list"), {"set": SET})
        rows = {row.version.label: row for row in page.context["versions"]}
        self.assertEqual(rows["bot-1.1"].previous.label, "bot-1.0")
        self.assertIsNone(rows["bot-1.2"].previous)  # no earlier version asked each question 3 times
        self.assertContains(page, "no earlier version with 3 attempts per question")

    def test_the_gate_page_opens_on_the_newest_like_for_like_pair(self):
        self.client.force_login(self.manager)
        page = self.client.get(reverse("version-gate"), {"set": SET})
        initial = page.context["form"].initial
        self.assertEqual((initial["candidate"], initial["baseline"]), ("bot-1.1", "bot-1.0"))
