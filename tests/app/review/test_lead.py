import csv
import io
import uuid

from django.test import TestCase
from django.urls import reverse

from reviewapp.core.errors import ApplicationError
from reviewapp.judges.validation import Settled, review_states, settled_outcomes
from reviewapp.models import Adjudication, AnswerCheck, Assignment, Judgement, SampleItem, Score
from reviewapp.review import selectors as lead
from reviewapp.review.selectors import outcome_key
from reviewapp.review.services.adjudication import Decision, adjudication_submit, calibration_add
from reviewapp.review.services.review import JudgementInput, judgement_submit, rubric_default
from reviewapp.review.services.samples import Frame, sample_assign, sample_draw
from reviewapp.scorings.selectors import check_numbers
from tests.fixtures import load_generated_run
from tests.helpers import PASSWORD, make_user

KEYS = ("series", "period", "unit", "caveat", "unsupported_claim")


def judge(
    assignment,
    *,
    grade="resolved",
    pending=False,
    borderline=False,
    answers=None,
    addresses=True,
    note="checked against the records",
    **extra,
):
    """A reader's judgement given by its grade (or by its metrics in ``extra``)."""
    return judgement_submit(
        assignment=assignment,
        author=assignment.reviewer,
        data=JudgementInput(
            addresses_question=addresses,
            rubric_answers=answers or dict.fromkeys(KEYS, "yes"),
            grade=grade,
            pending=pending,
            borderline=borderline,
            note=note,
            **extra,
        ),
        submission_key=uuid.uuid4(),
    )


def metrics(material_error="no", correctness="correct", fulfilment="full", **extra) -> dict:
    """judge()'s arguments for a judgement given by the material-error answer and the metrics."""
    return {
        "grade": "",
        "material_error": material_error,
        "correctness": correctness,
        "fulfilment": fulfilment,
        **extra,
    }


MATERIAL = {
    "error_claim": "the rate was 35",
    "error_evidence": "the record holds 41",
    "error_effect": "understates the rate",
    "error_kind": "wrong_conclusion",
}


class LeadTestCase(TestCase):
    @classmethod
    def setUpTestData(cls):
        cls.logged_run = load_generated_run(answers=80)
        cls.lead_user = make_user("lead")
        cls.a = make_user("reader_a", "reviewer")
        cls.b = make_user("reader_b", "reviewer")
        cls.sample = sample_draw(
            frame=Frame(run=cls.logged_run), size=10, seed=4, rubric_version=rubric_default()
        )
        sample_assign(sample=cls.sample, reviewers=[cls.a, cls.b], readers_per_item=2)

    def pair(self, position):
        item = self.sample.items.get(position=position)
        return (
            item,
            Assignment.objects.get(item=item, reviewer=self.a),
            Assignment.objects.get(item=item, reviewer=self.b),
        )

    def queue(self, **filters):
        self.client.login(username="lead", password=PASSWORD)
        response = self.client.get(reverse("lead-queue"), filters)
        return {e.item.position: e.reasons for e in response.context["entries"]}


