"""Judges against people: settled human outcomes, frozen validation sets,
per-label figures against a hand-worked matrix, and the human regrade."""

import uuid

import krippendorff
import numpy as np

from reviewapp.core.errors import ApplicationError
from reviewapp.judges.services import judge_versions, judging
from reviewapp.judges.services.validation_sets import validation_set_draw
from reviewapp.judges.validation import (
    NO_VALIDATION_SET,
    UNCALIBRATED_TITLE,
    Settled,
    judge_is_validated,
    judge_validation,
    regrade_agreement,
    regrade_disagreements,
    settled_outcomes,
    validation_title,
)
from reviewapp.models import (
    Adjudication,
    Assignment,
    CalibrationItem,
    JudgeRun,
    JudgeVersion,
    ModelVerdict,
    Sample,
    SampleItem,
    ValidationItem,
    ValidationSet,
)
from reviewapp.review.services.adjudication import Decision, adjudication_submit
from reviewapp.review.services.review import JudgementInput, judgement_submit, rubric_default
from reviewapp.review.services.samples import Frame, sample_assign, sample_draw
from tests.fixtures import load_generated_run
from tests.helpers import BaseTestCase, make_user

KEYS = ("series", "period", "unit", "caveat", "unsupported_claim")
ALL_YES = dict.fromkeys(KEYS, "yes")
MATERIAL = {
    "error_claim": "the rate was 35",
    "error_evidence": "the record holds 41",
    "error_effect": "understates the rate",
    "error_kind": "wrong_conclusion",
}


class ValidationTestCase(BaseTestCase):
    """A stored run, a lead and a stand-in judge grading the rubric; items,
    decisions and verdicts are written as rows where the services would only
    be slower at making the same thing."""

    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        cls.logged_run = load_generated_run(answers=60)
        cls.rubric = rubric_default()
        cls.judge_version = judge_versions.judge_version_save(
            name="numbers", provider="stand-in", model="", metrics=["rubric"], rubric_version=cls.rubric
        )
        cls.answers = list(cls.logged_run.answers.order_by("id"))

    @classmethod
    def sample_of(cls, count: int) -> list[SampleItem]:
        sample = Sample.objects.create(
            name="made in the test",
            run=cls.logged_run,
            frame_size=len(cls.answers),
            size=count,
            allocation=Sample.Allocation.PROPORTIONAL,
            seed=1,
            rubric_version=cls.rubric,
        )
        return SampleItem.objects.bulk_create(
            SampleItem(sample=sample, answer=answer, stratum="language=en", position=position)
            for position, answer in enumerate(cls.answers[:count], start=1)
        )

    @classmethod
    def decide(cls, item, grade="resolved", *, answers=None, pending=False, addresses=True) -> Adjudication:
        return Adjudication.objects.create(
            item=item,
            revision=item.adjudications.count() + 1,
            lead=cls.lead,
            reason="decided in the test",
            addresses_question=addresses,
            rubric_answers=(ALL_YES if answers is None else answers) if addresses else {},
            grade="" if pending else grade,
            pending=pending,
            submission_key=uuid.uuid4(),
        )

    @classmethod
    def judge_run(cls, *, versions=None, regrade_sample=None) -> JudgeRun:
        judge_run = JudgeRun.objects.create(
            run=cls.logged_run, status=JudgeRun.Status.DONE, regrade_sample=regrade_sample
        )
        judge_run.judge_versions.set(versions or [cls.judge_version])
        return judge_run

    @classmethod
    def grade(cls, judge_run, item, grade, *, answers=None, error="") -> ModelVerdict:
        return ModelVerdict.objects.create(
            judge_run=judge_run,
            judge_version=cls.judge_version,
            answer_id=item.answer_id,
            metric="rubric",
            score=None if error else float(grade == "resolved"),
            labels={} if error else {"grade": grade, "answers": ALL_YES if answers is None else answers},
            prompt_hash=cls.judge_version.prompt_hash,
            error=error,
        )

    @classmethod
    def validation_set(cls, holdout, tuning=()) -> ValidationSet:
        validation_set = ValidationSet.objects.create(judge=cls.judge_version.judge, seed=1)
        ValidationItem.objects.bulk_create(
            [ValidationItem(validation_set=validation_set, item=item, split="holdout") for item in holdout]
            + [ValidationItem(validation_set=validation_set, item=item, split="tuning") for item in tuning]
        )
        return validation_set

    def set_limits(self, *, min_items=None, threshold=None) -> None:
        changes = {"validation_min_items": min_items, "validation_threshold": threshold}
        JudgeVersion.objects.filter(id=self.judge_version.id).update(
            **{field: value for field, value in changes.items() if value is not None}
        )
        self.judge_version.refresh_from_db()


