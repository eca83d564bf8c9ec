"""A scoring's automatic findings of one kind go into a new set version as a
batch, each expected answer confirmed by a lead (issue 27, point 10)."""

from django.urls import reverse

from reviewapp.models import Question, Run, Scoring, SetVersion
from tests.helpers import PASSWORD, BaseTestCase, example_file

RUN_FILE = "answers_run_assistant-1.3_set-1.2.jsonl"


class FindingsIntoSetTests(BaseTestCase):
    def setUp(self):
        self.client.login(username="lead", password=PASSWORD)
        with self.captureOnCommitCallbacks(execute=True):
            self.client.post(reverse("set-list"), {"file": example_file("questions_set-1.2.jsonl")})
            self.client.post(reverse("run-upload"), {"file": example_file(RUN_FILE)})
        self.run_ = Run.objects.get()
        self.scoring = Scoring.objects.get(run=self.run_)
        self.url = reverse("scoring-findings-into-set", args=[self.run_.id, self.scoring.id])

    def test_it_lists_each_question_with_the_expected_answer_to_confirm(self):
        response = self.client.get(self.url, {"kind": "numeric"})
        self.assertEqual(response.status_code, 200)
        rows = [
            (r["question_id"], r["expected_behaviour"], r["expected_values"])
            for r in response.context["rows"]
        ]
        self.assertEqual(rows, [("a03", "answer", [41.0])])
        self.assertContains(response, 'name="q-0-values" value="41.0"')
        self.assertEqual(SetVersion.objects.count(), 1)

    def test_it_stores_the_ticked_questions_as_one_version_once(self):
        form = {
            "kind": "numeric",
            "version": "1.3",
            "q-0-id": "a03",
            "q-0-include": "1",
            "q-0-behaviour": "answer",
            "q-0-values": "41, 40.5",
        }
        first = self.client.post(self.url, form)
        second = self.client.post(self.url, form)
        self.assertRedirects(first, reverse("set-detail", args=["1.3"]), fetch_redirect_response=False)
        self.assertRedirects(second, reverse("set-detail", args=["1.3"]), fetch_redirect_response=False)
        made = SetVersion.objects.get(version="1.3")
        self.assertEqual(SetVersion.objects.count(), 2)
        self.assertEqual(made.based_on.version, "1.2")
        self.assertEqual(made.questions.count(), 8)
        self.assertEqual(made.questions.get(question_id="a03").expected_values, [41.0, 40.5])
        self.assertEqual(
            made.note,
            f"1 question with findings (wrong number) confirmed from a scoring of run {self.run_.id}",
        )

    def test_it_stores_nothing_when_one_row_is_wrong(self):
        response = self.client.post(
            self.url,
            {
                "kind": "refusal",
                "version": "1.3",
                "q-0-id": "a06",
                "q-0-include": "1",
                "q-0-behaviour": "maybe",
                "q-0-values": "x",
            },
        )
        self.assertEqual(response.status_code, 400)
        self.assertEqual(
            response.context["errors"],
            [
                'question a06, expected_behaviour: must be "answer" or "decline"',
                "question a06, expected_values: numbers separated by commas",
            ],
        )
        self.assertFalse(SetVersion.objects.filter(version="1.3").exists())

    def test_it_refuses_a_question_that_is_not_among_the_findings(self):
        response = self.client.post(
            self.url,
            {
                "kind": "numeric",
                "version": "1.3",
                "q-0-id": "a01",
                "q-0-include": "1",
                "q-0-behaviour": "answer",
            },
        )
        self.assertEqual(
            response.context["errors"], ["question a01: not among this scoring's findings of this kind"]
        )
        self.assertEqual(Question.objects.filter(set_version__version="1.3").count(), 0)

    def test_it_refuses_an_empty_batch(self):
        response = self.client.post(self.url, {"kind": "numeric", "version": "1.3", "q-0-id": "a03"})
        self.assertEqual(
            response.context["errors"], ["tick at least one question to put into the new set version"]
        )

    def test_the_run_page_links_the_batch(self):
        response = self.client.get(self.run_.get_absolute_url(), {"kind": "citation"})
        self.assertContains(response, f'href="{self.url}?kind=citation"')

    def test_it_is_for_leads_only(self):
        self.client.login(username="manager", password=PASSWORD)
        self.assertEqual(self.client.get(self.url).status_code, 403)
