"""Channel overhead (spec 004): a run declares the reply policy it was called
with, answers log overhead events shown apart, and E2E leaves them out only
by a recorded choice, a lead's or the pipeline's."""

from django.urls import reverse
from django.utils import timezone

from reviewapp.models import ApiToken, Run
from tests.app.runs.test_views_runs import UploadTestCase
from tests.helpers import PASSWORD, example_answers, jsonl, make_user

HEADER = {"assistant_version": "bot-7", "set_version": "1.2"}


def at(seconds: int) -> str:
    return f"2026-03-01T10:00:{seconds:02d}Z"


def overhead_answers() -> list[dict]:
    """Eight answers of 10 s each; the first four spent 0-2 s detecting the
    channel and 1-4 s assembling a card (overlapping: 4 s together) and 6-7 s
    resolving links: 5 s of overhead each. Without it: four of 5 s and four
    of 10 s, so P50 7.5, P90 10, mean 7.5, and the overhead is 20 of 80 s."""
    answers = example_answers()
    for index, answer in enumerate(answers):
        answer |= {"submitted_at": at(0), "received_at": at(10)}
        if index < 4:
            answer["overhead"] = [
                {"kind": "channel_detection", "started_at": at(0), "ended_at": at(2)},
                {"kind": "card_assembly", "started_at": at(1), "ended_at": at(4)},
                {"kind": "link_resolution", "started_at": at(6), "ended_at": at(7)},
            ]
    return answers


INCLUDED = '<span class="k-n">n 8</span> P50 <strong>10.00</strong> · P90 <strong>10.00</strong> · mean 10.00'
EXCLUDED = '<span class="k-n">n 8</span> P50 <strong>7.50</strong> · P90 <strong>10.00</strong> · mean 7.50'
WORDS = "card assembly, channel detection, link resolution"