def judge(assignment, *, grade="resolved", answers=None, pending=False, addresses=True, **extra):
    """A reader's judgement through the real service."""
    return judgement_submit(
        assignment=assignment,
        author=assignment.reviewer,
        data=JudgementInput(
            addresses_question=addresses,
            rubric_answers=ALL_YES if answers is None else answers,
            grade=grade,
            pending=pending,
            # Every outcome but resolved needs a reason (spec 004).
            **{"note": "checked against the records", **extra},
        ),
        submission_key=uuid.uuid4(),
    )


class SettledOutcomeTests(ValidationTestCase):
    def setUp(self):
        self.reader_a = make_user("reader_a", "reviewer")
        self.reader_b = make_user("reader_b", "reviewer")
        self.sample = sample_draw(
            frame=Frame(run=self.logged_run), size=8, seed=3, rubric_version=self.rubric
        )
        sample_assign(sample=self.sample, reviewers=[self.reader_a, self.reader_b], readers_per_item=2)

    def both(self, position, **judgement):
        item = self.sample.items.get(position=position)
        for assignment in Assignment.objects.filter(item=item).order_by("reviewer_id"):
            judge(assignment, **judgement)
        return item

    def test_it_settles_agreeing_readers_and_lets_a_lead_decision_win(self):
        agreed = self.both(1)
        # A spot check audits agreeing readers; it leaves their outcome settled.
        SampleItem.objects.filter(id=agreed.id).update(spot_check=True)
        overruled = self.both(2)
        adjudication_submit(
            item=overruled,
            lead=self.lead,
            decision=Decision(
                reason="the period is wrong", grade="unresolved", rubric_answers={"period": "no"}
            ),
            submission_key=uuid.uuid4(),
        )
        not_addressed = self.both(7, addresses=False)
        settled = settled_outcomes(self.sample.items.all())
        self.assertEqual(
            settled,
            {
                agreed.id: Settled("resolved", ALL_YES, "readers"),
                overruled.id: Settled("unresolved", {"period": "no"}, "lead"),
                not_addressed.id: Settled("not_addressed", {}, "readers"),
            },
        )

    def test_it_does_not_settle_one_reader_disagreement_or_what_needs_a_lead(self):
        one = self.sample.items.get(position=3)
        judge(Assignment.objects.filter(item=one).first())
        graded_apart = self.sample.items.get(position=4)
        first, second = Assignment.objects.filter(item=graded_apart).order_by("reviewer_id")
        judge(first, grade="resolved")
        judge(second, grade="unresolved")
        material = self.both(5, grade="material_error", **MATERIAL)
        self.both(6, answers={**ALL_YES, "period": "no"})
        rubric_apart = self.sample.items.get(position=6)
        judge(Assignment.objects.get(item=rubric_apart, reviewer=self.reader_b))  # revises to all yes: apart
        self.both(8, grade="partially_resolved")
        self.assertEqual(settled_outcomes(self.sample.items.all()), {})
        # A lead settles the material error the readers raised.
        adjudication_submit(
            item=material,
            lead=self.lead,
            decision=Decision(reason="confirmed", grade="material_error", **MATERIAL),
            submission_key=uuid.uuid4(),
        )
        self.assertEqual(
            settled_outcomes(self.sample.items.all()), {material.id: Settled("material_error", {}, "lead")}
        )

    def test_it_never_settles_a_calibration_item(self):
        calibration = CalibrationItem.objects.create(group="g", form="short", question="q", answer="a")
        item = SampleItem.objects.create(
            sample=self.sample, calibration=calibration, stratum="calibration", position=9
        )
        self.decide(item)
        self.assertEqual(settled_outcomes([item]), {})


