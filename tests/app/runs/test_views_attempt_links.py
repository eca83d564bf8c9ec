"""The run page and the answer page link each repeated attempt to the
attempt it repeats, both receipts shown (issue 27 point 8, spec 004)."""

from django.urls import reverse

from reviewapp.models import Answer
from tests.app.runs.test_repeats import RepeatsTestCase
from tests.helpers import PASSWORD, make_user
from tests.scoring.test_logfile import attempt, three_times, timeout_line


class AttemptLinkPageTests(RepeatsTestCase):
    def setUp(self):
        make_user("lead")
        self.client.login(username="lead", password=PASSWORD)
        self.first = self.ingest(
            three_times(), attempt("q1", 1), timeout_line("q1", 2), attempt("q2", 1), name="first.jsonl"
        )
        self.rerun = self.ingest(
            three_times(repeats=self.first.id),
            attempt("q1", 1, repeats_attempt=2),
            attempt("q2", 1, repeats_attempt=3),
            name="rerun.jsonl",
        )
        self.timed_out = Answer.objects.get(run=self.first, question_id="q1", attempt=2)
        self.again = Answer.objects.get(run=self.rerun, question_id="q1")
        self.q2_again = Answer.objects.get(run=self.rerun, question_id="q2")

    def test_the_rerun_page_lists_each_repeated_attempt_beside_its_original(self):
        response = self.client.get(self.rerun.get_absolute_url())
        links = [
            (link["question_id"], link["attempt"], link["original"]["status"], link["answer"].line_number)
            for link in response.context["attempt_links"]
        ]
        self.assertEqual(links, [("q1", 2, "timed out", 2), ("q2", 3, "not run", 3)])
        original_url = reverse("answer-detail", args=[self.first.id, self.timed_out.id])
        self.assertContains(response, f'<a href="{original_url}">timed out, line 3</a>', html=True)
        self.assertContains(response, "<td>not run</td>", html=True)

    def test_the_repeated_run_page_names_the_later_run_of_each_attempt(self):
        response = self.client.get(self.first.get_absolute_url())
        self.assertEqual(
            [(link["question_id"], link["attempt"]) for link in response.context["repeated_attempts"]],
            [("q1", 2), ("q2", 3)],
        )
        rerun_url = reverse("answer-detail", args=[self.rerun.id, self.again.id])
        self.assertContains(response, f'<a href="{rerun_url}">run #{self.rerun.id}, line 2</a>', html=True)

    def test_each_answer_page_links_the_other_receipt(self):
        rerun_page = self.client.get(reverse("answer-detail", args=[self.rerun.id, self.again.id]))
        original_url = reverse("answer-detail", args=[self.first.id, self.timed_out.id])
        self.assertContains(
            rerun_page,
            f'Repeats attempt 2 of run #{self.first.id}: <a href="{original_url}">that attempt (timed out, line 3)</a>. '
            "Both are kept.",
        )
        original_page = self.client.get(reverse("answer-detail", args=[self.first.id, self.timed_out.id]))
        rerun_url = reverse("answer-detail", args=[self.rerun.id, self.again.id])
        self.assertContains(
            original_page,
            f'Repeated by <a href="{rerun_url}">run #{self.rerun.id}, line 2</a> (answered). Both are kept.',
        )
        not_run_page = self.client.get(reverse("answer-detail", args=[self.rerun.id, self.q2_again.id]))
        self.assertContains(
            not_run_page, f"Repeats attempt 3 of run #{self.first.id}, which was not run. Both are kept."
        )