class QueueTests(LeadTestCase):
    def test_it_lists_each_reason_an_item_needs_a_lead(self):
        _, a1, b1 = self.pair(1)
        judge(a1, grade="material_error", **MATERIAL)
        judge(b1, grade="material_error", **MATERIAL)
        _, a2, b2 = self.pair(2)
        judge(a2, grade="", pending=True)
        judge(b2, grade="", pending=True)
        _, a3, b3 = self.pair(3)
        judge(a3, grade="partially_resolved")
        judge(b3, grade="partially_resolved")
        _, a4, b4 = self.pair(4)
        judge(a4, borderline=True)
        judge(b4)
        _, a5, b5 = self.pair(5)
        judge(a5, grade="resolved")
        judge(b5, grade="unresolved")
        _, a6, b6 = self.pair(6)
        judge(a6, answers={**dict.fromkeys(KEYS, "yes"), "period": "no"})
        judge(b6)
        queue = self.queue()
        self.assertEqual(queue[1], ["material_error"])
        self.assertEqual(queue[2], ["pending"])
        self.assertEqual(queue[3], ["partial"])
        self.assertEqual(queue[4], ["borderline"])
        self.assertEqual(queue[5], ["grade_disagreement"])
        self.assertEqual(queue[6], ["rubric_disagreement"])
        self.assertEqual(set(self.queue(reason="pending")), {2})
        self.assertEqual(set(self.queue(reader=self.a.id)) >= {1, 2, 3, 4, 5, 6}, True)

    def test_it_sends_a_raised_or_pending_material_error_and_a_request_for_information_to_a_lead(self):
        _, a1, b1 = self.pair(1)
        judge(a1, **metrics("yes", "material_error", "full", **MATERIAL))
        judge(b1)
        _, a2, b2 = self.pair(2)
        judge(a2, **metrics("pending", "pending", "full"), note="the 2024 release is not out")
        judge(b2, **metrics("pending", "pending", "full"), note="cannot check the figure yet")
        item3, a3, b3 = self.pair(3)
        judge(a3, **metrics(needs_more_info=True))
        judge(b3)
        queue = self.queue()
        self.assertEqual(queue[1], ["material_error", "grade_disagreement"])
        # Issue 25, point 14: pending is not a material error until someone raises one.
        self.assertEqual(queue[2], ["pending"])
        self.assertEqual(queue[3], ["needs_info"])
        self.assertEqual(
            lead.reasons_for(item3, list(Judgement.objects.filter(assignment__item=item3))), ["needs_info"]
        )
        self.assertEqual(lead.REASONS["needs_info"], "asks the user for more information")
        # A judgement made before the question was asked: its old grade still counts.
        Judgement.objects.filter(assignment=a1).update(material_error="")
        self.assertEqual(self.queue()[1], ["material_error", "grade_disagreement"])

    def test_it_spot_checks_the_seeded_share_of_resolved_items(self):
        for item in self.sample.items.all():
            for assignment in item.assignments.all():
                judge(assignment)
        flagged = set(self.sample.items.filter(spot_check=True).values_list("position", flat=True))
        self.assertEqual(set(self.queue()), flagged)
        self.assertTrue(all(reasons == ["spot_check"] for reasons in self.queue().values()))
        # The same seed flags the same items; the share is recorded on the sample.
        again = sample_draw(
            frame=Frame(run=self.logged_run), size=10, seed=4, rubric_version=rubric_default()
        )
        self.assertEqual(set(again.items.filter(spot_check=True).values_list("position", flat=True)), flagged)
        self.assertEqual(again.spot_check_share, 0.10)

    def test_it_draws_about_the_share_asked_for(self):
        sample = sample_draw(
            frame=Frame(run=self.logged_run),
            size=60,
            seed=8,
            rubric_version=rubric_default(),
            spot_check_share=0.5,
        )
        share = sample.items.filter(spot_check=True).count() / sample.items.count()
        self.assertTrue(0.3 < share < 0.7, share)