class ValidationSetDrawTests(ValidationTestCase):
    def setUp(self):
        self.items = self.sample_of(20)
        for item in self.items[:11]:
            self.decide(item)

    def split_of(self, validation_set) -> dict[int, str]:
        return dict(validation_set.items.values_list("item_id", "split"))

    def test_it_draws_a_seeded_split_of_every_settled_item(self):
        first = validation_set_draw(judge=self.judge_version.judge, seed=11, created_by=self.lead)
        again = validation_set_draw(judge=self.judge_version.judge, seed=11)
        self.assertEqual(set(self.split_of(first)), {item.id for item in self.items[:11]})
        self.assertEqual(self.split_of(first), self.split_of(again))
        self.assertEqual(list(self.split_of(first).values()).count("holdout"), 6)  # round(0.5 × 11)
        self.assertEqual((first.seed, first.holdout_share, first.created_by), (11, 0.5, self.lead))
        other_judge = judge_versions.judge_version_save(
            name="other", provider="stand-in", model="", metrics=["rubric"], rubric_version=rubric_default()
        )
        other = validation_set_draw(judge=other_judge.judge, seed=12, holdout_share=0.3)
        self.assertEqual(list(self.split_of(other).values()).count("holdout"), 3)  # round(0.3 × 11)

    def test_an_item_keeps_its_split_in_every_later_set_of_the_judge(self):
        first = self.split_of(validation_set_draw(judge=self.judge_version.judge, seed=11))
        for item in self.items[11:]:
            self.decide(item, "unresolved")
        later = self.split_of(validation_set_draw(judge=self.judge_version.judge, seed=99, holdout_share=0.2))
        # A tuning item never validates the judge later; only the nine new items are shuffled.
        self.assertEqual({item: later[item] for item in first}, first)
        new = [item.id for item in self.items[11:]]
        self.assertEqual([later[item] for item in new].count("holdout"), 2)  # round(0.2 × 9)

    def test_it_records_a_seed_it_chose(self):
        chosen = validation_set_draw(judge=self.judge_version.judge)
        again = validation_set_draw(judge=self.judge_version.judge, seed=chosen.seed)
        self.assertEqual(self.split_of(chosen), self.split_of(again))

    def test_a_later_draw_makes_a_new_set_and_leaves_the_old_one_as_it_was(self):
        old = validation_set_draw(judge=self.judge_version.judge, seed=5)
        drawn = self.split_of(old)
        for item in self.items[11:]:
            self.decide(item, "unresolved")
        # A later decision on an item of the old set changes nothing in it.
        self.decide(self.items[0], pending=True)
        new = validation_set_draw(judge=self.judge_version.judge, seed=5)
        self.assertNotEqual(new.id, old.id)
        self.assertEqual(len(self.split_of(new)), 20)
        old.refresh_from_db()
        self.assertEqual(self.split_of(old), drawn)
        self.assertEqual(judge_validation(judge_version=self.judge_version).validation_set, new)

    def test_an_answer_in_two_samples_counts_once(self):
        again = self.sample_of(1)[0]
        self.decide(again, "unresolved")
        drawn = self.split_of(validation_set_draw(judge=self.judge_version.judge, seed=1))
        self.assertEqual(len(drawn), 11)
        self.assertIn(self.items[0].id, drawn)

    def test_it_refuses_a_share_outside_zero_to_one_and_nothing_settled(self):
        for share in (0, 1, 1.5):
            with self.assertRaisesMessage(ApplicationError, "the holdout share is above 0 and below 1"):
                validation_set_draw(judge=self.judge_version.judge, holdout_share=share)
        Adjudication.objects.all().delete()
        with self.assertRaisesMessage(ApplicationError, "no sample item has a settled human outcome yet"):
            validation_set_draw(judge=self.judge_version.judge)
        self.assertFalse(ValidationSet.objects.exists())


