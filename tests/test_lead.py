import csv
import io
import uuid

from django.test import TestCase
from django.urls import reverse

from reviewapp.models import Adjudication, Assignment, Judgement, SampleItem, Score
from reviewapp.services.adjudication import Decision, adjudication_submit, calibration_add
from reviewapp.services.review import JudgementInput, judgement_submit, rubric_default
from reviewapp.services.samples import Frame, sample_assign, sample_draw
from reviewapp.services.uploads import UploadRejected
from tests.fixtures import load_generated_run
from tests.helpers import PASSWORD, make_user

KEYS = ("series", "period", "unit", "caveat", "unsupported_claim")


def judge(
    assignment, *, grade="resolved", pending=False, borderline=False, answers=None, addresses=True, **extra
):
    return judgement_submit(
        assignment=assignment,
        author=assignment.reviewer,
        data=JudgementInput(
            addresses_question=addresses,
            rubric_answers=answers or dict.fromkeys(KEYS, "yes"),
            grade=grade,
            pending=pending,
            borderline=borderline,
            **extra,
        ),
        submission_key=uuid.uuid4(),
    )


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
        with self.assertRaisesMessage(UploadRejected, "Record the evidence that settles the pending item."):
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
            UploadRejected, "A reader raised a material error: confirm it or dismiss it"
        ):
            adjudication_submit(
                item=item,
                lead=self.lead_user,
                decision=Decision(reason="fine", grade="resolved"),
                submission_key=uuid.uuid4(),
            )
        with self.assertRaisesMessage(
            UploadRejected, "A confirmed material error records the evidence against it."
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
        # A row per figure: its name, value, n and note (html=True compares parsed text, so
        # the apostrophes need no escaping here).
        for name, value in [
            ("agreement", "67 %"),
            ("Cohen's κ", "0.33"),
            ("Fleiss' κ", "0.33"),
            ("Krippendorff's α", "0.39"),
        ]:
            self.assertContains(
                page,
                f'<tr><td>{name}</td><td class="num">{value}</td><td class="num">6</td>'
                '<td><span class="bad">too few items to read anything into</span></td></tr>',
                count=1,
                html=True,
            )
        items = {position: self.sample.items.get(position=position) for position in range(1, 7)}
        self.assertEqual(rows["series"]["differing"], [items[2], items[6]])
        self.assertEqual(rows["grade"]["differing"], [])
        self.assertContains(page, "Readers differ on 2 of 6 items:")
        for position in (2, 6):
            self.assertContains(
                page, f'<a href="/lead/items/{items[position].id}/">item {position}</a>', count=1, html=True
            )
        for position in (1, 3, 4, 5):
            self.assertNotContains(page, f'href="/lead/items/{items[position].id}/"')
        # A manager may read the page but not adjudicate: the items are named, not linked.
        make_user("manager")
        page = self.agreement_page(self.sample, username="manager")
        self.assertContains(page, "Readers differ on 2 of 6 items:")
        self.assertNotContains(page, 'href="/lead/items/')

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
        self.assertContains(
            page,
            f'<tr><td>Cohen\'s κ</td><td class="num">–</td><td class="num">6</td><td><span class="muted">{note}</span></td></tr>',
            count=1,
            html=True,
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
        with self.assertRaisesMessage(UploadRejected, "write the same facts in at least two forms"):
            calibration_add(sample=self.sample, group="g", question="q", evidence=[], variants={"short": "x"})