class AdjudicationTests(LeadTestCase):
    def test_the_legend_names_each_checked_number_and_leaves_years_out(self):
        # An answer whose last number is a year: the legend once ended on a dangling "; ".
        for item in self.sample.items.filter(answer__isnull=False).select_related("answer"):
            check = AnswerCheck.objects.select_related("scoring").filter(answer=item.answer).first()
            numbers = check_numbers(check, item.answer.record) if check else []
            if len(numbers) > 1 and numbers[-1]["supported"] is None:
                break
        else:
            self.fail("no sampled answer ends on a year")
        self.client.login(username="lead", password=PASSWORD)
        page = self.client.get(reverse("adjudicate", args=[item.id]))
        legend = page.content.decode().split('<p class="legend">', 1)[1].split("</p>", 1)[0]
        checked = [n["text"] for n in numbers if n["supported"] is not None]
        self.assertTrue(checked)
        self.assertEqual([n["text"] for n in page.context["checks"][0]["checked_numbers"]], checked)
        self.assertNotIn(numbers[-1]["text"], legend.split(":", 1)[1])
        self.assertFalse(legend.rstrip().endswith(";"), legend)

    def test_it_keeps_every_decision_and_never_touches_the_readers_work(self):
        item, a1, b1 = self.pair(1)
        ja = judge(a1, grade="resolved")
        jb = judge(b1, grade="unresolved")
        self.client.login(username="lead", password=PASSWORD)
        url = reverse("adjudicate", args=[item.id])
        page = self.client.get(url)
        self.assertContains(page, "readers disagree on the grade")
        self.assertContains(page, str(self.logged_run.assistant_version))
        response = self.client.post(
            url,
            {
                "submission_key": str(uuid.uuid4()),
                "grade": "resolved",
                "reason": "the value is in the record",
            },
        )
        self.assertRedirects(response, reverse("lead-queue"))
        self.client.post(
            url,
            {
                "submission_key": str(uuid.uuid4()),
                "grade": "partially_resolved",
                "reason": "caveat missing after all",
            },
        )
        decisions = list(item.adjudications.values_list("revision", "grade", "lead__username"))
        self.assertEqual(decisions, [(1, "resolved", "lead"), (2, "partially_resolved", "lead")])
        self.assertEqual(
            [j.grade for j in Judgement.objects.filter(id__in=[ja.id, jb.id]).order_by("id")],
            ["resolved", "unresolved"],
        )
        self.assertNotIn(1, self.queue())

    def test_it_keeps_a_pending_item_open_until_the_evidence_settles_it(self):
        item, a1, b1 = self.pair(2)
        judge(a1, grade="", pending=True)
        judge(b1, grade="", pending=True)
        adjudication_submit(
            item=item,
            lead=self.lead_user,
            decision=Decision(reason="asked the office", pending=True),
            submission_key=uuid.uuid4(),
        )
        self.assertIn(2, self.queue())
        with self.assertRaisesMessage(ApplicationError, "Record the evidence that settles the pending item."):
            adjudication_submit(
                item=item,
                lead=self.lead_user,
                decision=Decision(reason="done", grade="resolved"),
                submission_key=uuid.uuid4(),
            )
        adjudication_submit(
            item=item,
            lead=self.lead_user,
            decision=Decision(
                reason="confirmed", grade="resolved", settling_evidence="office release of 3 May"
            ),
            submission_key=uuid.uuid4(),
        )
        self.assertNotIn(2, self.queue())

    def test_it_needs_a_raised_material_error_confirmed_in_full_or_dismissed(self):
        item, a1, b1 = self.pair(3)
        judge(a1, grade="material_error", **MATERIAL)
        judge(b1)
        with self.assertRaisesMessage(
            ApplicationError, "A reader raised a material error: confirm it or dismiss it"
        ):
            adjudication_submit(
                item=item,
                lead=self.lead_user,
                decision=Decision(reason="fine", grade="resolved"),
                submission_key=uuid.uuid4(),
            )
        with self.assertRaisesMessage(
            ApplicationError, "A confirmed material error records the evidence against it."
        ):
            adjudication_submit(
                item=item,
                lead=self.lead_user,
                decision=Decision(
                    reason="wrong",
                    grade="material_error",
                    error_claim="x",
                    error_effect="y",
                    error_kind="fabricated_evidence",
                ),
                submission_key=uuid.uuid4(),
            )
        dismissed = adjudication_submit(
            item=item,
            lead=self.lead_user,
            decision=Decision(
                reason="the record holds 35 too", grade="resolved", material_status="dismissed"
            ),
            submission_key=uuid.uuid4(),
        )
        self.assertEqual(dismissed.material_status, "dismissed")

    def test_it_makes_one_decision_of_a_double_submit(self):
        item, a1, _ = self.pair(4)
        judge(a1, grade="partially_resolved")
        key = uuid.uuid4()
        for _ in range(2):
            adjudication_submit(
                item=item,
                lead=self.lead_user,
                decision=Decision(reason="ok", grade="partially_resolved"),
                submission_key=key,
            )
        self.assertEqual(Adjudication.objects.filter(item=item).count(), 1)