class HandWorkedFiguresTests(ValidationTestCase):
    """Rows are people, columns the judge: [[20, 5], [10, 15]] on pass."""

    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        cls.items = cls.sample_of(50)
        judge_run = cls.judge_run()
        for position, item in enumerate(cls.items):
            cls.decide(item, "resolved" if position < 25 else "unresolved")
            judged_pass = position < 20 or 25 <= position < 35
            cls.grade(judge_run, item, "resolved" if judged_pass else "unresolved")
        cls.validation = judge_validation(
            judge_version=cls.judge_version, validation_set=cls.validation_set(cls.items)
        )

    def test_it_counts_the_matrix_and_percent_agreement(self):
        figures = self.validation.label("pass")
        self.assertEqual(
            (figures.categories, figures.matrix, figures.n), (("pass", "fail"), [[20, 5], [10, 15]], 50)
        )
        self.assertAlmostEqual(figures.percent, 0.70, places=12)
        grades = self.validation.label("grade")
        self.assertEqual(
            grades.categories, ("resolved", "partially_resolved", "material_error", "unresolved")
        )
        self.assertEqual(grades.matrix, [[20, 0, 0, 5], [0, 0, 0, 0], [0, 0, 0, 0], [10, 0, 0, 15]])

    def test_kappa_and_its_interval_match_a_computation_by_hand(self):
        figures = self.validation.label("pass")
        # po = 35/50 = 0.7; pe = 0.5 × 0.6 + 0.5 × 0.4 = 0.5; kappa = (0.7 - 0.5) / (1 - 0.5)
        self.assertAlmostEqual(figures.kappa, 0.4, places=12)
        # Kappa's posterior interval (scoring.stats.agreement.kappa_with_interval,
        # checked there): wider below than the normal interval's [0.1511, 0.6489].
        self.assertEqual((round(figures.kappa_low, 4), round(figures.kappa_upp, 4)), (0.1314, 0.6150))

    def test_alpha_and_the_error_rates_in_each_direction(self):
        figures = self.validation.label("pass")
        people = [0] * 25 + [1] * 25
        judged = [0] * 20 + [1] * 5 + [0] * 10 + [1] * 15
        expected = krippendorff.alpha(
            reliability_data=np.array([people, judged]), level_of_measurement="nominal"
        )
        self.assertAlmostEqual(figures.alpha, expected, places=12)
        passes, fails = figures.errors
        self.assertEqual(
            (passes.title, passes.k, passes.n, passes.rate), ("passes what people fail", 10, 25, 0.4)
        )
        self.assertEqual((fails.title, fails.k, fails.n, fails.rate), ("fails what people pass", 5, 25, 0.2))

    def test_it_is_not_validated_below_the_threshold_and_says_so(self):
        self.assertFalse(self.validation.validated)
        self.assertEqual(self.validation.missing, "kappa's lower bound 0.13 is not above 0.60")
        self.assertFalse(judge_is_validated(self.judge_version))
        self.assertEqual(validation_title(self.judge_version), UNCALIBRATED_TITLE)
        self.set_limits(threshold=0.1)
        self.assertTrue(judge_is_validated(self.judge_version))
        self.assertEqual(
            validation_title(self.judge_version), "validated against people (κ lower bound 0.13 on 50 items)"
        )


