from collections import Counter

from django.test import TestCase

from reviewapp.models import Assignment, Run, Sample
from reviewapp.services.review import rubric_default
from reviewapp.services.samples import Frame, allocate, sample_assign, sample_draw
from reviewapp.services.uploads import UploadRejected
from tests.fixtures import load_generated_run
from tests.helpers import make_user


class AllocationTests(TestCase):
    def test_it_allocates_proportionally_with_a_minimum_per_stratum(self):
        counts = allocate(
            {"language=en": 500, "language=fr": 300, "language=es": 20},
            size=30,
            allocation="proportional",
            minimum=2,
        )
        self.assertEqual(counts, {"language=en": 18, "language=es": 2, "language=fr": 10})

    def test_it_allocates_equally(self):
        counts = allocate({"a": 500, "b": 300, "c": 20}, size=30, allocation="equal", minimum=1)
        self.assertEqual(counts, {"a": 10, "b": 10, "c": 10})

    def test_it_never_draws_more_than_a_stratum_holds(self):
        counts = allocate({"a": 100, "b": 3}, size=30, allocation="equal", minimum=1)
        self.assertEqual(counts, {"a": 27, "b": 3})

    def test_it_refuses_a_size_too_small_for_every_stratum(self):
        with self.assertRaisesMessage(UploadRejected, "a sample of 2 cannot represent all 3 strata"):
            allocate({"a": 5, "b": 5, "c": 5}, size=2, allocation="proportional", minimum=1)


class SampleDrawTests(TestCase):
    def setUp(self):
        self.lead = make_user("lead")
        self.run = load_generated_run(answers=300)
        self.rubric = rubric_default()

    def draw(self, **options):
        return sample_draw(
            frame=Frame(run=self.run), rubric_version=self.rubric, created_by=self.lead, **options
        )

    def test_it_draws_a_stratified_frozen_sample_with_its_weights(self):
        sample = self.draw(size=30, seed=7)
        self.assertEqual(sample.items.count(), 30)
        by_stratum = Counter(sample.items.values_list("stratum", flat=True))
        self.assertEqual(set(by_stratum), {"language=en", "language=es", "language=fr"})
        for name, stratum in sample.strata.items():
            self.assertEqual(stratum["drawn"], by_stratum[name])
            self.assertAlmostEqual(stratum["weight"], stratum["population"] / stratum["drawn"])
        self.assertEqual(sum(s["population"] for s in sample.strata.values()), sample.frame_size)

    def test_it_draws_the_same_items_from_the_same_seed(self):
        first = list(self.draw(seed=42).items.values_list("answer_id", flat=True))
        second = list(self.draw(seed=42).items.values_list("answer_id", flat=True))
        third = list(self.draw(seed=43).items.values_list("answer_id", flat=True))
        self.assertEqual(first, second)
        self.assertNotEqual(first, third)

    def test_it_leaves_the_sealed_split_out_unless_opened_and_records_who(self):
        sealed = set(
            self.run.set_version.questions.filter(split="sealed").values_list("question_id", flat=True)
        )
        closed = self.draw(size=300, seed=1)
        self.assertFalse(sealed & set(closed.items.values_list("answer__question_id", flat=True)))
        self.assertEqual(closed.frame_size, 300 - len(sealed))
        opened = self.draw(size=300, seed=1, include_sealed=True)
        self.assertEqual(opened.frame_size, 300)
        self.assertEqual((opened.sealed_opened_by, opened.includes_sealed), (self.lead, True))
        self.assertIsNotNone(opened.sealed_opened_at)

    def test_it_stratifies_by_question_stratum_too(self):
        sample = self.draw(size=40, seed=3, strata_fields=("language", "stratum"))
        self.assertTrue(all("|stratum=" in name for name in sample.strata))

    def test_it_draws_from_an_assistant_versions_runs_between_two_dates(self):
        from datetime import timedelta

        from django.utils import timezone

        now = timezone.now()
        frame = Frame(
            assistant_version=self.run.assistant_version,
            date_from=now - timedelta(days=1),
            date_to=now + timedelta(days=1),
        )
        sample = sample_draw(frame=frame, size=10, seed=5, rubric_version=self.rubric)
        self.assertEqual(
            (sample.frame_size, sample.run),
            (Run.objects.get().answers.count() - sample_sealed(self.run), None),
        )
        empty = Frame(
            assistant_version=self.run.assistant_version,
            date_from=now + timedelta(days=1),
            date_to=now + timedelta(days=2),
        )
        with self.assertRaisesMessage(UploadRejected, "the frame holds no answers to draw from"):
            sample_draw(frame=empty, rubric_version=self.rubric)


def sample_sealed(run) -> int:
    return run.set_version.questions.filter(split="sealed").count()


class AssignmentTests(TestCase):
    def setUp(self):
        self.run = load_generated_run(answers=120)
        self.sample = sample_draw(frame=Frame(run=self.run), size=30, seed=9, rubric_version=rubric_default())
        self.readers = [make_user(f"reader{i}", "reviewer") for i in range(3)]

    def test_it_gives_each_item_to_two_readers_balanced_under_aliases(self):
        assignments = sample_assign(sample=self.sample, reviewers=self.readers, readers_per_item=2)
        self.assertEqual(len(assignments), 60)
        per_item = Counter(a.item_id for a in assignments)
        self.assertEqual(set(per_item.values()), {2})
        per_reader = Counter(a.reviewer_id for a in assignments)
        self.assertEqual(sorted(per_reader.values()), [20, 20, 20])
        pairs = {(a.item_id, a.reviewer_id) for a in assignments}
        self.assertEqual(len(pairs), 60)  # never the same item twice to one reader
        self.sample.refresh_from_db()
        self.assertEqual(self.sample.alias_seed, self.sample.seed ^ 0x5EED)
        for reader in self.readers:
            orders = sorted(Assignment.objects.filter(reviewer=reader).values_list("order", flat=True))
            self.assertEqual(orders, list(range(1, 21)))

    def test_it_shuffles_each_readers_order(self):
        sample_assign(sample=self.sample, reviewers=self.readers[:2], readers_per_item=2)
        first, second = (
            list(Assignment.objects.filter(reviewer=r).order_by("order").values_list("item_id", flat=True))
            for r in self.readers[:2]
        )
        self.assertEqual(set(first), set(second))
        self.assertNotEqual(first, second)

    def test_it_assigns_a_sample_once(self):
        sample_assign(sample=self.sample, reviewers=self.readers[:1])
        with self.assertRaisesMessage(UploadRejected, "this sample is assigned already"):
            sample_assign(sample=self.sample, reviewers=self.readers[1:])

    def test_it_needs_enough_readers(self):
        with self.assertRaisesMessage(
            UploadRejected, "2 readers per item needs at least 2 readers; 1 chosen"
        ):
            sample_assign(sample=self.sample, reviewers=self.readers[:1], readers_per_item=2)
        self.assertEqual(Sample.objects.get().items.filter(assignments__isnull=False).count(), 0)