class GradingOrderTests(LeadTestCase):
    def test_a_confirmed_material_error_in_an_answer_off_the_question_counts_as_a_material_error(self):
        item, a1, b1 = self.pair(5)
        raised = judge(
            a1,
            addresses=False,
            note="",
            **metrics("yes", "", "", **{**MATERIAL, "error_kind": "fabricated_evidence"}),
        )
        judge(b1, addresses=False, note="it answers another question", **metrics("no", "", ""))
        self.assertEqual((raised.grade, outcome_key(raised)), ("material_error", "material_error"))
        self.assertEqual(self.queue()[5], ["material_error", "grade_disagreement"])
        # A reader's claim alone settles nothing.
        self.assertEqual(review_states([item], readers_needed=lambda _: 2)[item.id].state, "awaiting_lead")
        self.client.login(username="lead", password=PASSWORD)
        response = self.client.post(
            reverse("adjudicate", args=[item.id]),
            {
                "submission_key": str(uuid.uuid4()),
                "seen_revision": "0",
                "addresses_question": "no",
                "material_error": "yes",
                **{**MATERIAL, "error_kind": "fabricated_evidence"},
                "reason": "record 41 exists; the answer invents 35 for another series",
            },
        )
        self.assertRedirects(response, reverse("lead-queue"))
        decision = Adjudication.objects.get(item=item)
        self.assertEqual(
            (decision.addresses_question, decision.grade, decision.material_status, decision.error_kind),
            (False, "material_error", "confirmed", "fabricated_evidence"),
        )
        self.assertEqual(outcome_key(decision), "material_error")
        self.assertEqual(decision.outcome, "material error (off the question)")
        self.assertEqual(settled_outcomes([item]), {item.id: Settled("material_error", {}, "lead")})
        self.assertEqual([a.item_id for a in lead.register()], [item.id])

    def test_it_refuses_a_decision_whose_grade_contradicts_its_answers_quoting_the_rule(self):
        item, a1, _ = self.pair(1)
        judge(a1, **metrics("yes", "material_error", "full", **MATERIAL))
        with self.assertRaisesMessage(
            ApplicationError,
            "“resolved” does not follow from the answers given, which make it material error. The rule: "
            "“A material error decides the grade by itself",
        ):
            adjudication_submit(
                item=item,
                lead=self.lead_user,
                decision=Decision(
                    reason="fine",
                    grade="resolved",
                    material_error="yes",
                    correctness="correct",
                    fulfilment="full",
                    **{k: v for k, v in MATERIAL.items()},
                ),
                submission_key=uuid.uuid4(),
            )
        with self.assertRaisesMessage(
            ApplicationError,
            "“resolved” does not follow from the answers given, which make it material error.",
        ):
            # The same rule for a decision given by its grade, as before the metrics.
            adjudication_submit(
                item=item,
                lead=self.lead_user,
                decision=Decision(reason="fine", grade="resolved", material_status="confirmed"),
                submission_key=uuid.uuid4(),
            )
        self.assertFalse(Adjudication.objects.exists())

    def test_it_dismisses_a_material_error_a_reader_left_pending(self):
        item, a1, _ = self.pair(2)
        judge(a1, **metrics("pending", "pending", "full"), note="cannot check 35 yet")
        with self.assertRaisesMessage(
            ApplicationError, "A reader raised a material error: confirm it or dismiss it"
        ):
            adjudication_submit(
                item=item,
                lead=self.lead_user,
                decision=Decision(reason="checked", correctness="correct", fulfilment="full"),
                submission_key=uuid.uuid4(),
            )
        decision = adjudication_submit(
            item=item,
            lead=self.lead_user,
            decision=Decision(reason="the release confirms 35", **metrics()),
            submission_key=uuid.uuid4(),
        )
        self.assertEqual(
            (decision.grade, decision.material_error, decision.material_status),
            ("resolved", "no", "dismissed"),
        )