class ValidatedTests(ValidationTestCase):
    def setUp(self):
        self.items = self.sample_of(20)
        self.first_run = self.judge_run()
        for position, item in enumerate(self.items):
            grade = "resolved" if position % 2 else "unresolved"
            self.decide(item, grade)
            self.grade(self.first_run, item, grade)
        self.validation_set(self.items)

    def test_it_is_validated_when_both_conditions_hold(self):
        self.set_limits(min_items=20)
        validation = judge_validation(judge_version=self.judge_version)
        self.assertEqual((validation.validated, validation.missing), (True, ""))
        # 10 passes and 10 fails, all agreed: kappa 1, but its lower bound is
        # not 1 (the normal interval's was).
        self.assertEqual(round(validation.label("pass").kappa_low, 4), 0.6687)
        self.assertTrue(judge_is_validated(self.judge_version))
        self.assertEqual(
            validation_title(self.judge_version), "validated against people (κ lower bound 0.67 on 20 items)"
        )

    def test_it_says_when_there_are_too_few_items(self):
        validation = judge_validation(judge_version=self.judge_version)
        self.assertEqual((validation.validated, validation.missing), (False, "20 items, 50 needed"))
        self.assertFalse(judge_is_validated(self.judge_version))

    def test_it_says_both_conditions_when_both_fail(self):
        for item in self.items[:6]:
            self.grade(
                self.judge_run(), item, "resolved" if item.position % 2 else "unresolved"
            )  # latest wins
        validation = judge_validation(judge_version=self.judge_version)
        figures = validation.label("pass")
        self.assertEqual(figures.matrix, [[7, 3], [3, 7]])
        self.assertEqual(
            validation.missing,
            f"20 items, 50 needed; kappa's lower bound {figures.kappa_low:.2f} is not above 0.60",
        )
        self.assertLess(figures.kappa_low, 0.6)

    def test_it_says_when_no_validation_set_was_drawn(self):
        ValidationSet.objects.all().delete()
        validation = judge_validation(judge_version=self.judge_version)
        self.assertEqual((validation.validation_set, validation.labels), (None, ()))
        self.assertEqual((validation.validated, validation.missing), (False, NO_VALIDATION_SET))
        self.assertFalse(judge_is_validated(self.judge_version))

    def test_tuning_items_are_shown_but_never_validate(self):
        self.set_limits(min_items=20)
        tuning_items = self.sample_of(10)  # the same answers, so the same verdicts
        for item in tuning_items:
            self.decide(item, "resolved" if (item.position - 1) % 2 else "unresolved")
        validation_set = self.validation_set(holdout=self.items, tuning=tuning_items)
        tuning = judge_validation(
            judge_version=self.judge_version, validation_set=validation_set, split="tuning"
        )
        self.assertEqual((tuning.items, tuning.label("pass").n, tuning.label("pass").percent), (10, 10, 1.0))
        self.assertEqual(
            (tuning.validated, tuning.missing),
            (False, "tuning items do not validate a judge: only holdout items count"),
        )
        self.assertTrue(judge_is_validated(self.judge_version))
        with self.assertRaisesMessage(ApplicationError, "the split is tuning or holdout, not 'sealed'"):
            judge_validation(judge_version=self.judge_version, split="sealed")


class LabelsThatHardlyVaryTests(ValidationTestCase):
    """Issue 24, point 2: 49 passes and 1 fail, all agreed, read as "validated
    (kappa lower bound 1.00 on 50 items)" under the normal interval."""

    def setUp(self):
        self.items = self.sample_of(50)

    def holdout(self, *, fails: int, judge_fails: set[int]):
        """People fail the first ``fails`` items; the judge fails the items
        at the positions in ``judge_fails`` (counted from 0)."""
        judge_run = self.judge_run()
        for position, item in enumerate(self.items):
            self.decide(item, "unresolved" if position < fails else "resolved")
            self.grade(judge_run, item, "unresolved" if position in judge_fails else "resolved")
        self.validation_set(self.items)
        return judge_validation(judge_version=self.judge_version).label("pass")

    def test_it_does_not_validate_50_of_50_agreed_with_only_one_fail(self):
        figures = self.holdout(fails=1, judge_fails={0})
        self.assertEqual((figures.matrix, figures.percent, figures.kappa), ([[49, 0], [0, 1]], 1.0, 1.0))
        self.assertFalse(figures.validated)
        self.assertLess(figures.kappa_low, 0.6)
        self.assertLess(figures.kappa_low, figures.kappa_upp)
        self.assertLessEqual(figures.kappa_upp, 1.0)
        self.assertIn(
            "people's labels: 49 pass, 1 fail; validation needs at least 10 of each", figures.missing
        )
        self.assertFalse(judge_is_validated(self.judge_version))
        self.assertEqual(validation_title(self.judge_version), UNCALIBRATED_TITLE)

    def test_it_does_not_validate_49_of_50_agreed_with_only_one_fail(self):
        figures = self.holdout(fails=1, judge_fails={0, 1})
        self.assertEqual((figures.matrix, figures.percent), ([[48, 1], [0, 1]], 0.98))
        self.assertFalse(figures.validated)
        self.assertIn(
            "people's labels: 49 pass, 1 fail; validation needs at least 10 of each", figures.missing
        )

    def test_agreement_alone_does_not_validate_when_people_fail_only_five(self):
        # All 50 agreed: kappa's lower bound clears 0.60 here, but it rests
        # on five fails; the rule asks for ten of each label.
        figures = self.holdout(fails=5, judge_fails=set(range(5)))
        self.assertEqual(figures.matrix, [[45, 0], [0, 5]])
        self.assertGreater(figures.kappa_low, 0.6)
        self.assertEqual(
            (figures.validated, figures.missing),
            (False, "people's labels: 45 pass, 5 fail; validation needs at least 10 of each"),
        )

    def test_it_validates_49_of_50_agreed_when_people_gave_both_labels_often(self):
        figures = self.holdout(fails=25, judge_fails=set(range(26)))
        self.assertEqual(figures.matrix, [[24, 1], [0, 25]])
        self.assertEqual((figures.validated, figures.missing), (True, ""))
        self.assertTrue(judge_is_validated(self.judge_version))


