"""A measure that applies to no question of a run is shown as n/a with its
reason, never as 0 % of 0 (issue 26, point 11): a task without numbers
(popularity, code) has no numeric accuracy."""

from django.test import TestCase
from django.urls import reverse

from reviewapp.models import ApiToken, Run, Score
from tests.helpers import PASSWORD, jsonl, make_user


def popularity_line(question_id: str, answer: str) -> dict:
    return {
        "question_id": question_id,
        "language": "en",
        "expected_behaviour": "answer",
        "expected_values": [],
        "retrieved_ids": [],
        "retrieved_values": [],
        "answer": answer,
        "cited_ids": [],
        "declined": False,
    }


class NotApplicableCellTests(TestCase):
    def setUp(self):
        make_user("lead")
        self.client.login(username="lead", password=PASSWORD)
        upload = jsonl(
            popularity_line("p1", "Yes"), popularity_line("p2", "No"), popularity_line("p3", "Yes")
        )
        with self.captureOnCommitCallbacks(execute=True):
            response = self.client.post(
                reverse("run-upload"),
                {
                    "file": upload,
                    "assistant_version": "pop-1",
                    "set_version": "pop-set-1",
                    "set_from_file": "on",
                },
            )
        self.assertEqual(response.status_code, 302, response.content.decode()[:2000])
        self.run_obj = Run.objects.get()

    def test_it_stores_no_numeric_accuracy_for_questions_without_an_expected_number(self):
        scores = {(s.slice, s.measure): (s.k, s.n) for s in Score.objects.filter(slice="all")}
        self.assertNotIn(("all", "numeric_accuracy"), scores)
        self.assertEqual(scores[("all", "answer_rate")], (3, 3))

    def test_it_draws_numeric_accuracy_as_not_applicable_on_the_run_page(self):
        response = self.client.get(self.run_obj.get_absolute_url())
        self.assertContains(
            response,
            '<td class="empty-cell" title="not applicable: no question has an expected number">'
            'n/a <span class="why">— no question has an expected number</span></td>',
            count=2,  # the "all" row and the "language=en" row
            html=True,
        )
        self.assertNotContains(response, '<span class="k-n">0/0</span>')
        self.assertContains(response, '<span class="k-n">3/3</span> <strong>100.0 %</strong>')

    def test_it_draws_numeric_accuracy_as_not_applicable_on_the_version_dashboard(self):
        response = self.client.get(reverse("version-dashboard", args=["pop-1"]))
        self.assertContains(
            response,
            '<td class="empty-cell">n/a <span class="why">— no question has an expected number</span></td>',
            count=2,
            html=True,
        )

    def test_the_api_names_numeric_accuracy_as_not_applicable_as_the_cli_does(self):
        _, key = ApiToken.issue(user=make_user("pipeline"), name="ci")
        body = self.client.get(f"/api/runs/{self.run_obj.id}", HTTP_AUTHORIZATION=f"Bearer {key}").json()
        (scoring,) = body["scorings"]
        self.assertNotIn("numeric_accuracy", scoring["scores"]["all"])
        self.assertEqual(scoring["not_applicable"]["numeric_accuracy"], "no question has an expected number")
