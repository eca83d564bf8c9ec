"""Review figures count a grade only when it is settled (issue 14): a lead's
decision, or every reader the sample asks for agreeing on an item that needs
no lead; the rest is awaiting a lead, pending or not yet read, against N."""

import uuid

from django.test import TestCase
from django.urls import reverse

from reviewapp.models import Adjudication, Assignment, Judgement, Sample, SampleItem
from reviewapp.review.services.review import rubric_default
from reviewapp.versions.selectors import review_figures
from scoring.stats.rates import rate
from tests.fixtures import load_generated_run
from tests.helpers import make_user

PASSING = {"series": "yes", "period": "yes", "unit": "yes", "caveat": "na", "unsupported_claim": "no"}
UNSUPPORTED = {**PASSING, "unsupported_claim": "yes"}


class ReviewedSampleTestCase(TestCase):
    """Seven double-read items, one in each state a review item can be in."""

    @classmethod
    def setUpTestData(cls):
        run = load_generated_run(answers=20, assistant="bot-1.0")
        cls.manager = make_user("manager", "manager")
        cls.lead = make_user("lead", "lead")
        cls.readers = [make_user("reader-a", "reviewer"), make_user("reader-b", "reviewer")]
        rubric = rubric_default()
        cls.sample = Sample.objects.create(
            name="double read",
            run=run,
            assistant_version=run.assistant_version,
            frame_size=20,
            size=7,
            strata_fields=["language"],
            allocation="proportional",
            seed=1,
            rubric_version=rubric,
            readers_per_item=2,
        )
        answers = list(run.answers.order_by("id")[:7])
        cls.items = [
            SampleItem.objects.create(sample=cls.sample, answer=answer, stratum="all", position=position)
            for position, answer in enumerate(answers, start=1)
        ]
        # What each reader said of each item: None where that reader has not read it yet.
        plan = [
            ("resolved", "resolved"),  # 1: settled resolved
            ("resolved", "unresolved"),  # 2: readers disagree: awaiting lead
            ("resolved", None),  # 3: one of the two readers so far: not yet read
            ("material_error", "material_error"),  # 4: awaiting the lead's confirmation
            ("material_error", "material_error"),  # 5: a lead confirmed it
            ("pending", "resolved"),  # 6: pending verification
            (None, None),  # 7: nobody has read it
        ]
        for item, grades in zip(cls.items, plan, strict=True):
            for order, (reader, grade) in enumerate(zip(cls.readers, grades, strict=True), start=1):
                assignment = Assignment.objects.create(
                    item=item, reviewer=reader, alias=f"A{item.position}{order}", order=item.position
                )
                if grade is None:
                    continue
                Judgement.objects.create(
                    assignment=assignment,
                    revision=1,
                    author=reader,
                    rubric_version=rubric,
                    rubric_answers=UNSUPPORTED if grade == "material_error" else PASSING,
                    grade="" if grade == "pending" else grade,
                    pending=grade == "pending",
                    note="" if grade == "resolved" else "checked against the records",
                    submission_key=uuid.uuid4(),
                )
        Adjudication.objects.create(
            item=cls.items[4],
            revision=1,
            lead=cls.lead,
            reason="the record holds 41, the answer says 35",
            grade="material_error",
            rubric_answers=UNSUPPORTED,
            material_status="confirmed",
            error_claim="35 per 1,000",
            error_evidence="the record holds 41",
            error_effect="a wrong rate is quoted",
            error_kind="wrong_conclusion",
            submission_key=uuid.uuid4(),
        )