class LabelTests(ValidationTestCase):
    def test_pending_unsettled_and_unjudged_items_are_left_out_and_each_rubric_question_is_a_label(self):
        items = self.sample_of(6)
        first_run, judge_run = self.judge_run(), self.judge_run()
        checked = {**ALL_YES, "period": "no", "caveat": "na", "unsupported_claim": "no"}
        self.decide(items[0], "resolved", answers=checked)
        self.grade(first_run, items[0], "unresolved")  # an earlier verdict: the latest counts
        self.grade(judge_run, items[0], "resolved", answers={**checked, "period": "yes"})
        self.decide(items[1], addresses=False)
        self.grade(judge_run, items[1], "unresolved")
        self.decide(items[2], pending=True)
        self.grade(judge_run, items[2], "resolved")
        self.decide(items[3], "resolved")
        self.grade(judge_run, items[3], "", error="the endpoint did not answer")
        self.grade(judge_run, items[4], "resolved")  # people have not settled it
        self.decide(
            items[5], "material_error", answers={**ALL_YES, "period": "no", "unsupported_claim": "no"}
        )
        self.grade(
            judge_run,
            items[5],
            "partially_resolved",
            answers={**ALL_YES, "period": "no", "caveat": "yes", "unsupported_claim": "no"},
        )
        validation = judge_validation(
            judge_version=self.judge_version, validation_set=self.validation_set(items)
        )
        self.assertEqual(
            (validation.items, validation.unsettled, validation.pending, validation.without_verdict),
            (6, 1, 1, 1),
        )
        self.assertEqual(
            [figures.label for figures in validation.labels],
            ["pass", "grade", *(f"rubric:{key}" for key in KEYS)],
        )
        self.assertEqual(validation.label("pass").matrix, [[1, 0], [0, 2]])
        self.assertEqual(
            validation.label("grade").matrix, [[1, 0, 0, 0], [0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1]]
        )
        period = validation.label("rubric:period")
        self.assertEqual(
            (period.title, period.categories), ("Rubric: Is it the right period?", ("yes", "no"))
        )
        self.assertEqual(
            (period.matrix, period.n, period.percent, period.kappa), ([[0, 0], [1, 1]], 2, 0.5, 0.0)
        )
        says_yes, says_no = period.errors
        self.assertEqual((says_yes.title, says_yes.k, says_yes.n), ("says yes where people say no", 1, 2))
        self.assertEqual(
            (says_no.k, says_no.n, says_no.rate, says_no.note), (0, 0, None, "people said yes on no item")
        )
        caveat = validation.label("rubric:caveat")
        self.assertEqual(
            (caveat.categories, caveat.matrix), (("yes", "no", "na"), [[1, 0, 0], [0, 0, 0], [0, 0, 1]])
        )
        unsupported = validation.label("rubric:unsupported_claim")
        self.assertEqual((unsupported.matrix, unsupported.percent), ([[0, 0], [0, 2]], 1.0))
        self.assertEqual((unsupported.kappa, unsupported.alpha), (None, None))
        self.assertEqual(
            unsupported.notes,
            {
                "kappa": "not defined when people and the judge give every item the same one category",
                "alpha": "not defined when every rating is the same category",
            },
        )

    def test_it_refuses_another_judges_validation_set(self):
        other = judge_versions.judge_version_save(
            name="other", provider="stand-in", model="", metrics=["rubric"], rubric_version=self.rubric
        )
        with self.assertRaisesMessage(ApplicationError, "was drawn for another judge, not other"):
            judge_validation(judge_version=other, validation_set=self.validation_set(self.sample_of(1)))


