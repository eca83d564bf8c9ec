"""Paired samples (issue 14, item 4): the seeded draw, the readers' places
and swapped repeats, one judgement per double submit, and the figures on a
hand-made case checked against scoring.stats.paired.paired and scoring.stats.rates."""

from __future__ import annotations

import uuid
from collections import Counter, defaultdict

from django.test import TestCase

from reviewapp.core.errors import ApplicationError
from reviewapp.models import Answer, Run
from reviewapp.paired.models import PairedAssignment, PairedDecision, PairedJudgement
from reviewapp.paired.selectors import (
    AWAITING_LEAD,
    NOT_READ,
    PENDING,
    SETTLED,
    DecisionInput,
    paired_results,
)
from reviewapp.paired.services import (
    PairedInput,
    paired_assign,
    paired_decision_submit,
    paired_draw,
    paired_frame,
    paired_judgement_submit,
    repeat_count,
)
from scoring.stats.paired import paired
from scoring.stats.rates import rate
from tests.fixtures import load_generated_run, twin
from tests.helpers import BaseTestCase, make_user

R, P, M, U, PENDING_GRADE = "resolved", "partially_resolved", "material_error", "unresolved", "pending"


def judge(assignment: PairedAssignment, grade_a: str, grade_b: str, better: str, *, key=None):
    """Submit a judgement given in runs' terms, in the places the reader saw."""
    first, second = (grade_a, grade_b) if assignment.a_is_first else (grade_b, grade_a)
    a_place, b_place = ("1", "2") if assignment.a_is_first else ("2", "1")
    return paired_judgement_submit(
        assignment=assignment,
        author=assignment.reviewer,
        data=PairedInput(
            grade_first=first,
            note_first="" if first == R else "a reason",
            grade_second=second,
            note_second="" if second == R else "a reason",
            better={"a": a_place, "b": b_place, "equal": "equal"}[better],
        ),
        submission_key=key or uuid.uuid4(),
    )


