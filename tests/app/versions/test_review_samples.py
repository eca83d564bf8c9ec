"""Which samples a version's review figures count, and the effective n a
weighted figure shows (issue 25, point 3): a judge's regrade sample nobody
was assigned and the items a lead decided to validate a judge are not the
samples drawn for review, and pooling samples of one run must not count
that run's answers once per sample."""

import re
import uuid

from django.urls import reverse

from reviewapp.judges.services import judging
from reviewapp.models import Adjudication, Sample
from reviewapp.review.services.review import rubric_default
from reviewapp.review.services.samples import Frame, sample_draw
from scoring.stats.rates import stratified_domain_rate
from tests.fixtures import load_generated_run, stand_in_version
from tests.helpers import BaseTestCase

PASSING = {"series": "yes", "period": "yes", "unit": "yes", "caveat": "na", "unsupported_claim": "no"}


def decide(sample: Sample, *, lead, count: int) -> None:
    """A lead decides the first ``count`` items: every third unresolved, the rest resolved."""
    for item in sample.items.order_by("position")[:count]:
        grade = "unresolved" if item.position % 3 == 0 else "resolved"
        Adjudication.objects.create(
            item=item,
            revision=1,
            lead=lead,
            reason="checked against the records",
            grade=grade,
            rubric_answers=PASSING,
            submission_key=uuid.uuid4(),
        )


def merged_strata(samples: list[Sample], grade: str) -> list[tuple[int, int, int, int]]:
    """(k, d, n, N) per stratum of one run's samples taken together: each
    answer once, however many samples drew it, and the stratum's population
    counted once, as it is one population."""
    outcomes: dict[str, dict[int, str]] = {}
    populations: dict[str, int] = {}
    for sample in samples:
        for item in sample.items.order_by("position"):
            decided = item.adjudications.order_by("-revision").first()
            outcome = decided.grade if decided else "not_read"
            held = outcomes.setdefault(item.stratum, {})
            if item.answer_id not in held or held[item.answer_id] == "not_read":
                held[item.answer_id] = outcome
            populations[item.stratum] = sample.strata[item.stratum]["population"]
    cells = []
    for stratum, held in sorted(outcomes.items()):
        k = sum(outcome == grade for outcome in held.values())
        cells.append((k, len(held), len(held), populations[stratum]))
    return cells


class PooledSamplesTests(BaseTestCase):
    """Two samples drawn for review from one run: one stratified estimate of
    that run, not two populations side by side."""

    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        cls.logged_run = load_generated_run(answers=300, assistant="bot-1.0")
        frame = Frame(run=cls.logged_run)
        rubric = rubric_default()
        cls.first = sample_draw(frame=frame, size=30, seed=11, rubric_version=rubric, name="first read")
        cls.second = sample_draw(frame=frame, size=80, seed=12, rubric_version=rubric, name="second read")
        decide(cls.first, lead=cls.lead, count=20)
        decide(cls.second, lead=cls.lead, count=80)

    def test_it_weights_one_runs_samples_as_one_stratified_sample(self):
        self.client.force_login(self.manager)
        page = self.client.get(reverse("version-dashboard", args=["bot-1.0"]))
        review = page.context["review"]
        cells = merged_strata([self.first, self.second], "resolved")
        self.assertGreater(len(cells), 1)  # the run's languages are strata
        expected = stratified_domain_rate(cells)
        answers = sum(n for _, _, n, _ in cells)
        self.assertEqual(review["planned"], answers)
        resolved = next(g for g in review["grades"] if g["grade"] == "resolved")
        self.assertEqual((resolved["k"], resolved["n"]), (sum(k for k, *_ in cells), answers))
        self.assertEqual(resolved["weighted"], expected)
        # The effective n shown is the one the interval was made on, as a count of draws.
        shown = f"effective n {expected.effective_n:.0f}"
        self.assertRegex(page.content.decode(), re.escape(shown) + r"(?![\d.])")
        self.assertNotRegex(page.content.decode(), r"effective n \d+\.\d")