class RegradeTests(ValidationTestCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        cls.items = cls.sample_of(30)
        cls.sample = cls.items[0].sample
        for position, item in enumerate(cls.items):
            cls.decide(item, "resolved" if position < 15 else "unresolved")

    def graded_run(self, flipped: set[int]) -> JudgeRun:
        """A judge run agreeing with people except on the items at ``flipped``."""
        judge_run = self.judge_run(regrade_sample=self.sample)
        for position, item in enumerate(self.items):
            judged_pass = (position < 15) != (position in flipped)
            self.grade(judge_run, item, "resolved" if judged_pass else "unresolved")
        return judge_run

    def test_it_agrees_well_enough_and_sends_nothing_to_a_lead(self):
        judge_run = self.graded_run(set())
        figures = regrade_agreement(judge_run)
        self.assertEqual((figures.matrix, figures.n), ([[15, 0], [0, 15]], 30))
        self.assertGreater(figures.kappa_low, 0.6)
        self.assertEqual(regrade_disagreements(judge_run), [])

    def test_a_kappa_above_the_threshold_on_too_few_items_still_goes_to_a_lead(self):
        # Kappa 0.87 on 30 items, but its lower bound (0.56) is not above 0.6:
        # the regrade does not show the judge agrees well enough, as the
        # validation page would not, so a lead sees the two disagreements.
        judge_run = self.graded_run({0, 15})
        figures = regrade_agreement(judge_run)
        self.assertEqual((figures.matrix, figures.n), ([[14, 1], [1, 14]], 30))
        self.assertAlmostEqual(figures.kappa, (28 / 30 - 0.5) / 0.5, places=12)
        self.assertLess(figures.kappa_low, 0.6)
        self.assertEqual(regrade_disagreements(judge_run), [self.items[0], self.items[15]])

    def test_it_lists_the_disagreements_when_kappa_is_below_the_threshold(self):
        flipped = {0, 3, 6, 9, 12, 15, 18, 21, 24, 27}
        judge_run = self.graded_run(flipped)
        self.graded_run(set())  # another run's verdicts on the same items do not count
        figures = regrade_agreement(judge_run)
        self.assertEqual(figures.matrix, [[10, 5], [5, 10]])
        self.assertAlmostEqual(figures.kappa, 1 / 3, places=12)
        self.assertEqual(
            regrade_disagreements(judge_run), [self.items[position] for position in sorted(flipped)]
        )

    def test_it_falls_back_on_percent_agreement_when_kappa_is_undefined(self):
        Adjudication.objects.filter(item__in=self.items[15:]).delete()  # unsettled: left out
        judge_run = self.graded_run(set())
        figures = regrade_agreement(judge_run)
        self.assertEqual((figures.n, figures.kappa, figures.percent), (15, None, 1.0))
        self.assertEqual(regrade_disagreements(judge_run), [])

    def test_it_is_none_without_a_regrade_sample_or_a_rubric_judge(self):
        self.assertIsNone(regrade_agreement(self.judge_run()))
        self.assertEqual(regrade_disagreements(self.judge_run()), [])
        faithful = judge_versions.judge_version_save(
            name="faithful", provider="stand-in", model="", metrics=["faithfulness"]
        )
        self.assertIsNone(regrade_agreement(self.judge_run(versions=[faithful], regrade_sample=self.sample)))

    def test_it_reads_what_a_real_judge_run_stored(self):
        judge_run = judging.judge_run_estimate(judge_versions=[self.judge_version], run=self.logged_run)
        with self.captureOnCommitCallbacks(execute=True):
            judging.judge_run_confirm(judge_run=judge_run, draw_regrade=judging.regrade_draw)
        judge_run.refresh_from_db()
        regrade_items = list(judge_run.regrade_sample.items.order_by("position"))
        verdicts = dict(
            ModelVerdict.objects.filter(judge_run=judge_run, metric="rubric").values_list(
                "answer_id", "labels"
            )
        )
        # People agree with the judge on every item but the first eight.
        for position, item in enumerate(regrade_items):
            judged_pass = verdicts[item.answer_id]["grade"] == "resolved"
            self.decide(item, "resolved" if judged_pass == (position >= 8) else "unresolved")
        figures = regrade_agreement(judge_run)
        self.assertEqual((figures.n, sum(map(sum, figures.matrix))), (30, 30))
        self.assertAlmostEqual(figures.percent, 22 / 30, places=12)
        self.assertEqual(set(figures.differing_items), {item.id for item in regrade_items[:8]})