class AdjudicateScreenTests(LeadTestCase):
    def page(self, item, **query):
        self.client.login(username="lead", password=PASSWORD)
        return self.client.get(reverse("adjudicate", args=[item.id]), query)

    def test_it_fills_in_what_the_readers_agree_on(self):
        item, a1, b1 = self.pair(1)
        judge(a1, answers={**dict.fromkeys(KEYS, "yes"), "period": "no"}, **metrics(fulfilment="partial"))
        judge(b1, **metrics())
        response = self.page(item)
        self.assertContains(response, '<input type="radio" name="q_series" value="yes" checked>', html=True)
        self.assertNotContains(response, 'name="q_period" value="yes" checked')
        self.assertNotContains(response, 'name="q_period" value="no" checked')
        self.assertContains(
            response, '<input type="radio" name="material_error" value="no" checked>', html=True
        )
        self.assertContains(
            response, '<input type="radio" name="correctness" value="correct" checked>', html=True
        )
        self.assertNotContains(response, 'name="fulfilment" value="full" checked')
        self.assertNotContains(response, 'name="fulfilment" value="partial" checked')
        self.assertEqual(response.context["agreed"], {k: "yes" for k in KEYS if k != "period"})

    def test_it_never_says_readers_agree_of_one_reader_and_fills_in_what_that_reader_said(self):
        # Issue 25, point 14.
        for addresses in (False, True):
            with self.subTest(addresses=addresses):
                item, a1, _ = self.pair(2 if addresses else 1)
                if addresses:
                    judge(a1, **metrics(fulfilment="partial"))
                else:
                    judge(a1, addresses=False, answers={}, **metrics("no", "", ""))
                response = self.page(item)
                self.assertNotContains(response, "readers agree")
                checked = "yes" if addresses else "no"
                self.assertContains(
                    response,
                    f'<input type="radio" name="addresses_question" value="{checked}" checked>',
                    html=True,
                )
                self.assertNotContains(
                    response, f'name="addresses_question" value="{"no" if addresses else "yes"}" checked'
                )
                form = response.content.decode().split('class="decision grading-form')[1]
                # Each answer filled in from the reader says so, the question 0 too.
                marks = form.count(
                    '<span class="agreed" title="as the one reader answered">the reader</span>'
                )
                self.assertEqual(marks, 1 + (len(KEYS) if addresses else 0))

    def test_it_says_readers_agree_only_of_two_readers_who_do(self):
        item, a1, b1 = self.pair(3)
        judge(a1, answers={**dict.fromkeys(KEYS, "yes"), "period": "no"})
        judge(b1)
        form = self.page(item).content.decode().split('class="decision grading-form')[1]
        self.assertEqual(form.count(">readers agree</span>"), 1 + len(KEYS) - 1)

    def test_it_words_the_material_error_choice_plainly_and_copies_the_readers_record(self):
        item, a1, b1 = self.pair(1)
        judge(a1, **metrics("yes", "material_error", "full", **MATERIAL))
        judge(b1)
        response = self.page(item)
        for wording in ("Material error raised:", "confirm it", "dismiss it", "keep pending"):
            self.assertContains(response, wording)
        self.assertNotContains(response, 'name="material_error" value="yes" checked')
        self.assertContains(response, ">the record holds 41</textarea>")

    def test_it_keeps_the_form_in_reach_of_the_keys(self):
        item, a1, _ = self.pair(1)
        judge(a1)
        response = self.page(item)
        self.assertContains(response, "data-grading-screen")
        self.assertContains(response, "data-grading-form")
        self.assertContains(response, "review.js")
        self.assertContains(response, 'id="grade-rules"')
        self.assertContains(response, "record the decision and open the next item in the queue")

    def test_it_opens_the_next_item_in_the_queue_after_a_decision(self):
        first, a1, b1 = self.pair(1)
        judge(a1, **metrics(fulfilment="partial"))
        judge(b1, **metrics(fulfilment="partial"))
        second, a2, _ = self.pair(2)
        judge(a2, **metrics(fulfilment="partial"))
        third, a3, _ = self.pair(3)
        judge(a3, borderline=True)
        self.client.login(username="lead", password=PASSWORD)
        url = reverse("adjudicate", args=[first.id])
        decision = {
            "submission_key": str(uuid.uuid4()),
            "seen_revision": "0",
            "addresses_question": "yes",
            **{f"q_{k}": "yes" for k in KEYS},
            **metrics(fulfilment="partial"),
            "reason": "the caveat is missing",
        }
        response = self.client.post(url, decision, follow=True)
        self.assertEqual(response.redirect_chain, [(reverse("adjudicate", args=[second.id]), 302)])
        self.assertContains(response, "Decision recorded on item 1 of")
        self.assertContains(response, ": partially resolved. Here is the next item in the queue.")
        # The queue's filter goes along: only the partial items, and then the queue.
        response = self.client.post(
            reverse("adjudicate", args=[second.id]) + "?reason=partial",
            {**decision, "submission_key": str(uuid.uuid4())},
        )
        self.assertRedirects(response, reverse("lead-queue") + "?reason=partial")
        self.assertEqual(self.page(third).context["skip_url"], "")

    def test_it_shows_errors_beside_their_fields(self):
        item, a1, _ = self.pair(1)
        judge(a1)
        self.client.login(username="lead", password=PASSWORD)
        response = self.client.post(
            reverse("adjudicate", args=[item.id]),
            {"submission_key": str(uuid.uuid4()), "seen_revision": "0", "material_error": "no", "reason": ""},
        )
        self.assertEqual(response.status_code, 400)
        self.assertContains(response, "The decision was not recorded: 3 things to fix", status_code=400)
        for field in ("reason", "correctness", "fulfilment"):
            self.assertContains(response, f'id="error-{field}"', status_code=400)
        self.assertFalse(Adjudication.objects.exists())

    def test_it_refuses_other_methods(self):
        item, a1, _ = self.pair(1)
        judge(a1)
        self.client.login(username="lead", password=PASSWORD)
        self.assertEqual(self.client.put(reverse("adjudicate", args=[item.id])).status_code, 405)