class RunOverheadTests(UploadTestCase):
    def upload(self, **header) -> Run:
        self.upload_set()
        self.upload_run(jsonl(HEADER | header, *overhead_answers()))
        run = Run.objects.get()
        self.assertEqual(run.status, "stored", run.line_errors)
        return run

    def test_it_keeps_the_reply_policy_and_shows_the_overhead_apart(self):
        run = self.upload(reply_policy="channel")
        self.assertEqual((run.reply_policy, run.overhead_excluded_at), ("channel", None))
        page = self.client.get(run.get_absolute_url())
        self.assertContains(page, '<p class="reply-policy">reply policy: channel</p>', html=False)
        for row in (
            '<th scope="row">card assembly</th><td class="num">4</td><td class="num">12.00</td>'
            '<td class="num">3.00</td>',
            '<th scope="row">channel detection</th><td class="num">4</td><td class="num">8.00</td>'
            '<td class="num">2.00</td>',
            '<th scope="row">link resolution</th><td class="num">4</td><td class="num">4.00</td>'
            '<td class="num">1.00</td>',
            '<th scope="row">all overhead of an answer</th><td class="num">4</td><td class="num">20.00</td>'
            '<td class="num">5.00</td>',
        ):
            self.assertContains(page, row, html=False)
        self.assertContains(page, INCLUDED, html=False)
        self.assertContains(
            page,
            f"E2E includes channel overhead ({WORDS}): 25.0 % of the E2E time from timestamps.",
            html=False,
        )
        self.assertContains(page, "Exclude channel overhead from E2E")

    def test_a_leads_choice_takes_the_overhead_out_of_e2e_and_can_be_undone(self):
        run = self.upload()
        response = self.client.post(reverse("run-overhead", args=[run.id]), {"exclude": "1"})
        self.assertRedirects(response, run.get_absolute_url())
        run.refresh_from_db()
        self.assertEqual(run.overhead_excluded_by, self.user)
        today = timezone.now().strftime("%Y-%m-%d")
        self.assertEqual(f"{run.overhead_excluded_at:%Y-%m-%d}", today)
        page = self.client.get(run.get_absolute_url())
        self.assertContains(page, EXCLUDED, html=False)
        self.assertNotContains(page, INCLUDED, html=False)
        self.assertContains(
            page, f"E2E excludes channel overhead ({WORDS}), chosen by lead on {today}.", html=False
        )
        self.assertContains(page, '<p class="reply-policy">reply policy: not declared</p>', html=False)
        self.client.post(reverse("run-overhead", args=[run.id]), {"exclude": "0"})
        run.refresh_from_db()
        self.assertEqual((run.overhead_excluded_at, run.overhead_excluded_by), (None, None))
        self.assertContains(self.client.get(run.get_absolute_url()), INCLUDED, html=False)

    def test_a_header_choice_is_recorded_as_the_pipelines(self):
        run = self.upload(reply_policy="channel", exclude_overhead=True)
        self.assertIsNotNone(run.overhead_excluded_at)
        self.assertIsNone(run.overhead_excluded_by)
        page = self.client.get(run.get_absolute_url())
        today = f"{run.overhead_excluded_at:%Y-%m-%d}"
        self.assertContains(
            page,
            f"E2E excludes channel overhead ({WORDS}), chosen by the pipeline (the log&#x27;s header) on {today}.",
            html=False,
        )
        self.assertContains(page, EXCLUDED, html=False)

    def test_only_a_lead_may_choose_and_only_by_post(self):
        run = self.upload()
        url = reverse("run-overhead", args=[run.id])
        self.assertEqual(self.client.get(url).status_code, 405)
        make_user("reviewer")
        self.client.login(username="reviewer", password=PASSWORD)
        self.assertEqual(self.client.post(url, {"exclude": "1"}).status_code, 403)
        run.refresh_from_db()
        self.assertIsNone(run.overhead_excluded_at)

    def test_it_refuses_another_reply_policy_naming_line_1_and_the_field(self):
        self.upload_set()
        self.upload_run(jsonl(HEADER | {"reply_policy": "chat"}, *overhead_answers()))
        run = Run.objects.get()
        self.assertEqual(run.status, "rejected")
        self.assertEqual(
            run.line_errors,
            [{"line": 1, "field": "reply_policy", "message": 'must be "direct" or "channel", not "chat"'}],
        )

    def test_it_refuses_an_overhead_event_of_an_unknown_kind_naming_its_line(self):
        self.upload_set()
        answers = overhead_answers()
        answers[1]["overhead"][0]["kind"] = "typing"
        self.upload_run(jsonl(HEADER, *answers))
        run = Run.objects.get()
        self.assertEqual(run.status, "rejected")
        self.assertEqual(
            run.line_errors,
            [
                {
                    "line": 3,
                    "field": "overhead[0].kind",
                    "message": 'must be one of card_assembly, channel_detection, link_resolution, not "typing"',
                }
            ],
        )

    def test_the_api_says_the_reply_policy_the_choice_and_the_e2e_it_gives(self):
        run = self.upload(reply_policy="direct")
        _, key = ApiToken.issue(user=self.user, name="ci")
        auth = {"HTTP_AUTHORIZATION": f"Bearer {key}"}
        body = self.client.get(f"/api/runs/{run.id}", **auth).json()
        self.assertEqual(body["reply_policy"], "direct")
        self.assertEqual(body["overhead"], {"excluded": False, "chosen_by": None, "chosen_at": None})
        self.assertEqual(body["scorings"][0]["e2e"]["all"]["by_source"]["timestamps"]["p50"], 10.0)
        self.client.post(reverse("run-overhead", args=[run.id]), {"exclude": "1"})
        body = self.client.get(f"/api/runs/{run.id}", **auth).json()
        self.assertEqual((body["overhead"]["excluded"], body["overhead"]["chosen_by"]), (True, "lead"))
        self.assertEqual(body["scorings"][0]["e2e"]["all"]["by_source"]["timestamps"]["p50"], 7.5)

    def test_the_scores_export_gives_e2e_as_chosen(self):
        run = self.upload()
        scoring = run.scorings.get()
        url = reverse("export-scores", args=[run.id, scoring.id, "csv"])

        def e2e_row() -> list[str]:
            rows = self.client.get(url).content.decode().splitlines()
            return [row for row in rows if ",all,e2e from timestamps," in row]

        self.assertEqual(e2e_row(), [f"{run.id},bot-7,1.2,all,e2e from timestamps,,8,,,,,10.0,10.0,10.0"])
        self.client.post(reverse("run-overhead", args=[run.id]), {"exclude": "1"})
        self.assertEqual(e2e_row(), [f"{run.id},bot-7,1.2,all,e2e from timestamps,,8,,,,,7.5,7.5,10.0"])
