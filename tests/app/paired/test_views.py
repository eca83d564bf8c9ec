"""The paired comparison's pages: readers grade pairs (plain and htmx, one
judgement per double submit, only their own pairs), leads draw, assign,
decide and read the results, managers read the results only."""

from __future__ import annotations

import uuid

from django.test import Client
from django.urls import reverse

from reviewapp.paired.models import PairedAssignment, PairedDecision, PairedJudgement, PairedSample
from reviewapp.paired.services import paired_assign, paired_draw
from tests.fixtures import load_generated_run, twin
from tests.helpers import BaseTestCase, make_user


def form(**changes) -> dict:
    data = {
        "submission_key": str(uuid.uuid4()),
        "grade_1": "resolved",
        "note_1": "",
        "grade_2": "partially_resolved",
        "note_2": "leaves out the period",
        "better": "1",
    }
    data.update(changes)
    return data


class PairedViewCase(BaseTestCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        cls.run_a = load_generated_run(answers=30, assistant="viewbot-1.0", version="pv-1")
        cls.run_b = twin(cls.run_a, "viewbot-2.0", change=lambda text: "SECOND VERSION. " + text)
        cls.reader = make_user("reader", "reviewer")
        cls.other_reader = make_user("reader2", "reviewer")
        cls.sample = paired_draw(
            run_a=cls.run_a,
            run_b=cls.run_b,
            size=4,
            seed=5,
            readers_per_item=1,
            name="viewbot-1.0 against viewbot-2.0",
        )
        paired_assign(paired_sample=cls.sample, reviewers=[cls.reader, cls.other_reader], readers_per_item=1)
        cls.mine = list(PairedAssignment.objects.filter(reviewer=cls.reader).order_by("order"))
        cls.theirs = PairedAssignment.objects.filter(reviewer=cls.other_reader).first()

    def as_user(self, user) -> Client:
        client = Client()
        client.force_login(user)
        return client

    def item_url(self, assignment) -> str:
        return reverse("paired-item", args=[self.sample.id, assignment.alias])


class PairedReaderViewTests(PairedViewCase):
    def test_a_plain_get_returns_the_full_page_and_htmx_the_screen_only(self):
        client = self.as_user(self.reader)
        full = client.get(self.item_url(self.mine[0]))
        self.assertEqual(full.status_code, 200)
        self.assertContains(full, "<html")
        self.assertContains(full, 'id="pair-screen"')
        partial = client.get(self.item_url(self.mine[0]), HTTP_HX_REQUEST="true")
        self.assertEqual(partial.status_code, 200)
        self.assertNotContains(partial, "<html")
        self.assertContains(partial, 'id="pair-screen"')

    def test_answer_1_is_run_as_answer_when_the_places_say_so(self):
        client = self.as_user(self.reader)
        for assignment in self.mine:
            text = client.get(self.item_url(assignment)).content.decode()
            first = text.index('aria-label="Answer 1"')
            second = text.index('aria-label="Answer 2"')
            marker = text.index("SECOND VERSION.")
            # Run B's answers alone start with the marker: it sits in the place B was given.
            self.assertEqual(first < marker < second, not assignment.a_is_first, assignment.alias)

    def test_a_plain_submit_saves_and_goes_to_the_next_pair(self):
        client = self.as_user(self.reader)
        response = client.post(self.item_url(self.mine[0]), form())
        self.assertRedirects(response, self.item_url(self.mine[1]), fetch_redirect_response=False)
        judgement = PairedJudgement.objects.get(assignment=self.mine[0])
        self.assertEqual(
            (judgement.grade_first, judgement.grade_second, judgement.note_second, judgement.better),
            ("resolved", "partially_resolved", "leaves out the period", "1"),
        )

    def test_an_htmx_submit_brings_the_next_pair_in_place(self):
        client = self.as_user(self.reader)
        response = client.post(self.item_url(self.mine[0]), form(), HTTP_HX_REQUEST="true")
        self.assertEqual(response.status_code, 200)
        self.assertEqual(response["HX-Push-Url"], self.item_url(self.mine[1]))
        self.assertContains(response, "saved; this is your next pair")
        self.assertContains(response, f'<code class="alias">{self.mine[1].alias}</code>', html=True)

    def test_after_the_last_pair_the_reader_returns_to_the_queue(self):
        client = self.as_user(self.reader)
        for assignment in self.mine[:-1]:
            client.post(self.item_url(assignment), form())
        done = reverse("paired-queue") + f"?done={self.sample.id}"
        response = client.post(self.item_url(self.mine[-1]), form())
        self.assertRedirects(response, done, fetch_redirect_response=False)
        response = client.post(self.item_url(self.mine[-1]), form(), HTTP_HX_REQUEST="true")
        self.assertEqual(response["HX-Redirect"], done)
        self.assertContains(client.get(done), "You have judged every pair of comparison")

    def test_a_double_submit_makes_one_judgement(self):
        client = self.as_user(self.reader)
        data = form()
        client.post(self.item_url(self.mine[0]), data)
        client.post(self.item_url(self.mine[0]), data, HTTP_HX_REQUEST="true")
        self.assertEqual(PairedJudgement.objects.filter(assignment=self.mine[0]).count(), 1)

    def test_a_missing_note_is_shown_beside_its_field_and_nothing_is_saved(self):
        client = self.as_user(self.reader)
        response = client.post(self.item_url(self.mine[0]), form(note_2="", better=""))
        self.assertEqual(response.status_code, 400)
        self.assertContains(
            response,
            '<p class="field-error">Say why answer 2 is partially resolved: a reason someone else can check.</p>',
            html=True,
            status_code=400,
        )
        self.assertContains(
            response,
            '<p class="field-error">Say which answer is better, or that they are equal.</p>',
            html=True,
            status_code=400,
        )
        self.assertContains(response, "Not saved: 2 things to fix", status_code=400)
        # The reader's choices stay as sent.
        self.assertContains(
            response,
            '<input type="radio" name="grade_2" value="partially_resolved" checked>',
            html=True,
            status_code=400,
        )
        htmx = client.post(self.item_url(self.mine[0]), form(note_2=""), HTTP_HX_REQUEST="true")
        self.assertEqual(htmx.status_code, 200)
        self.assertContains(htmx, "Say why answer 2 is partially resolved")
        self.assertFalse(PairedJudgement.objects.exists())

    def test_a_reader_reaches_only_their_own_pairs(self):
        client = self.as_user(self.reader)
        self.assertEqual(client.get(self.item_url(self.theirs)).status_code, 404)
        self.assertEqual(client.post(self.item_url(self.theirs), form()).status_code, 404)
        self.assertFalse(PairedJudgement.objects.exists())
        # A lead reads nothing here: their own screens are the results and decisions.
        self.assertEqual(self.as_user(self.lead).get(self.item_url(self.mine[0])).status_code, 404)

    def test_the_start_leads_to_the_first_pair_not_yet_judged(self):
        client = self.as_user(self.reader)
        start = reverse("paired-start", args=[self.sample.id])
        self.assertRedirects(client.get(start), self.item_url(self.mine[0]), fetch_redirect_response=False)
        client.post(self.item_url(self.mine[0]), form())
        self.assertRedirects(client.get(start), self.item_url(self.mine[1]), fetch_redirect_response=False)

    def test_the_queue_lists_the_comparison_without_its_name(self):
        response = self.as_user(self.reader).get(reverse("paired-queue"))
        self.assertContains(response, f"Comparison {self.sample.id}")
        self.assertContains(response, f"0 of {len(self.mine)}")
        self.assertNotContains(response, "viewbot")

    def test_wrong_methods_get_405(self):
        client = self.as_user(self.reader)
        self.assertEqual(client.delete(self.item_url(self.mine[0])).status_code, 405)
        self.assertEqual(client.post(reverse("paired-queue")).status_code, 405)
        self.assertEqual(client.post(reverse("paired-start", args=[self.sample.id])).status_code, 405)
        lead = self.as_user(self.lead)
        self.assertEqual(lead.get(reverse("paired-assign", args=[self.sample.id])).status_code, 405)
        self.assertEqual(lead.post(reverse("paired-detail", args=[self.sample.id])).status_code, 405)
        self.assertEqual(lead.post(reverse("paired-list")).status_code, 405)


class PairedLeadViewTests(PairedViewCase):
    def test_a_lead_draws_a_paired_sample(self):
        response = self.as_user(self.lead).post(
            reverse("paired-new"),
            {
                "run_a": self.run_a.id,
                "run_b": self.run_b.id,
                "size": 6,
                "readers_per_item": 2,
                "repeat_percent": 20,
                "seed": 77,
                "name": "drawn by a lead",
            },
        )
        drawn = PairedSample.objects.get(name="drawn by a lead")
        self.assertRedirects(
            response, reverse("paired-detail", args=[drawn.id]), fetch_redirect_response=False
        )
        self.assertEqual(
            (drawn.size, drawn.seed, drawn.readers_per_item, drawn.repeat_share, drawn.created_by),
            (6, 77, 2, 0.2, self.lead),
        )

    def test_a_second_click_on_draw_leads_to_the_first_paired_sample(self):
        lead = self.as_user(self.lead)
        form = {
            "run_a": self.run_a.id,
            "run_b": self.run_b.id,
            "size": 6,
            "readers_per_item": 2,
            "repeat_percent": 10,
            "name": "clicked twice",
            "submission_key": "6f1c1a52-1d3e-4a43-9d25-0d8c3f0f5b7a",
        }
        first = lead.post(reverse("paired-new"), form)
        second = lead.post(reverse("paired-new"), form)
        self.assertEqual(PairedSample.objects.filter(name="clicked twice").count(), 1)
        self.assertEqual(second["Location"], first["Location"])
        self.assertContains(lead.get(second["Location"]), "drawn by the first click")

    def test_a_refused_draw_says_why_and_keeps_the_form(self):
        response = self.as_user(self.lead).post(
            reverse("paired-new"),
            {
                "run_a": self.run_a.id,
                "run_b": self.run_a.id,
                "size": 6,
                "readers_per_item": 1,
                "repeat_percent": 10,
            },
        )
        self.assertEqual(response.status_code, 400)
        self.assertContains(response, "choose two different runs", status_code=400)
        self.assertContains(response, 'name="size" value="6"', status_code=400)

    def test_a_lead_assigns_and_sees_how_many_repeats_were_made(self):
        sample = paired_draw(run_a=self.run_a, run_b=self.run_b, size=10, seed=3, repeat_share=0.2)
        client = self.as_user(self.lead)
        response = client.post(
            reverse("paired-assign", args=[sample.id]),
            {"reviewers": [self.reader.id, self.other_reader.id], "readers_per_item": 2},
            follow=True,
        )
        self.assertContains(response, "24 assignments made, 4 of them repeats.")
        self.assertNotContains(response, 'action="' + reverse("paired-assign", args=[sample.id]))

    def test_the_results_name_the_runs_and_count_the_settled_pairs(self):
        client = self.as_user(self.reader)
        for assignment in self.mine:
            client.post(self.item_url(assignment), form())
        response = self.as_user(self.lead).get(reverse("paired-detail", args=[self.sample.id]))
        self.assertContains(response, "viewbot-1.0")
        self.assertContains(response, "viewbot-2.0")
        self.assertContains(response, self.run_a.file_name)
        self.assertContains(response, f"<strong>{len(self.mine)}</strong> settled", html=True)
        self.assertContains(response, "McNemar exact p")
        self.assertContains(response, "95 % Wilson")

    def test_a_lead_decides_a_pair_and_the_decision_settles_it(self):
        position = self.mine[0].item.position
        url = reverse("paired-decide", args=[self.sample.id, position])
        client = self.as_user(self.lead)
        self.assertContains(client.get(url), "Record the decision")
        refused = client.post(url, {"grade_a": "resolved", "grade_b": "resolved", "better": "a"})
        self.assertContains(refused, "Give the reason for the decision", status_code=400)
        decided = client.post(
            url,
            {
                "submission_key": str(uuid.uuid4()),
                "grade_a": "resolved",
                "grade_b": "unresolved",
                "better": "a",
                "reason": "B only plans a search",
            },
        )
        self.assertEqual(decided.status_code, 302)
        decision = PairedDecision.objects.get(item__position=position, item__paired_sample=self.sample)
        self.assertEqual((decision.grade_b, decision.better, decision.lead), ("unresolved", "a", self.lead))

    def test_the_decision_form_starts_from_what_the_readers_agree_on(self):
        assignment = self.mine[0]
        self.as_user(self.reader).post(self.item_url(assignment), form())
        a, b = (
            ("resolved", "partially_resolved")
            if assignment.a_is_first
            else ("partially_resolved", "resolved")
        )
        url = reverse("paired-decide", args=[self.sample.id, assignment.item.position])
        response = self.as_user(self.lead).get(url)
        self.assertContains(response, f'<input type="radio" name="grade_a" value="{a}" checked>', html=True)
        self.assertContains(response, f'<input type="radio" name="grade_b" value="{b}" checked>', html=True)
        better = "a" if assignment.a_is_first else "b"
        self.assertContains(
            response, f'<input type="radio" name="better" value="{better}" checked>', html=True
        )
        self.assertContains(response, f"saw A as answer {1 if assignment.a_is_first else 2}")

    def test_a_manager_reads_the_results_only(self):
        manager = self.as_user(self.manager)
        results = manager.get(reverse("paired-detail", args=[self.sample.id]))
        self.assertEqual(results.status_code, 200)
        self.assertNotContains(results, "/decide/")
        self.assertNotContains(results, reverse("paired-assign", args=[self.sample.id]))
        self.assertEqual(manager.get(reverse("paired-list")).status_code, 200)
        decide = reverse("paired-decide", args=[self.sample.id, 1])
        self.assertEqual(manager.get(decide).status_code, 403)
        self.assertEqual(manager.post(decide, {"reason": "x"}).status_code, 403)
        self.assertEqual(manager.get(reverse("paired-new")).status_code, 403)
        self.assertEqual(manager.post(reverse("paired-assign", args=[self.sample.id])).status_code, 403)

    def test_a_reviewer_reaches_no_lead_page(self):
        client = self.as_user(self.reader)
        for url in (
            reverse("paired-list"),
            reverse("paired-new"),
            reverse("paired-detail", args=[self.sample.id]),
            reverse("paired-decide", args=[self.sample.id, 1]),
        ):
            self.assertEqual(client.get(url).status_code, 403, url)