class RegisterTests(LeadTestCase):
    def test_it_lists_and_exports_confirmed_material_errors(self):
        item, a1, _ = self.pair(1)
        judge(a1, grade="material_error", **MATERIAL)
        adjudication_submit(
            item=item,
            lead=self.lead_user,
            decision=Decision(reason="checked", grade="material_error", **MATERIAL),
            submission_key=uuid.uuid4(),
        )
        other, a2, _ = self.pair(2)
        judge(a2, grade="material_error", **MATERIAL)
        adjudication_submit(
            item=other,
            lead=self.lead_user,
            decision=Decision(reason="not an error", grade="resolved", material_status="dismissed"),
            submission_key=uuid.uuid4(),
        )
        self.client.login(username="lead", password=PASSWORD)
        page = self.client.get(reverse("register"))
        self.assertContains(page, "the record holds 41")
        self.assertEqual(len(page.context["rows"]), 1)
        self.assertEqual(
            len(self.client.get(reverse("register"), {"status": "dismissed"}).context["rows"]), 1
        )
        exported = self.client.get(reverse("register"), {"format": "csv"})
        rows = list(csv.reader(io.StringIO(exported.content.decode())))
        self.assertEqual(
            rows[0][:7], ["status", "kind", "claim", "evidence", "effect", "assistant_version", "question_id"]
        )
        self.assertEqual(
            rows[1][:7],
            [
                "confirmed",
                "wrong_conclusion",
                "the rate was 35",
                "the record holds 41",
                "understates the rate",
                "bot-1.0",
                item.answer.question_id,
            ],
        )


# Six double-read items: reader a says yes,yes,no,no,yes,no on "series", reader b yes,no,no,no,yes,yes.
OURS = ["yes", "yes", "no", "no", "yes", "no"]
THEIRS = ["yes", "no", "no", "no", "yes", "yes"]


