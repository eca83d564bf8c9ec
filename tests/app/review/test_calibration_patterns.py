from django.urls import reverse
from django.utils.html import escape

from reviewapp.core.errors import ApplicationError
from reviewapp.models import Assignment, SampleItem
from reviewapp.review import selectors as lead
from reviewapp.review.calibration_patterns import PATTERNS
from reviewapp.review.services.adjudication import calibration_add, calibration_patterns_issue
from tests.app.review.test_lead import LeadTestCase, judge
from tests.helpers import PASSWORD


class PatternIssueTests(LeadTestCase):
    def test_it_issues_each_variant_with_its_expected_grade_to_every_reader(self):
        items = calibration_patterns_issue(
            sample=self.sample,
            keys=["definition-not-call", "role-state-permission"],
            created_by=self.lead_user,
        )
        self.assertEqual(
            [
                (i.position, i.stratum, i.calibration.group, i.calibration.form, i.calibration.expected_grade)
                for i in items
            ],
            [
                (11, "calibration", "definition-not-call", "ordered", "resolved"),
                (12, "calibration", "definition-not-call", "swapped", "resolved"),
                (13, "calibration", "definition-not-call", "variant", "partially_resolved"),
                (14, "calibration", "definition-not-call", "variant", "material_error"),
                (15, "calibration", "definition-not-call", "variant", "unresolved"),
                (16, "calibration", "role-state-permission", "ordered", "resolved"),
                (17, "calibration", "role-state-permission", "swapped", "resolved"),
                (18, "calibration", "role-state-permission", "variant", "material_error"),
            ],
        )
        ordered, swapped = items[0].calibration.answer, items[1].calibration.answer
        first, second = PATTERNS[0].resolved_parts
        self.assertEqual((ordered, swapped), (f"{first}\n\n{second}", f"{second}\n\n{first}"))
        for reader in (self.a, self.b):
            mine = Assignment.objects.filter(reviewer=reader, item__sample=self.sample)
            self.assertEqual(sorted(mine.values_list("order", flat=True)), list(range(1, 19)))
        self.assertEqual(SampleItem.objects.filter(sample=self.sample, answer__isnull=False).count(), 10)

    def test_it_refuses_a_pattern_already_in_the_sample_and_stores_nothing(self):
        calibration_patterns_issue(sample=self.sample, keys=["outer-choice-inner-data"])
        with self.assertRaisesMessage(
            ApplicationError, "group: outer-choice-inner-data is already in this sample: give it another name"
        ):
            calibration_patterns_issue(
                sample=self.sample, keys=["definition-not-call", "outer-choice-inner-data"]
            )
        self.assertEqual(self.sample.items.count(), 13)
        with self.assertRaisesMessage(ApplicationError, "patterns: unknown pattern no-such"):
            calibration_patterns_issue(sample=self.sample, keys=["no-such"])
        with self.assertRaisesMessage(ApplicationError, "patterns: choose at least one pattern"):
            calibration_patterns_issue(sample=self.sample, keys=[])

    def test_it_issues_the_patterns_ticked_on_the_calibration_page(self):
        self.client.login(username="lead", password=PASSWORD)
        url = reverse("calibration-patterns-new", args=[self.sample.id])
        page = self.client.get(reverse("calibration-new", args=[self.sample.id]))
        for pattern in PATTERNS:
            self.assertContains(
                page, f'<input type="checkbox" name="pattern" value="{pattern.key}">', html=True
            )
        self.assertEqual(self.client.get(url).status_code, 405)
        refused = self.client.post(url, {})
        self.assertContains(refused, "patterns: choose at least one pattern", status_code=400)
        response = self.client.post(url, {"pattern": [p.key for p in PATTERNS]})
        self.assertRedirects(response, reverse("sample-detail", args=[self.sample.id]))
        self.assertEqual(
            list(
                self.sample.items.filter(calibration__isnull=False).values_list(
                    "calibration__expected_grade", flat=True
                )
            ),
            ["resolved", "resolved", "partially_resolved", "material_error", "unresolved"]
            + ["resolved", "resolved", "material_error"] * 2,
        )

    def test_its_items_show_nothing_that_marks_them_out_on_the_review_screen(self):
        items = calibration_patterns_issue(sample=self.sample, keys=[p.key for p in PATTERNS])
        self.client.login(username="reader_a", password=PASSWORD)

        def screen(item):
            alias = Assignment.objects.get(item=item, reviewer=self.a).alias
            return self.client.get(reverse("review-item", args=[self.sample.id, alias]))

        # The guide on every screen names the patterns: a word counts only if
        # it shows more on a calibration item than on a logged answer.
        logged = screen(self.sample.items.get(position=1)).content.decode().lower()
        words = ("calibration", "pattern", "variant", "expected", "swapped", "ordered", "partially_resolved")
        for item in items:
            page = screen(item)
            self.assertContains(page, escape(item.calibration.question))
            text = page.content.decode().lower()
            self.assertNotIn(item.calibration.group, text)
            for word in words:
                self.assertEqual(text.count(word), logged.count(word), word)

    def test_it_shows_both_orders_of_two_parts_written_by_a_lead(self):
        items = calibration_add(
            sample=self.sample, group="two-parts", question="q", evidence=[], variants={}, parts=("A.", "B.")
        )
        self.assertEqual(
            [(i.calibration.form, i.calibration.answer, i.calibration.expected_grade) for i in items],
            [("ordered", "A.\n\nB.", None), ("swapped", "B.\n\nA.", None)],
        )
        with self.assertRaisesMessage(
            ApplicationError, "two parts in both orders: write both parts, or neither"
        ):
            calibration_add(
                sample=self.sample, group="g", question="q", evidence=[], variants={}, parts=("A.", "")
            )
        with self.assertRaisesMessage(ApplicationError, "unknown forms: variant"):
            calibration_add(
                sample=self.sample,
                group="g",
                question="q",
                evidence=[],
                variants={"short": "x", "variant": "y"},
            )

    def test_it_takes_two_parts_from_the_calibration_page(self):
        self.client.login(username="lead", password=PASSWORD)
        url = reverse("calibration-new", args=[self.sample.id])
        form = {"group": "two-parts", "question": "q", "answer_first_part": "A.", "answer_second_part": "B."}
        self.assertContains(
            self.client.post(url, {**form, "answer_second_part": ""}),
            "two parts in both orders: write both parts, or neither",
            status_code=400,
        )
        self.assertRedirects(self.client.post(url, form), reverse("sample-detail", args=[self.sample.id]))
        self.assertEqual(
            list(
                self.sample.items.filter(calibration__isnull=False).values_list(
                    "calibration__form", "calibration__answer"
                )
            ),
            [("ordered", "A.\n\nB."), ("swapped", "B.\n\nA.")],
        )
        # A record left without an id must not be named after what the item is.
        item = self.sample.items.get(calibration__form="ordered")
        self.client.login(username="reader_a", password=PASSWORD)
        alias = Assignment.objects.get(item=item, reviewer=self.a).alias
        page = self.client.get(reverse("review-item", args=[self.sample.id, alias]))
        self.assertContains(page, "<h3><code>R1</code></h3>", html=True)
        self.assertNotIn("calibration", page.content.decode().lower())