class SettledCountingTests(ReviewedSampleTestCase):
    def test_only_settled_grades_count_and_the_rest_is_named_against_n(self):
        review = review_figures([self.sample])
        counts = {figure["grade"]: (figure["k"], figure["n"]) for figure in review["grades"]}
        self.assertEqual(
            counts,
            {
                "resolved": (1, 7),
                "partially_resolved": (0, 7),
                "material_error": (1, 7),
                "unresolved": (0, 7),
                "awaiting_lead": (2, 7),
                "pending": (1, 7),
                "not_read": (2, 7),
            },
        )
        # Graded coverage: settled grades over N.
        self.assertEqual((review["graded"], review["planned"]), (2, 7))
        self.assertAlmostEqual(review["coverage"].value, 2 / 7)
        # Every rubric question passes on the resolved item; the confirmed error claims what the records lack.
        passing = review["passes_rubric"]
        self.assertEqual((passing["k"], passing["n"], passing["rate"]), (1, 2, rate(1, 2)))
        # One stratum: nothing to weight, so no weighted figure beside it.
        self.assertFalse(review["stratified"])
        self.assertIsNone(passing["weighted"])
        unsupported = next(r for r in review["rubric"] if r["key"] == "unsupported_claim")
        self.assertEqual((unsupported["kind"], unsupported["k"], unsupported["n"]), ("failure rate", 1, 2))

    def test_the_dashboard_says_what_each_count_means(self):
        self.client.force_login(self.manager)
        page = self.client.get(reverse("version-dashboard", args=["bot-1.0"]))
        self.assertContains(page, "graded coverage <strong>2 of 7</strong> (28.6 %)", html=False)
        self.assertContains(page, "awaiting lead")
        self.assertContains(
            page, "read, but readers disagree or it needs a lead (material error, partial, borderline)"
        )
        self.assertContains(page, "not yet read by every reader the sample asks for")
        self.assertContains(page, "<strong>failure rate</strong> (yes is a failure)", html=False)
        self.assertContains(page, "passes every rubric question <strong>1 of 2</strong>", html=False)

    def test_a_lone_reader_settles_an_item_in_a_sample_read_once(self):
        Sample.objects.filter(id=self.sample.id).update(readers_per_item=1)
        self.sample.refresh_from_db()
        counts = {figure["grade"]: figure["k"] for figure in review_figures([self.sample])["grades"]}
        # Item 3's single resolved reading now settles it; item 7 is still unread.
        self.assertEqual((counts["resolved"], counts["not_read"]), (2, 1))


class SeverityWeightsTests(ReviewedSampleTestCase):
    def test_the_dashboard_weighs_material_errors_by_where_the_answer_goes(self):
        from reviewapp.review.services.severity import severity_weights_save
        from scoring.stats.rates import rate, severity_weighted_rate

        # Settled: item 1 resolved, item 5 a confirmed material error.
        languages = {item.position: item.answer.language for item in self.items}
        severity_weights_save(
            field="language", weights_text=f"{languages[5]} = 4", default_weight=1, created_by=self.lead
        )
        severity = review_figures([self.sample])["severity"]
        expected_weights = [4.0 if languages[p] == languages[5] else 1.0 for p in (1, 5)]
        self.assertEqual(expected_weights, [1.0, 4.0])  # the fixture's two settled items differ in language
        self.assertEqual(severity["unweighted"], rate(1, 2))
        self.assertEqual(severity["weighted"], severity_weighted_rate([False, True], expected_weights))
        self.assertEqual(severity["weight_total"], sum(expected_weights))
        self.client.force_login(self.manager)
        page = self.client.get(reverse("version-dashboard", args=["bot-1.0"]))
        self.assertContains(page, "Material errors by severity")
        self.assertContains(page, f"total weight {sum(expected_weights):g}")

    def test_a_lead_sets_weights_and_bad_lines_are_named(self):
        self.client.force_login(self.lead)
        bad = self.client.post(
            reverse("severity"),
            {"field": "stratum", "weights": "finance = 3\npublic = -1", "default_weight": "1"},
        )
        self.assertContains(
            bad,
            "weights, line 2: the weight of &#x27;public&#x27; is a number above 0 and at most 1000, not &#x27;-1&#x27;",
            status_code=400,
        )
        good = self.client.post(
            reverse("severity"),
            {"field": "stratum", "weights": "finance = 3\npublic = 1", "default_weight": "2"},
        )
        self.assertRedirects(good, reverse("severity"))
        from reviewapp.models import SeverityWeights

        scheme = SeverityWeights.objects.get()
        self.assertEqual(
            (scheme.field, scheme.weights, scheme.default_weight),
            ("stratum", {"finance": 3.0, "public": 1.0}, 2.0),
        )
        self.client.force_login(self.manager)
        self.assertEqual(self.client.post(reverse("severity"), {"field": "stratum"}).status_code, 403)