class AgreementPageTests(LeadTestCase):
    def judge_series(self, pairs):
        """Judge each (first, second) assignment pair on "series" as the hand-worked example does."""
        for (first, second), x, y in zip(pairs, OURS, THEIRS, strict=True):
            judge(first, answers={**dict.fromkeys(KEYS, "yes"), "series": x})
            judge(second, answers={**dict.fromkeys(KEYS, "yes"), "series": y})

    def agreement_page(self, sample, username="lead"):
        self.client.login(username=username, password=PASSWORD)
        return self.client.get(reverse("sample-agreement", args=[sample.id]))

    def test_it_matches_the_hand_worked_example(self):
        self.judge_series([self.pair(position)[1:] for position in range(1, 7)])
        page = self.agreement_page(self.sample)
        rows = {row["key"]: row["figures"] for row in page.context["table"]["rows"]}
        self.assertAlmostEqual(rows["series"].percent.value, 4 / 6)
        self.assertAlmostEqual(rows["series"].cohen.value, 1 / 3)
        self.assertAlmostEqual(rows["series"].fleiss.value, 1 / 3)
        self.assertAlmostEqual(rows["series"].alpha.value, 7 / 18)
        self.assertEqual([f.items for f in rows["series"].figures], [6, 6, 6, 6])
        self.assertTrue(rows["series"].below_floor)
        self.assertContains(page, "the readers do not measure the same thing yet")

    def test_it_flags_figures_on_few_items_and_links_to_the_items_where_readers_differ(self):
        self.judge_series([self.pair(position)[1:] for position in range(1, 7)])
        page = self.agreement_page(self.sample)
        rows = {row["key"]: row for row in page.context["table"]["rows"]}
        self.assertEqual(
            [f.note for f in rows["series"]["figures"].figures],
            ["too few items to read anything into"] * 4,
        )
        # The caution is said once for the page; each figure it concerns points to it.
        self.assertContains(
            page,
            '<li id="agreement-note-1"><sup>1</sup> Too few items to read anything into.</li>',
            count=1,
            html=True,
        )
        marker = '<sup><a href="#agreement-note-1" title="too few items to read anything into">1</a></sup>'
        items = {position: self.sample.items.get(position=position) for position in range(1, 7)}
        # One row per rating: its figures, n, and links to the items where readers differ.
        self.assertContains(
            page,
            '<tr id="agreement-series"><th scope="row"><a href="#matrix-series" title="its confusion matrix">'
            f'series</a></th><td class="num">67 %{marker}</td><td class="num">0.33{marker}</td>'
            f'<td class="num">0.33{marker}</td><td class="num bad">0.39{marker}</td><td class="num">6</td>'
            f'<td class="differing">2 of 6: <a href="/lead/items/{items[2].id}/">item 2</a> · '
            f'<a href="/lead/items/{items[6].id}/">item 6</a></td></tr>',
            count=1,
            html=True,
        )
        self.assertEqual(rows["series"]["differing"], [items[2], items[6]])
        self.assertEqual(rows["grade"]["differing"], [])
        for position in (1, 3, 4, 5):
            self.assertNotContains(page, f'href="/lead/items/{items[position].id}/"')
        # A manager may read the page but not adjudicate: the items lead to their sample's pages.
        make_user("manager")
        page = self.agreement_page(self.sample, username="manager")
        self.assertNotContains(page, 'href="/lead/items/')
        self.assertContains(
            page, f'<a href="/samples/{self.sample.id}/items/2/">item 2</a>', count=1, html=True
        )

    def test_it_gives_no_cohen_figure_when_three_readers_rotate(self):
        reader_c = make_user("reader_c", "reviewer")
        sample = sample_draw(
            frame=Frame(run=self.logged_run), size=6, seed=9, rubric_version=rubric_default(), name="rotating"
        )
        readers = [self.a, self.b, reader_c]
        sample_assign(sample=sample, reviewers=readers, readers_per_item=2)
        items = list(sample.items.order_by("position"))
        pairs = [tuple(Assignment.objects.filter(item=item).order_by("reviewer_id")) for item in items]
        # The pair changes from item to item: (a, b), (a, c), (b, c), ...
        self.assertEqual(
            [tuple(a.reviewer.username[-1] for a in pair) for pair in pairs],
            [("a", "b"), ("a", "c"), ("b", "c")] * 2,
        )
        self.judge_series(pairs)
        page = self.agreement_page(sample)
        rows = {row["key"]: row["figures"] for row in page.context["table"]["rows"]}
        note = (
            "3 readers rotate over the items: Cohen's kappa needs one fixed pair of readers; "
            "read Fleiss' kappa and Krippendorff's alpha"
        )
        self.assertIsNone(rows["series"].cohen.value)
        self.assertEqual(rows["series"].cohen.note, note)
        self.assertAlmostEqual(rows["series"].fleiss.value, 1 / 3)
        self.assertAlmostEqual(rows["series"].alpha.value, 7 / 18)
        # A note on one rating only stays in its cell.
        self.assertContains(
            page, f'<td class="num">–<span class="why">{note}</span></td>', count=1, html=True
        )
        # On the grade every reader said "resolved": no figure but percent agreement, and no pointer elsewhere.
        self.assertEqual(
            [f.note for f in rows["grade"].figures],
            [
                "too few items to read anything into",
                "3 readers rotate over the items: Cohen's kappa needs one fixed pair of readers",
                "not defined when every rating is the same",
                "every rating is the same category",
            ],
        )

    def test_it_measures_each_reader_against_the_final_decision(self):
        item, a, b = self.pair(1)
        judge(a, grade="resolved")
        judge(b, grade="unresolved")
        adjudication_submit(
            item=item,
            lead=self.lead_user,
            decision=Decision(reason="ok", grade="resolved"),
            submission_key=uuid.uuid4(),
        )
        self.client.login(username="lead", password=PASSWORD)
        table = self.client.get(reverse("agreement")).context["table"]
        self.assertEqual(table["readers"], [("reader_a", 1, 1), ("reader_b", 0, 1)])