class ReaderConsistencyTests(LeadTestCase):
    def setUp(self):
        forms = calibration_add(
            sample=self.sample,
            group="rate",
            question="What was the rate in 2024?",
            evidence=[],
            variants={
                "short": "7.3 %.",
                "long": "It was 7.3 %.",
                "paragraph": "7.3 % in 2024.",
                "table": "2024 | 7.3 %",
            },
        )
        self.forms = {item.calibration.form: item for item in forms}
        self.pattern = {
            (item.calibration.form, item.calibration.expected_grade): item
            for item in calibration_patterns_issue(sample=self.sample, keys=["definition-not-call"])
        }

    def grade(self, item, **judgement):
        judge(Assignment.objects.get(item=item, reviewer=self.a), **judgement)

    def test_it_counts_pairs_graded_the_same_and_variants_matching_their_grade(self):
        self.grade(self.forms["short"], grade="resolved")
        self.grade(self.forms["long"], grade="resolved")
        self.grade(self.forms["paragraph"], grade="resolved")
        self.grade(self.forms["table"], grade="partially_resolved")
        self.grade(self.pattern[("ordered", "resolved")], grade="resolved")
        self.grade(self.pattern[("swapped", "resolved")], grade="resolved")
        self.grade(self.pattern[("variant", "partially_resolved")], grade="partially_resolved")
        self.grade(self.pattern[("variant", "material_error")], grade="resolved")
        # Judged off the question: it resolves nothing, as expected.
        self.grade(self.pattern[("variant", "unresolved")], grade="unresolved", addresses=False)
        a, b = lead.reader_consistency([self.sample])
        self.assertEqual(a["reader"], "reader_a")
        self.assertEqual(
            [(p["kind"], p["graded"], p["same"]) for p in a["pairs"]],
            [("short_long", 1, 1), ("paragraph_table", 1, 0), ("swapped_order", 1, 1)],
        )
        self.assertEqual(a["pairs_graded"], 3)
        title = "A definition existing is not a call happening"
        self.assertEqual(
            [(v["pattern"], v["expected"], v["graded"], v["matched"]) for v in a["variants"]],
            [
                (title, "resolved", 2, 2),
                (title, "partially resolved", 1, 1),
                (title, "material error", 1, 0),
                (title, "unresolved", 1, 1),
            ],
        )
        material = self.pattern[("variant", "material_error")]
        self.assertEqual(
            [(d["item"].id, d["grade"], d["against"], d["twin"]) for d in a["differing"]],
            [
                (
                    self.forms["paragraph"].id,
                    "resolved",
                    "partially resolved on its twin",
                    self.forms["table"],
                ),
                (material.id, "resolved", "material error expected", None),
            ],
        )
        self.assertEqual(
            (b["reader"], [(p["graded"], p["same"]) for p in b["pairs"]], b["pairs_graded"], b["differing"]),
            ("reader_b", [(0, 0)] * 3, 0, []),
        )
        self.assertEqual([v["graded"] for v in b["variants"]], [0, 0, 0, 0])
        # The agreement page's form check leaves out variants meant to differ.
        by_form = {r["group"]: r["grades"] for r in lead.calibration_results([self.sample])}
        self.assertEqual(by_form["definition-not-call"], {"ordered": "resolved", "swapped": "resolved"})

    def test_its_page_answers_a_sample_that_does_not_exist_with_not_found(self):
        self.client.login(username="lead", password=PASSWORD)
        for wrong in ("999999", "x"):
            with self.subTest(sample=wrong):
                response = self.client.get(reverse("reader-consistency"), {"sample": wrong})
                self.assertContains(response, "<h1>Not found</h1>", status_code=404)

    def test_its_page_shows_each_reader_and_no_rate_for_a_reader_who_graded_nothing(self):
        self.grade(self.forms["paragraph"], grade="resolved")
        self.grade(self.forms["table"], grade="partially_resolved")
        self.client.login(username="lead", password=PASSWORD)
        agreement = self.client.get(reverse("sample-agreement", args=[self.sample.id]))
        url = reverse("reader-consistency")
        self.assertContains(agreement, f'href="{url}?sample={self.sample.id}"')
        page = self.client.get(url, {"sample": self.sample.id})
        self.assertContains(
            page, '<tr><td>paragraph and table</td><td class="num">0 of 1</td></tr>', count=1, html=True
        )
        self.assertContains(
            page, '<tr><td>short and long</td><td class="num">no pairs graded</td></tr>', count=2, html=True
        )
        self.assertContains(page, "No pairs graded.", count=1)
        self.assertNotContains(page, "%")
        self.assertContains(page, "internal consistency review, not human calibration")
        table = self.forms["table"]
        self.assertContains(
            page,
            f'<a href="/lead/items/{self.forms["paragraph"].id}/">{self.sample.name} item 12</a> (rate, Paragraph): '
            f'resolved against partially resolved on its twin (<a href="/lead/items/{table.id}/">item 14</a>)',
            html=True,
        )
