from collections import Counter

from django.test import TestCase
from django.utils import timezone

from reviewapp.core.errors import ApplicationError
from reviewapp.models import Answer, Assignment, Question, Run, Sample
from reviewapp.review.services.review import rubric_default
from reviewapp.review.services.samples import Frame, allocate, sample_assign, sample_draw
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
        with self.assertRaisesMessage(ApplicationError, "a sample of 2 cannot represent all 3 strata"):
            allocate({"a": 5, "b": 5, "c": 5}, size=2, allocation="proportional", minimum=1)

    def test_it_refuses_minimums_that_add_up_to_more_than_the_size_with_the_numbers(self):
        populations = {f"language=l{index}": 100 for index in range(8)}
        with self.assertRaises(ApplicationError) as refused:
            allocate(populations, size=30, allocation="proportional", minimum=5)
        self.assertEqual(
            refused.exception.errors,
            [
                "8 strata × a minimum of 5 = 40 items, more than the 30 asked for: "
                "ask for at least 40, lower the minimum, or use fewer strata"
            ],
        )

    def test_it_counts_a_stratum_smaller_than_the_minimum_with_what_it_holds(self):
        with self.assertRaises(ApplicationError) as refused:
            allocate({"a": 100, "b": 100, "c": 2}, size=10, allocation="proportional", minimum=5)
        self.assertEqual(
            refused.exception.errors,
            [
                "2 strata × a minimum of 5 + the 2 items of 1 smaller stratum = 12 items, "
                "more than the 10 asked for: ask for at least 12, lower the minimum, or use fewer strata"
            ],
        )

    def test_it_gives_a_stratum_smaller_than_the_minimum_all_it_holds(self):
        populations = {"a": 100, "b": 100, "c": 2}
        self.assertEqual(
            allocate(populations, size=12, allocation="proportional", minimum=5), {"a": 5, "b": 5, "c": 2}
        )
        self.assertEqual(
            allocate(populations, size=30, allocation="proportional", minimum=5), {"a": 14, "b": 14, "c": 2}
        )

    def test_it_draws_exactly_the_size_when_the_minimums_just_fit(self):
        populations = {"big": 1000, **{f"small{index}": 10 for index in range(7)}}
        counts = allocate(populations, size=40, allocation="proportional", minimum=5)
        self.assertEqual(counts, dict.fromkeys(populations, 5))

    def test_it_takes_every_item_when_the_size_is_above_the_total(self):
        counts = allocate({"a": 3, "b": 4}, size=50, allocation="proportional", minimum=5)
        self.assertEqual(counts, {"a": 3, "b": 4})

    def test_it_never_goes_over_the_size_with_equal_allocation(self):
        counts = allocate({"a": 100, "b": 100, "c": 100}, size=3, allocation="equal", minimum=5)
        self.assertEqual(counts, {"a": 1, "b": 1, "c": 1})
        with self.assertRaisesMessage(
            ApplicationError, "a sample of 2 cannot represent all 3 strata; draw at least 3"
        ):
            allocate({"a": 100, "b": 100, "c": 100}, size=2, allocation="equal", minimum=1)


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

    def sealed_question_ids(self) -> set[str]:
        return set(
            self.run.set_version.questions.filter(split="sealed").values_list("question_id", flat=True)
        )

    def test_it_leaves_the_sealed_split_out_unless_opened_and_records_who(self):
        sealed = self.sealed_question_ids()
        closed = self.draw(size=300, seed=1)
        self.assertFalse(sealed & set(closed.items.values_list("answer__question_id", flat=True)))
        self.assertEqual(closed.frame_size, 300 - len(sealed))
        opened = self.draw(size=300, seed=1, splits=("tuning", "sealed"), sealed_reason="release 2.1")
        self.assertEqual(opened.frame_size, 300)
        self.assertEqual(
            (opened.sealed_opened_by, opened.includes_sealed, opened.sealed_reason),
            (self.lead, True, "release 2.1"),
        )
        self.assertIsNotNone(opened.sealed_opened_at)

    def test_it_draws_no_sealed_answer_by_default(self):
        sample = self.draw(size=100, seed=12, strata_fields=("language", "stratum"), min_per_stratum=3)
        sample.refresh_from_db()
        drawn = set(sample.items.values_list("answer__question_id", flat=True))
        self.assertEqual(len(drawn), 100)
        self.assertEqual(drawn & self.sealed_question_ids(), set())
        self.assertEqual(
            (sample.includes_sealed, sample.sealed_opened_by, sample.sealed_opened_at, sample.sealed_reason),
            (False, None, None, ""),
        )

    def test_it_draws_the_sealed_part_alone_and_records_who_when_and_why(self):
        before = timezone.now()
        sample = self.draw(size=30, seed=2, splits=("sealed",), sealed_reason="  Release figure for 2.1  ")
        after = timezone.now()
        sample.refresh_from_db()
        sealed = self.sealed_question_ids()
        drawn = list(sample.items.values_list("answer__question_id", flat=True))
        self.assertEqual(len(drawn), 30)
        self.assertEqual(set(drawn) - sealed, set())
        self.assertEqual(sample.frame_size, len(sealed))
        self.assertEqual(
            (sample.includes_sealed, sample.sealed_opened_by, sample.sealed_reason),
            (True, self.lead, "Release figure for 2.1"),
        )
        self.assertTrue(before <= sample.sealed_opened_at <= after)

    def test_it_refuses_to_open_the_sealed_part_without_a_reason_or_a_person(self):
        with self.assertRaisesMessage(
            ApplicationError, "say why the sealed part is opened; the reason is kept with the sample"
        ):
            self.draw(splits=("sealed",), sealed_reason="   ")
        with self.assertRaisesMessage(ApplicationError, "the sealed part is opened by someone; say who"):
            sample_draw(
                frame=Frame(run=self.run), rubric_version=self.rubric, splits=("sealed",), sealed_reason="why"
            )
        with self.assertRaisesMessage(
            ApplicationError, "draw from the tuning split, the sealed split or both, not ['secret']"
        ):
            self.draw(splits=("secret",))
        self.assertEqual(Sample.objects.count(), 0)

    def test_it_stratifies_by_split_with_a_weight_per_split(self):
        sample = self.draw(
            size=60,
            seed=4,
            strata_fields=("language", "split"),
            splits=("tuning", "sealed"),
            sealed_reason="compare the parts",
        )
        split_of = dict(self.run.set_version.questions.values_list("question_id", "split"))
        expected = Counter(
            f"language={language}|split={split_of[question_id]}"
            for language, question_id in Answer.objects.filter(run=self.run).values_list(
                "language", "question_id"
            )
        )
        self.assertEqual({key: s["population"] for key, s in sample.strata.items()}, dict(expected))
        self.assertEqual(
            set(sample.strata),
            {
                f"language={language}|split={split}"
                for language in ("en", "es", "fr")
                for split in ("sealed", "tuning")
            },
        )
        for item in sample.items.select_related("answer"):
            self.assertEqual(
                item.stratum, f"language={item.answer.language}|split={split_of[item.answer.question_id]}"
            )
        for stratum in sample.strata.values():
            self.assertEqual(stratum["weight"], stratum["population"] / stratum["drawn"])
        self.assertEqual(sum(s["drawn"] for s in sample.strata.values()), 60)

    def test_it_refuses_minimums_the_size_cannot_hold_and_stores_nothing(self):
        with self.assertRaises(ApplicationError) as refused:
            self.draw(size=40, seed=1, strata_fields=("language", "stratum"), min_per_stratum=7)
        # es|subnational holds 6 tuning answers, so it counts with 6, not 7.
        self.assertEqual(
            refused.exception.errors,
            [
                "8 strata × a minimum of 7 + the 6 items of 1 smaller stratum = 62 items, "
                "more than the 40 asked for: ask for at least 62, lower the minimum, or use fewer strata"
            ],
        )
        self.assertEqual(Sample.objects.count(), 0)
        sample = self.draw(size=62, seed=1, strata_fields=("language", "stratum"), min_per_stratum=7)
        self.assertEqual(sample.items.count(), 62)
        self.assertEqual(
            sample.strata["language=es|stratum=subnational"], {"population": 6, "drawn": 6, "weight": 1.0}
        )
        self.assertEqual(
            {key: s["drawn"] for key, s in sample.strata.items() if key != "language=es|stratum=subnational"},
            dict.fromkeys(set(sample.strata) - {"language=es|stratum=subnational"}, 7),
        )

    def test_it_draws_the_whole_frame_when_asked_for_more_than_it_holds(self):
        sample = self.draw(size=1000, seed=6, min_per_stratum=5)
        tuning = set(
            Answer.objects.filter(
                run=self.run,
                question_id__in=self.run.set_version.questions.filter(split=Question.Split.TUNING).values(
                    "question_id"
                ),
            ).values_list("id", flat=True)
        )
        self.assertEqual((sample.size, sample.frame_size), (207, 207))
        self.assertEqual(set(sample.items.values_list("answer_id", flat=True)), tuning)
        self.assertEqual(
            {key: s["weight"] for key, s in sample.strata.items()},
            {"language=en": 1.0, "language=es": 1.0, "language=fr": 1.0},
        )

    def test_it_names_the_fields_it_can_stratify_by(self):
        with self.assertRaisesMessage(
            ApplicationError, "strata are drawn by language, stratum or split, not ['colour']"
        ):
            self.draw(strata_fields=("language", "colour"))

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
        with self.assertRaisesMessage(ApplicationError, "the frame holds no answers to draw from"):
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
        with self.assertRaisesMessage(ApplicationError, "this sample is assigned already"):
            sample_assign(sample=self.sample, reviewers=self.readers[1:])

    def test_it_needs_enough_readers(self):
        with self.assertRaisesMessage(
            ApplicationError, "2 readers per item needs at least 2 readers; 1 chosen"
        ):
            sample_assign(sample=self.sample, reviewers=self.readers[:1], readers_per_item=2)
        self.assertEqual(Sample.objects.get().items.filter(assignments__isnull=False).count(), 0)