class CalibrationTests(LeadTestCase):
    def add(self):
        return calibration_add(
            sample=self.sample,
            group="unemployment",
            question="What was the unemployment rate in 2024?",
            evidence=[
                {
                    "id": "LAB_UNEMP",
                    "values": [7.3],
                    "period": "2024",
                    "unit": "%",
                    "caveats": ["provisional"],
                }
            ],
            variants={
                "short": "7.3 % (provisional).",
                "table": "series | 2024\\nunemployment | 7.3 % (provisional)",
            },
        )

    def test_it_puts_calibration_items_to_every_reader_looking_like_any_item(self):
        items = self.add()
        self.assertEqual([i.stratum for i in items], ["calibration", "calibration"])
        for reader in (self.a, self.b):
            mine = Assignment.objects.filter(reviewer=reader, item__sample=self.sample)
            self.assertEqual(mine.count(), 12)
            self.assertEqual(sorted(mine.values_list("order", flat=True)), list(range(1, 13)))
        assignment = Assignment.objects.get(item=items[0], reviewer=self.a)
        self.client.login(username="reader_a", password=PASSWORD)
        page = self.client.get(reverse("review-item", args=[self.sample.id, assignment.alias]))
        self.assertContains(page, "What was the unemployment rate in 2024?")
        self.assertContains(page, "! provisional")
        self.assertNotContains(page, "calibration")

    def test_it_shows_a_reader_whose_grade_changes_with_form_and_never_counts_in_rates(self):
        scores_before = list(Score.objects.values_list("slice", "measure", "k", "n"))
        short, table = self.add()
        judge(Assignment.objects.get(item=short, reviewer=self.a), grade="resolved")
        judge(Assignment.objects.get(item=table, reviewer=self.a), grade="partially_resolved")
        judge(Assignment.objects.get(item=short, reviewer=self.b), grade="resolved")
        judge(Assignment.objects.get(item=table, reviewer=self.b), grade="resolved")
        self.client.login(username="lead", password=PASSWORD)
        results = self.client.get(reverse("sample-agreement", args=[self.sample.id])).context["calibration"]
        self.assertEqual(
            [(r["reader"], r["changes"]) for r in results], [("reader_a", True), ("reader_b", False)]
        )
        self.assertEqual(list(Score.objects.values_list("slice", "measure", "k", "n")), scores_before)
        self.assertEqual(SampleItem.objects.filter(sample=self.sample, answer__isnull=True).count(), 2)

    def test_it_needs_two_forms(self):
        with self.assertRaisesMessage(ApplicationError, "write the same facts in at least two forms"):
            calibration_add(sample=self.sample, group="g", question="q", evidence=[], variants={"short": "x"})