class SamplePurposeTests(BaseTestCase):
    """The tester's three samples: 30 double-read items drawn for review, a
    judge's 30-item regrade sample nobody was assigned, and 80 items a lead
    decided to validate the judge on."""

    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        cls.logged_run = load_generated_run(answers=300, assistant="bot-1.0")
        frame = Frame(run=cls.logged_run)
        rubric = rubric_default()
        cls.review = sample_draw(frame=frame, size=30, seed=21, rubric_version=rubric, name="Double read")
        judge_run = judging.judge_run_estimate(
            judge_versions=[stand_in_version()], run=cls.logged_run, created_by=cls.lead
        )
        cls.regrade = judging.regrade_draw(judge_run, seed=22)
        cls.validation = sample_draw(
            frame=frame,
            size=80,
            seed=23,
            rubric_version=rubric,
            name="Decided by the lead",
            purpose=Sample.Purpose.JUDGE_VALIDATION,
        )
        decide(cls.review, lead=cls.lead, count=20)
        decide(cls.validation, lead=cls.lead, count=80)

    def test_a_regrade_sample_records_its_purpose(self):
        self.assertEqual(
            [s.purpose for s in (self.review, self.regrade, self.validation)],
            [Sample.Purpose.REVIEW, Sample.Purpose.JUDGE_REGRADE, Sample.Purpose.JUDGE_VALIDATION],
        )

    def test_by_default_it_counts_the_samples_drawn_for_review_and_names_every_sample(self):
        self.client.force_login(self.manager)
        page = self.client.get(reverse("version-dashboard", args=["bot-1.0"]))
        self.assertEqual(page.context["review"]["planned"], 30)
        self.assertEqual(
            [(s.id, s.counted) for s in page.context["samples"]],
            [(self.validation.id, False), (self.regrade.id, False), (self.review.id, True)],
        )
        self.assertContains(page, "counting 1 of 3 samples")
        for sample, purpose in (
            (self.review, "drawn for review"),
            (self.regrade, "a judge&#x27;s human regrade sample"),
            (self.validation, "decided to validate a judge"),
        ):
            self.assertContains(page, f'name="sample" value="{sample.id}"')
            self.assertContains(page, sample.name)
            self.assertContains(page, purpose)

    def test_the_manager_chooses_which_samples_count(self):
        self.client.force_login(self.manager)
        url = reverse("version-dashboard", args=["bot-1.0"])
        chosen = [self.review.id, self.regrade.id, self.validation.id]
        page = self.client.get(url, {"sample": chosen})
        samples = [self.review, self.regrade, self.validation]
        distinct = {item.answer_id for s in samples for item in s.items.all()}
        self.assertEqual(page.context["review"]["planned"], len(distinct))
        self.assertContains(page, "counting 3 of 3 samples")
        cells = merged_strata(samples, "resolved")
        resolved = next(g for g in page.context["review"]["grades"] if g["grade"] == "resolved")
        self.assertEqual(resolved["weighted"], stratified_domain_rate(cells))
        # The validation set alone.
        alone = self.client.get(url, {"sample": [self.validation.id]})
        self.assertEqual(alone.context["review"]["planned"], 80)
        # A sample of another version is not counted.
        self.assertEqual(self.client.get(url, {"sample": ["999999"]}).context["review"]["planned"], 0)

    def test_a_lead_draws_a_sample_to_validate_a_judge_from_the_page(self):
        self.client.force_login(self.lead)
        fields = {"run": self.logged_run.id, "size": 5, "allocation": "equal", "min_per_stratum": 1,
                  "rubric_version": rubric_default().id, "name": "for the judge"}  # fmt: skip
        self.client.post(reverse("sample-new"), {**fields, "purpose": "judge_validation"})
        self.client.post(reverse("sample-new"), {**fields, "name": "left as it was"})
        drawn = dict(
            Sample.objects.filter(name__in=("for the judge", "left as it was")).values_list("name", "purpose")
        )
        self.assertEqual(drawn, {"for the judge": "judge_validation", "left as it was": "review"})

    def test_it_refuses_a_purpose_it_does_not_know(self):
        from reviewapp.core.errors import ApplicationError

        with self.assertRaisesMessage(
            ApplicationError, "a sample is drawn for review, judge_regrade, judge_validation, not 'audit'"
        ):
            sample_draw(
                frame=Frame(run=self.logged_run), size=5, rubric_version=rubric_default(), purpose="audit"
            )
