"""The ways in to drawing, assigning and exporting samples (issue 25, point 7)."""

import re

from django.urls import reverse

from reviewapp.judges.services import judging
from reviewapp.models import Assignment
from reviewapp.review.services.review import rubric_default
from reviewapp.review.services.samples import Frame, sample_draw
from tests.fixtures import load_generated_run, stand_in_version
from tests.helpers import PASSWORD, BaseTestCase


class SampleWaysInTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        cls.logged_run = load_generated_run(answers=300, assistant="bot-1.0")
        cls.sample = sample_draw(
            frame=Frame(run=cls.logged_run), size=30, seed=21, rubric_version=rubric_default(), name="Read"
        )
        judge_run = judging.judge_run_estimate(
            judge_versions=[stand_in_version()], run=cls.logged_run, regrade_share=0.25, created_by=cls.lead
        )
        cls.regrade = judging.regrade_draw(judge_run, seed=22)

    def page(self, username: str, url: str):
        self.client.login(username=username, password=PASSWORD)
        return self.client.get(url)

    def test_it_offers_leads_to_draw_a_sample_of_the_run_from_its_page(self):
        draw = reverse("sample-new") + f"?run={self.logged_run.id}"
        page = self.page("lead", reverse("run-detail", args=[self.logged_run.id]))
        self.assertContains(
            page, f'<a class="button secondary" href="{draw}">Draw a sample of this run</a>', html=True
        )
        form = self.client.get(draw)
        self.assertEqual(form.status_code, 200)
        self.assertContains(form, f'<option value="{self.logged_run.id}" selected>', count=1)

    def test_it_shows_managers_no_way_to_draw_a_sample(self):
        page = self.page("manager", reverse("run-detail", args=[self.logged_run.id]))
        self.assertNotContains(page, "Draw a sample of this run")
        self.assertNotContains(page, reverse("sample-new"))

    def test_it_links_the_sample_page_to_its_judgements_export(self):
        page = self.page("manager", reverse("sample-detail", args=[self.sample.id]))
        for fmt in ("csv", "json"):
            url = reverse("export-judgements", args=[self.sample.id, fmt])
            self.assertContains(page, f'href="{url}"', count=1)
            self.assertEqual(self.client.get(url).status_code, 200)

    def test_a_lead_assigns_the_regrade_sample_from_its_page(self):
        url = reverse("sample-detail", args=[self.regrade.id])
        page = self.page("lead", url)
        self.assertEqual(self.regrade.size, 75)
        self.assertContains(page, f'action="{reverse("sample-assign", args=[self.regrade.id])}"', count=1)
        self.client.post(
            reverse("sample-assign", args=[self.regrade.id]),
            {"reviewers": [self.reviewer.id], "readers_per_item": 1},
        )
        self.assertEqual(Assignment.objects.filter(item__sample=self.regrade).count(), 75)

    def test_it_pages_the_items_fifty_at_a_time(self):
        url = reverse("sample-detail", args=[self.regrade.id])
        first = self.page("lead", url)
        rows = re.findall(r'href="/samples/\d+/items/(\d+)/"', first.content.decode())
        self.assertEqual([int(p) for p in rows], list(range(1, 51)))
        self.assertContains(first, "page 1 of 2 · 75 in all")
        second = self.client.get(url, {"page": 2})
        rows = re.findall(r'href="/samples/\d+/items/(\d+)/"', second.content.decode())
        self.assertEqual([int(p) for p in rows], list(range(51, 76)))
        # The strata and the assigning form stay on every page.
        self.assertContains(second, "<h2>Strata</h2>", html=True)
        self.assertContains(second, f'action="{reverse("sample-assign", args=[self.regrade.id])}"')

    def test_the_judge_run_page_sends_a_lead_to_assign_its_regrade_sample(self):
        judge_run = self.regrade.regraded_judge_runs.get()
        assign = reverse("sample-detail", args=[self.regrade.id]) + "#assign"
        page = self.page("lead", reverse("judge-run-detail", args=[judge_run.id]))
        self.assertContains(page, f'<a href="{assign}">assign readers</a>', html=True)
        self.assertContains(page, "<strong>nobody is assigned to it yet</strong>", html=True)
        manager = self.page("manager", reverse("judge-run-detail", args=[judge_run.id]))
        self.assertContains(manager, "<strong>nobody is assigned to it yet</strong>", html=True)
        self.assertNotContains(manager, assign)
        self.client.login(username="lead", password=PASSWORD)
        self.client.post(
            reverse("sample-assign", args=[self.regrade.id]),
            {"reviewers": [self.reviewer.id], "readers_per_item": 1},
        )
        page = self.client.get(reverse("judge-run-detail", args=[judge_run.id]))
        self.assertNotContains(page, "nobody is assigned to it yet")
        self.assertNotContains(page, assign)