class StratumWeightedTests(TestCase):
    """The one way a stratified sample's figures are weighted (issue 24, point 3)."""

    @staticmethod
    def outcomes(rows):
        from types import SimpleNamespace

        from reviewapp.versions.selectors import ItemOutcome

        sample = SimpleNamespace(
            run_id=1, strata_fields=["language"], strata={"en": {"population": 90}, "fr": {"population": 10}}
        )
        return [
            ItemOutcome(SimpleNamespace(id=i, sample=sample, sample_id=1, stratum=stratum), grade, {}, 1.0)
            for i, (stratum, grade) in enumerate(rows)
        ]

    def test_it_weights_a_domain_by_its_estimated_size_in_each_stratum(self):
        from reviewapp.versions.selectors import outcome_strata, stratum_weighted
        from scoring.stats.rates import stratified_rate

        # English: 4 items, 3 settled, 1 of them a material error; French: 2 items, both settled errors.
        outcomes = self.outcomes(
            [
                *(("en", "material_error"), ("en", "resolved"), ("en", "resolved"), ("en", "pending")),
                *(("fr", "material_error"), ("fr", "material_error")),
            ]
        )
        strata = outcome_strata(outcomes)
        settled = stratum_weighted(
            strata,
            counted=lambda o: o.outcome != "pending",
            succeeded=lambda o: o.outcome == "material_error",
        )
        # The settled domain's sizes: 90·3/4 = 67.5 and 10·2/2 = 10, so the
        # rate is (67.5·1/3 + 10·1)/77.5 = 32.5/77.5, where the sample has 3 of 5.
        self.assertEqual(settled, stratified_rate([(1, 3, 67.5), (2, 2, 10.0)]))
        self.assertAlmostEqual(settled.value, 32.5 / 77.5)
        # Severity 4 on the first English item only: that stratum splits into
        # a part of 1 item (size 22.5, weight 4·22.5 = 90) and one of 2 (size 45).
        severity = {0: 4.0}
        weighted = stratum_weighted(
            strata,
            counted=lambda o: o.outcome != "pending",
            succeeded=lambda o: o.outcome == "material_error",
            weight_of=lambda o: severity.get(o.item.id, 1.0),
        )
        expected = stratified_rate([(1, 1, 22.5), (0, 2, 45.0), (2, 2, 10.0)], weights=[90.0, 45.0, 10.0])
        self.assertEqual(weighted, expected)
        self.assertAlmostEqual(weighted.value, (90 + 10) / 145)
        self.assertIsNone(stratum_weighted(strata, counted=lambda o: False, succeeded=bool))

    def test_a_stratum_without_a_counted_item_widens_the_interval_to_what_it_could_hold(self):
        from reviewapp.versions.selectors import outcome_strata, stratum_weighted
        from scoring.stats.rates import stratified_domain_rate

        # The French stratum's two items are still pending: none is settled.
        outcomes = self.outcomes(
            [("en", "material_error"), ("en", "resolved"), ("fr", "pending"), ("fr", "pending")]
        )
        settled = stratum_weighted(
            outcome_strata(outcomes),
            counted=lambda o: o.outcome != "pending",
            succeeded=lambda o: o.outcome == "material_error",
        )
        self.assertEqual(settled, stratified_domain_rate([(1, 2, 2, 90), (0, 0, 2, 10)]))
        # Its 8 unread items of 10 may all be settled errors, or none: 8 of 98's weight.
        self.assertAlmostEqual(settled.unrepresented, 8 / 98)


class NotApplicableTests(ReviewedSampleTestCase):
    def test_a_not_applicable_answer_is_left_out_of_its_question_and_counted_apart(self):
        # Issue 25, point 12: a correct decline answers the figure questions
        # "not applicable". The settled resolved item (item 1) does so here.
        declined = {**PASSING, "series": "na", "period": "na", "unit": "na"}
        Judgement.objects.filter(assignment__item=self.items[0]).update(rubric_answers=declined)
        review = review_figures([self.sample])
        series = next(r for r in review["rubric"] if r["key"] == "series")
        # Only the confirmed error's "yes" is counted; the n/a stands beside it.
        self.assertEqual((series["k"], series["n"], series["not_applicable"]), (1, 1, 1))
        passing = review["passes_rubric"]
        self.assertEqual((passing["k"], passing["n"]), (1, 2))
        self.client.force_login(self.manager)
        page = self.client.get(reverse("version-dashboard", args=["bot-1.0"]))
        self.assertContains(
            page, '<td class="num">1/1 <span class="denominator">· 1 n/a</span></td>', html=True
        )