class PairedCase(BaseTestCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        cls.run_a = load_generated_run(answers=60, assistant="pairbot-1.0", version="pair-1")
        cls.run_b = twin(cls.run_a, "pairbot-2.0", change=lambda text: text + " Revised.")
        cls.readers = [make_user(f"reader{i}", "reviewer") for i in (1, 2, 3)]


class PairedDrawTests(PairedCase):
    def test_it_draws_questions_both_runs_answered_stratified_by_language(self):
        sample = paired_draw(run_a=self.run_a, run_b=self.run_b, size=20, seed=11, created_by=self.lead)
        items = list(sample.items.select_related("answer_a", "answer_b"))
        self.assertEqual(len(items), 20)
        self.assertEqual(
            (sample.size, sample.seed, sample.run_a, sample.run_b), (20, 11, self.run_a, self.run_b)
        )
        self.assertEqual(sample.set_version_id, self.run_a.set_version_id)
        self.assertEqual(sample.strata_fields, ["language"])
        # Every question of the set's tuning part: both runs answered them all.
        tuning = self.run_a.set_version.questions.filter(split="tuning").count()
        self.assertEqual(sample.frame_size, tuning)
        self.assertEqual(sum(s["population"] for s in sample.strata.values()), tuning)
        self.assertEqual(sum(s["drawn"] for s in sample.strata.values()), 20)
        self.assertEqual(
            Counter(item.stratum for item in items), {k: s["drawn"] for k, s in sample.strata.items()}
        )
        for item in items:
            self.assertEqual((item.answer_a.run_id, item.answer_b.run_id), (self.run_a.id, self.run_b.id))
            self.assertEqual(item.answer_a.question_id, item.question_id)
            self.assertEqual(item.answer_b.question_id, item.question_id)
            self.assertEqual(item.stratum, f"language={item.answer_a.language}")
        self.assertEqual(sorted(item.position for item in items), list(range(1, 21)))

    def test_the_same_seed_draws_the_same_questions(self):
        first = paired_draw(run_a=self.run_a, run_b=self.run_b, size=15, seed=4)
        again = paired_draw(run_a=self.run_a, run_b=self.run_b, size=15, seed=4)
        other = paired_draw(run_a=self.run_a, run_b=self.run_b, size=15, seed=5)

        def questions(sample):
            return list(sample.items.order_by("position").values_list("question_id", flat=True))

        self.assertEqual(questions(first), questions(again))
        self.assertNotEqual(questions(first), questions(other))

    def test_it_leaves_out_questions_one_run_did_not_answer_in_its_first_attempt(self):
        tuning_ids = self.run_a.set_version.questions.filter(split="tuning").values_list(
            "question_id", flat=True
        )
        failed = self.run_b.answers.filter(question_id__in=tuning_ids).order_by("id")[0]
        Answer.objects.filter(id=failed.id).update(status=Answer.Status.TIMEOUT)
        frame = paired_frame(run_a=self.run_a, run_b=self.run_b)
        tuning = self.run_a.set_version.questions.filter(split="tuning").count()
        self.assertEqual(len(frame), tuning - 1)
        self.assertNotIn(failed.question_id, {question.question_id for question in frame})

    def test_it_draws_every_question_when_asked_for_more(self):
        sample = paired_draw(run_a=self.run_a, run_b=self.run_b, size=500, seed=1)
        tuning = self.run_a.set_version.questions.filter(split="tuning").count()
        self.assertEqual((sample.size, sample.items.count()), (tuning, tuning))

    def test_it_refuses_one_run_twice(self):
        with self.assertRaisesMessage(ApplicationError, "choose two different runs"):
            paired_draw(run_a=self.run_a, run_b=self.run_a)

    def test_it_refuses_runs_of_two_set_versions(self):
        other = load_generated_run(answers=10, assistant="pairbot-3.0", version="pair-2")
        with self.assertRaisesMessage(ApplicationError, "both runs must answer one set version"):
            paired_draw(run_a=self.run_a, run_b=other)

    def test_it_refuses_a_run_that_is_not_stored(self):
        Run.objects.filter(id=self.run_b.id).update(status=Run.Status.FAILED)
        self.run_b.refresh_from_db()
        with self.assertRaisesMessage(ApplicationError, f"run {self.run_b.id} (as B) is failed"):
            paired_draw(run_a=self.run_a, run_b=self.run_b)

    def test_it_refuses_a_repeat_share_above_half(self):
        with self.assertRaisesMessage(ApplicationError, "the repeat share lies between 0 and 50 %, not 60 %"):
            paired_draw(run_a=self.run_a, run_b=self.run_b, repeat_share=0.6)


class RepeatCountTests(TestCase):
    def test_it_rounds_the_share_half_up(self):
        self.assertEqual(
            [repeat_count(items=n, share=0.10) for n in (0, 4, 5, 14, 15, 25, 30)], [0, 0, 1, 1, 2, 3, 3]
        )
        self.assertEqual(repeat_count(items=3, share=0.5), 2)
        self.assertEqual(repeat_count(items=10, share=0), 0)


class PairedAssignTests(PairedCase):
    def draw_and_assign(
        self, *, seed: int = 7, size: int = 30, readers_per_item: int = 2, share: float = 0.10
    ):
        sample = paired_draw(
            run_a=self.run_a, run_b=self.run_b, size=size, seed=seed, repeat_share=share, readers_per_item=2
        )
        paired_assign(paired_sample=sample, reviewers=self.readers, readers_per_item=readers_per_item)
        return sample

    def places(self, sample) -> dict[tuple[str, int], bool]:
        return {
            (a.item.question_id, a.reviewer_id): a.a_is_first
            for a in PairedAssignment.objects.filter(
                item__paired_sample=sample, repeat_of__isnull=True
            ).select_related("item")
        }

    def test_the_same_seed_gives_each_reader_the_same_places(self):
        first = self.draw_and_assign(seed=7)
        again = self.draw_and_assign(seed=7)
        other = self.draw_and_assign(seed=8)
        self.assertEqual(self.places(first), self.places(again))
        self.assertEqual(len(self.places(first)), 60)
        self.assertNotEqual(self.places(first), self.places(other))

    def test_about_half_of_each_readers_pairs_show_a_first(self):
        sample = self.draw_and_assign(seed=3, size=31, readers_per_item=1)
        by_reader = defaultdict(list)
        for (_, reader_id), a_first in self.places(sample).items():
            by_reader[reader_id].append(a_first)
        self.assertEqual(sorted(len(flags) for flags in by_reader.values()), [10, 10, 11])
        for flags in by_reader.values():
            self.assertIn(sum(flags), (len(flags) // 2, (len(flags) + 1) // 2))

    def test_each_pair_goes_to_readers_per_item_readers_in_a_shuffled_order(self):
        sample = self.draw_and_assign(size=30, readers_per_item=2)
        originals = PairedAssignment.objects.filter(item__paired_sample=sample, repeat_of__isnull=True)
        self.assertEqual(set(Counter(originals.values_list("item_id", flat=True)).values()), {2})
        self.assertEqual(
            Counter(originals.values_list("reviewer_id", flat=True)), {r.id: 20 for r in self.readers}
        )
        for reader in self.readers:
            mine = list(PairedAssignment.objects.filter(reviewer=reader).order_by("order"))
            self.assertEqual([a.order for a in mine], list(range(1, len(mine) + 1)))
            self.assertEqual(len({a.alias for a in mine}), len(mine))
            positions = [a.item.position for a in mine if a.repeat_of_id is None]
            self.assertNotEqual(positions, sorted(positions))

    def test_a_share_of_each_readers_pairs_comes_back_later_with_the_places_swapped(self):
        sample = self.draw_and_assign(size=30, readers_per_item=2, share=0.10)
        for reader in self.readers:
            mine = PairedAssignment.objects.filter(item__paired_sample=sample, reviewer=reader)
            originals = mine.filter(repeat_of__isnull=True)
            repeats = list(mine.filter(repeat_of__isnull=False).select_related("repeat_of"))
            # 20 pairs each, 10 % of 20 = 2.
            self.assertEqual(len(repeats), repeat_count(items=originals.count(), share=0.10))
            self.assertEqual(len(repeats), 2)
            for repeat in repeats:
                original = repeat.repeat_of
                self.assertEqual(
                    (original.item_id, original.reviewer_id), (repeat.item_id, repeat.reviewer_id)
                )
                self.assertGreater(repeat.order, original.order)
                self.assertEqual(repeat.a_is_first, not original.a_is_first)
                self.assertNotEqual(repeat.alias, original.alias)

    def test_a_repeat_has_other_pairs_between_it_and_its_original_when_there_is_room(self):
        sample = self.draw_and_assign(size=30, readers_per_item=1, share=0.3)
        repeats = PairedAssignment.objects.filter(item__paired_sample=sample, repeat_of__isnull=False)
        self.assertEqual(repeats.count(), 9)
        for repeat in repeats.select_related("repeat_of"):
            self.assertGreater(repeat.order - repeat.repeat_of.order, 3)

    def test_it_refuses_assigning_twice_and_too_few_readers(self):
        sample = paired_draw(run_a=self.run_a, run_b=self.run_b, size=6, seed=1)
        with self.assertRaisesMessage(
            ApplicationError, "4 readers per pair needs at least 4 readers; 3 chosen"
        ):
            paired_assign(paired_sample=sample, reviewers=self.readers, readers_per_item=4)
        paired_assign(paired_sample=sample, reviewers=self.readers, readers_per_item=1)
        with self.assertRaisesMessage(ApplicationError, "this paired sample is assigned already"):
            paired_assign(paired_sample=sample, reviewers=self.readers, readers_per_item=1)


class PairedJudgementTests(PairedCase):
    def setUp(self):
        sample = paired_draw(run_a=self.run_a, run_b=self.run_b, size=4, seed=2)
        paired_assign(paired_sample=sample, reviewers=self.readers[:1], readers_per_item=1)
        self.assignment = PairedAssignment.objects.filter(reviewer=self.readers[0]).order_by("order").first()

    def test_a_double_submit_makes_one_judgement(self):
        key = uuid.uuid4()
        first = judge(self.assignment, R, U, "a", key=key)
        again = judge(self.assignment, R, U, "a", key=key)
        self.assertEqual(first.id, again.id)
        self.assertEqual(PairedJudgement.objects.filter(assignment=self.assignment).count(), 1)

    def test_a_new_submit_is_the_next_revision(self):
        judge(self.assignment, R, U, "a")
        second = judge(self.assignment, R, R, "equal")
        self.assertEqual(second.revision, 2)

    def test_it_refuses_a_grade_other_than_resolved_without_a_note(self):
        data = PairedInput(grade_first=R, grade_second=M, better="1")
        with self.assertRaisesMessage(
            ApplicationError, "Say why answer 2 is material error: a reason someone else can check."
        ):
            paired_judgement_submit(
                assignment=self.assignment, author=self.readers[0], data=data, submission_key=uuid.uuid4()
            )

    def test_it_refuses_a_judgement_without_a_preference(self):
        data = PairedInput(grade_first=R, grade_second=R)
        with self.assertRaisesMessage(ApplicationError, "Say which answer is better, or that they are equal."):
            paired_judgement_submit(
                assignment=self.assignment, author=self.readers[0], data=data, submission_key=uuid.uuid4()
            )

    def test_it_refuses_anyone_but_the_assigned_reader(self):
        data = PairedInput(grade_first=R, grade_second=R, better="equal")
        with self.assertRaisesMessage(ApplicationError, "only the assigned reader judges a pair"):
            paired_judgement_submit(
                assignment=self.assignment, author=self.readers[1], data=data, submission_key=uuid.uuid4()
            )

    def test_the_judgement_is_stored_in_the_places_the_reader_saw(self):
        judgement = judge(self.assignment, R, U, "b")
        if self.assignment.a_is_first:
            self.assertEqual((judgement.grade_first, judgement.grade_second, judgement.better), (R, U, "2"))
        else:
            self.assertEqual((judgement.grade_first, judgement.grade_second, judgement.better), (U, R, "1"))


# Each pair's readings in runs' terms (grade of A, grade of B, better), by position.
AGREED = [
    (R, R, "equal"),
    (R, U, "a"),  # only A resolved
    (U, R, "b"),  # only B
    (R, R, "b"),
    (P, R, "b"),  # only B
    (U, U, "equal"),
    (R, P, "a"),  # only A
    (U, R, "b"),  # only B
    (R, R, "a"),
    (P, P, "equal"),
]


class PairedResultsTests(PairedCase):
    """Fifteen pairs, two readers each: ten agreed, one the readers disagree
    on that a lead decided (both resolved, B better), one disagreement left
    open, one agreed material error (awaiting lead), one pending, one read by
    one reader only."""

    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        cls.sample = paired_draw(run_a=cls.run_a, run_b=cls.run_b, size=15, seed=21, repeat_share=0)
        paired_assign(paired_sample=cls.sample, reviewers=cls.readers[:2], readers_per_item=2)
        plan = {
            **dict(enumerate(((reading, reading) for reading in AGREED), start=1)),
            11: ((R, U, "a"), (R, R, "b")),
            12: ((R, R, "a"), (R, R, "b")),
            13: ((M, R, "b"), (M, R, "b")),
            14: ((R, PENDING_GRADE, "a"), (R, PENDING_GRADE, "a")),
            15: ((R, R, "a"), None),
        }
        for position, readings in plan.items():
            for reader, planned in zip(cls.readers[:2], readings, strict=True):
                if planned:
                    assignment = PairedAssignment.objects.get(
                        item__paired_sample=cls.sample, item__position=position, reviewer=reader
                    )
                    judge(assignment, *planned)
        paired_decision_submit(
            item=cls.sample.items.get(position=11),
            lead=cls.lead,
            data=DecisionInput(
                grade_a=R, grade_b=R, better="b", reason="both answers hold; B names the period"
            ),
            submission_key=uuid.uuid4(),
        )

    def test_it_counts_each_pair_once_by_where_it_stands(self):
        results = paired_results(paired_sample=self.sample)
        self.assertEqual(results.counts, {SETTLED: 11, AWAITING_LEAD: 2, PENDING: 1, NOT_READ: 1})
        by_position = {state.item.position: state for state in results.states}
        self.assertEqual(by_position[11].reason, "decided by a lead")
        self.assertEqual(by_position[12].reason, "the readers disagree")
        self.assertEqual(by_position[13].reason, "a material error counts once a lead confirmed it")
        self.assertEqual(by_position[15].reason, "1 of 2 readers")

    def test_the_paired_table_p_and_interval_are_scoring_compares_on_the_settled_pairs(self):
        results = paired_results(paired_sample=self.sample)
        settled = [*AGREED, (R, R, "b")]
        questions = dict(self.sample.items.values_list("position", "question_id"))
        expected = paired(
            {questions[i]: a == R for i, (a, _, _) in enumerate(settled, start=1)},
            {questions[i]: b == R for i, (_, b, _) in enumerate(settled, start=1)},
        )
        self.assertEqual(results.grades, expected)
        # By hand: both resolved 4 (pairs 1, 4, 9, 11), only A 2, only B 3, neither 2.
        self.assertEqual(results.grades.n, 11)
        self.assertEqual(results.grades.table, ((4, 2), (3, 2)))
        self.assertAlmostEqual(results.grades.difference, 1 / 11)
        # McNemar exact on 2 against 3 discordant pairs: 2 × P(X <= 2 | 5, 1/2) = 2 × 16/32.
        self.assertEqual(results.grades.p_value, 1.0)

    def test_the_preference_split_has_a_wilson_interval_on_as_share(self):
        preference = paired_results(paired_sample=self.sample).preference
        self.assertEqual((preference.a_better, preference.b_better, preference.equal), (3, 5, 3))
        self.assertEqual(preference.n, 11)
        self.assertEqual(preference.a_share, rate(3, 8))

    def test_a_lead_decision_that_leaves_a_grade_pending_settles_nothing(self):
        paired_decision_submit(
            item=self.sample.items.get(position=12),
            lead=self.lead,
            data=DecisionInput(
                grade_a=R, grade_b=PENDING_GRADE, better="a", reason="the period cannot be checked yet"
            ),
            submission_key=uuid.uuid4(),
        )
        results = paired_results(paired_sample=self.sample)
        self.assertEqual(results.counts, {SETTLED: 11, AWAITING_LEAD: 1, PENDING: 2, NOT_READ: 1})

    def test_a_decision_without_a_reason_is_refused(self):
        item = self.sample.items.get(position=12)
        with self.assertRaisesMessage(ApplicationError, "Give the reason for the decision"):
            paired_decision_submit(
                item=item,
                lead=self.lead,
                data=DecisionInput(grade_a=R, grade_b=R, better="a"),
                submission_key=uuid.uuid4(),
            )
        self.assertFalse(PairedDecision.objects.filter(item=item).exists())


class PositionConsistencyTests(PairedCase):
    """One reader prefers A in every pair's first showing; on the three
    repeats (places swapped) they prefer A again, the same place (so B), and
    neither. Another reader has not read their repeats yet."""

    def test_it_counts_per_reader_how_often_the_same_run_is_preferred_when_the_places_swap(self):
        sample = paired_draw(run_a=self.run_a, run_b=self.run_b, size=20, seed=9, repeat_share=0.3)
        paired_assign(paired_sample=sample, reviewers=self.readers[:2], readers_per_item=1)
        mine = PairedAssignment.objects.filter(item__paired_sample=sample, reviewer=self.readers[0])
        for assignment in mine.filter(repeat_of__isnull=True):
            judge(assignment, R, P, "a")
        repeats = list(mine.filter(repeat_of__isnull=False).order_by("order"))
        self.assertEqual(len(repeats), 3)
        judge(repeats[0], R, P, "a")
        # The same place as the first time: A was there then, B is now.
        judge(repeats[1], R, P, "b")
        judge(repeats[2], R, P, "equal")

        results = paired_results(paired_sample=sample)
        checks = {check.reviewer: check for check in results.positions}
        first = checks[self.readers[0]]
        self.assertEqual(
            (first.read, first.consistent, first.same_place, first.same_grades, first.waiting),
            (3, 1, 1, 3, 0),
        )
        self.assertEqual(first.rate, rate(1, 3))
        second = checks[self.readers[1]]
        self.assertEqual((second.read, second.waiting, second.rate), (0, 3, None))
        # Repeats settle nothing: every first showing preferred A.
        self.assertEqual(results.preference.a_better, 10)
        self.assertEqual(results.counts[SETTLED], 10)
