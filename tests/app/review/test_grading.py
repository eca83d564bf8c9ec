"""Spec 004's grading: the grade from the material-error answer and the two
primary metrics, the contradictions refused, the reasons required, the
mapping of outcomes recorded before the metrics, and the rubric pass."""

import importlib
import uuid

from django.apps import apps as django_apps
from django.test import SimpleTestCase

from reviewapp.models import Adjudication, Assignment, Judgement
from reviewapp.review.services import grading
from reviewapp.review.services.adjudication import Decision, adjudication_submit
from reviewapp.review.services.review import JudgementInput, OutcomeRefused, judgement_submit, rubric_default
from reviewapp.review.services.samples import Frame, sample_assign, sample_draw
from tests.fixtures import load_generated_run
from tests.helpers import BaseTestCase, make_user

KEYS = ("series", "period", "unit", "caveat", "unsupported_claim")
MATERIAL = {
    "error_claim": "the rate was 35",
    "error_evidence": "the record holds 41",
    "error_effect": "understates the rate",
    "error_kind": "wrong_conclusion",
}
migration = importlib.import_module("reviewapp.migrations.0018_primary_metrics")

# (material error, core conclusion, request) -> (outcome, the rule that decides it); one case or
# more per row of grading.GRADE_RULES, in its order.
TABLE = [
    (("yes", "correct", "full"), ("material_error", "error_decides")),
    (("yes", "no_gradable_conclusion", "not_met"), ("material_error", "error_decides")),  # a wrong refusal
    (("yes", "", ""), ("material_error", "error_decides")),
    (("pending", "correct", "full"), ("pending", "error_unchecked")),
    (("no", "material_error", "full"), ("refused", "wrong_conclusion_is_an_error")),
    (("no", "pending", "full"), ("pending", "conclusion_unchecked")),
    (("no", "correct", "pending"), ("pending", "fulfilment_unchecked")),
    (("no", "correct", "full"), ("resolved", "all_delivered")),
    (("no", "correct", "partial"), ("partially_resolved", "part_delivered")),
    (("no", "correct", "not_met"), ("unresolved", "nothing_delivered")),
    (("no", "no_gradable_conclusion", "not_met"), ("unresolved", "nothing_delivered")),
    (("no", "no_gradable_conclusion", "full"), ("refused", "delivery_needs_content")),
    (("no", "no_gradable_conclusion", "partial"), ("refused", "delivery_needs_content")),
]


def outcome_of(graded: grading.Graded) -> str:
    return "refused" if graded.refused else graded.outcome


class GradeTableTests(SimpleTestCase):
    def test_it_grades_each_row_of_the_table(self):
        for (material_error, correctness, fulfilment), (outcome, rule) in TABLE:
            with self.subTest(material_error=material_error, correctness=correctness, fulfilment=fulfilment):
                graded = grading.grade_from_metrics(
                    material_error=material_error, correctness=correctness, fulfilment=fulfilment
                )
                self.assertEqual((outcome_of(graded), graded.rule.key), (outcome, rule))
        self.assertEqual(
            [rule.key for rule in grading.GRADE_RULES], list(dict.fromkeys(rule for _, (_, rule) in TABLE))
        )

    def test_it_grades_nothing_while_a_metric_is_missing(self):
        graded = grading.grade_from_metrics(material_error="no", correctness="correct", fulfilment="")
        self.assertEqual((graded.grade, graded.pending, graded.rule), ("", False, None))

    def test_it_reads_a_blank_material_error_as_none_raised(self):
        graded = grading.grade_from_metrics(material_error="", correctness="correct", fulfilment="partial")
        self.assertEqual(graded.grade, "partially_resolved")

    def test_it_grades_an_answer_off_the_question_by_its_material_error_alone(self):
        for material_error, outcome in (
            ("yes", "material_error"),
            ("no", "unresolved"),
            ("pending", "pending"),
        ):
            assessed = grading.assess(
                addresses_question=False,
                material_error=material_error,
                correctness="correct",
                fulfilment="full",
            )
            self.assertEqual(
                (
                    assessed.metrics.correctness,
                    assessed.metrics.fulfilment,
                    assessed.graded.outcome,
                    assessed.errors,
                ),
                ("no_gradable_conclusion", "not_met", outcome, {}),
            )

    def test_it_refuses_a_grade_the_answers_contradict_quoting_the_rule(self):
        assessed = grading.assess(
            addresses_question=True,
            material_error="yes",
            correctness="correct",
            fulfilment="full",
            stated_grade="resolved",
        )
        self.assertEqual(
            assessed.errors,
            {
                "grade": "“resolved” does not follow from the answers given, which make it material error. "
                "The rule: “A material error decides the grade by itself: whatever the answer gets right does "
                "not make up for a key error, so errors are looked for before coverage.”"
            },
        )
        assessed = grading.assess(
            addresses_question=True,
            material_error="no",
            correctness="no_gradable_conclusion",
            fulfilment="full",
        )
        self.assertEqual(
            assessed.errors,
            {
                "grade": "These answers contradict each other. The rule: “Delivering the request, in full or in "
                "part, takes content whose correctness can be judged: with no gradable conclusion the request "
                "is not met.”"
            },
        )

    def test_it_asks_for_the_metrics_unless_a_material_error_decides_the_grade(self):
        assessed = grading.assess(addresses_question=True, material_error="", correctness="", fulfilment="")
        self.assertEqual(set(assessed.errors), {"material_error", "correctness", "fulfilment"})
        assessed = grading.assess(
            addresses_question=True, material_error="yes", correctness="", fulfilment=""
        )
        self.assertEqual((assessed.errors, assessed.graded.grade), ({}, "material_error"))

    def test_it_reads_a_grade_given_alone_as_the_metrics_it_stands_for(self):
        for grade, pending, expected in (
            ("resolved", False, ("no", "correct", "full", "resolved")),
            ("partially_resolved", False, ("no", "correct", "partial", "partially_resolved")),
            ("unresolved", False, ("no", "", "not_met", "unresolved")),
            ("material_error", False, ("yes", "", "", "material_error")),
            ("", True, ("", "pending", "pending", "pending")),
        ):
            assessed = grading.assess(
                addresses_question=True,
                material_error="",
                correctness="",
                fulfilment="",
                stated_grade=grade,
                stated_pending=pending,
            )
            metrics = assessed.metrics
            self.assertEqual(
                (metrics.material_error, metrics.correctness, metrics.fulfilment, assessed.graded.outcome),
                expected,
            )
            self.assertEqual(assessed.errors, {})


class MigrationMappingTests(SimpleTestCase):
    def test_it_maps_each_old_grade_to_what_it_stands_for(self):
        mapping = migration.metrics_from_grade
        cases = [
            ({"grade": "resolved"}, ("no", "correct", "full")),
            ({"grade": "partially_resolved"}, ("no", "correct", "partial")),
            ({"grade": "material_error"}, ("yes", "", "")),
            ({"grade": "unresolved"}, ("no", "", "not_met")),
            ({"grade": "", "pending": True}, ("", "pending", "pending")),
            ({"grade": "", "addresses_question": False}, ("", "no_gradable_conclusion", "not_met")),
            # A lead's confirmation counts, even on an answer off the question.
            ({"grade": "material_error", "addresses_question": False}, ("yes", "", "")),
            ({"grade": "resolved", "material_status": "confirmed"}, ("yes", "", "")),
            ({"grade": "resolved", "material_status": "dismissed"}, ("no", "correct", "full")),
            ({"grade": ""}, ("", "", "")),
        ]
        for old, expected in cases:
            arguments = {"pending": False, "addresses_question": True, **old}
            with self.subTest(**arguments):
                values = mapping(**arguments)
                self.assertEqual(
                    (values["material_error"], values["correctness"], values["fulfilment"]), expected
                )
                # The services read a grade given alone the same way.
                self.assertEqual(grading.metrics_from_grade(**arguments), values)


class GradingTestCase(BaseTestCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        run = load_generated_run(answers=20, seed=7)
        cls.reader = make_user("reader", "reviewer")
        cls.rubric = rubric_default()
        cls.sample = sample_draw(frame=Frame(run=run), size=5, seed=3, rubric_version=cls.rubric)
        sample_assign(sample=cls.sample, reviewers=[cls.reader])

    def assignment(self, position: int) -> Assignment:
        return Assignment.objects.get(item__sample=self.sample, item__position=position)

    def submit(self, position: int = 1, **fields) -> Judgement:
        data = {"addresses_question": True, "rubric_answers": dict.fromkeys(KEYS, "yes"), **fields}
        return judgement_submit(
            assignment=self.assignment(position),
            author=self.reader,
            data=JudgementInput(**data),
            submission_key=uuid.uuid4(),
        )


class ReasonTests(GradingTestCase):
    def test_it_refuses_every_outcome_but_resolved_without_a_reason(self):
        for fields, label in (
            (
                {"material_error": "no", "correctness": "correct", "fulfilment": "partial"},
                "partially resolved",
            ),
            ({"material_error": "no", "correctness": "correct", "fulfilment": "not_met"}, "unresolved"),
            (
                {"material_error": "pending", "correctness": "correct", "fulfilment": "full"},
                "pending verification",
            ),
            ({"grade": "unresolved"}, "unresolved"),
        ):
            with self.subTest(label=label), self.assertRaises(OutcomeRefused) as refused:
                self.submit(note=" ", **fields)
            self.assertEqual(
                refused.exception.fields,
                {
                    "note": f"Say why it is {label}: every outcome but resolved needs a reason another reader can check."
                },
            )
        self.assertFalse(Judgement.objects.exists())

    def test_it_takes_a_resolved_item_without_a_note_and_a_material_errors_record_as_its_reason(self):
        resolved = self.submit(material_error="no", correctness="correct", fulfilment="full")
        error = self.submit(position=2, material_error="yes", correctness="material_error", **MATERIAL)
        self.assertEqual((resolved.grade, resolved.note), ("resolved", ""))
        self.assertEqual((error.grade, error.note, error.fulfilment), ("material_error", "", ""))


class GradingOrderTests(GradingTestCase):
    def test_it_keeps_a_material_error_in_a_wrong_refusal_off_the_question(self):
        judgement = self.submit(addresses_question=False, material_error="yes", **MATERIAL)
        self.assertEqual(
            (judgement.grade, judgement.pending, judgement.rubric_answers, judgement.error_claim),
            ("material_error", False, {}, "the rate was 35"),
        )
        decision = adjudication_submit(
            item=judgement.assignment.item,
            lead=self.lead,
            decision=Decision(
                reason="41 is in the record", addresses_question=False, material_error="yes", **MATERIAL
            ),
            submission_key=uuid.uuid4(),
        )
        self.assertEqual(
            (decision.grade, decision.material_status, decision.correctness, decision.fulfilment),
            ("material_error", "confirmed", "no_gradable_conclusion", "not_met"),
        )

    def test_a_refusal_is_graded_as_the_guide_says(self):
        # The records lack the level asked for and the answer says so: its conclusion is right, the request met.
        justified = self.submit(material_error="no", correctness="correct", fulfilment="full")
        # The data could answer, and the answer declined: no conclusion, nothing delivered.
        wrong = self.submit(
            position=2,
            material_error="no",
            correctness="no_gradable_conclusion",
            fulfilment="not_met",
            note="the record holds the figure asked for",
        )
        self.assertEqual((justified.grade, wrong.grade), ("resolved", "unresolved"))

    def test_it_makes_one_judgement_of_a_double_submit(self):
        key = uuid.uuid4()
        data = JudgementInput(
            addresses_question=True,
            rubric_answers=dict.fromkeys(KEYS, "yes"),
            material_error="no",
            correctness="correct",
            fulfilment="full",
        )
        for _ in range(2):
            judgement_submit(assignment=self.assignment(1), author=self.reader, data=data, submission_key=key)
        self.assertEqual(Judgement.objects.count(), 1)


class MigrationFillTests(GradingTestCase):
    def test_it_fills_the_new_fields_of_existing_outcomes_from_their_grades(self):
        resolved = self.submit(grade="resolved")
        partial = self.submit(position=2, grade="partially_resolved", note="no caveat")
        pending = self.submit(position=3, pending=True, note="not out yet")
        off = self.submit(position=4, addresses_question=False, grade="", material_error="no", note="off")
        confirmed = adjudication_submit(
            item=off.assignment.item,
            lead=self.lead,
            decision=Decision(reason="wrong", addresses_question=False, grade="material_error", **MATERIAL),
            submission_key=uuid.uuid4(),
        )
        blank = {"material_error": "", "correctness": "", "fulfilment": ""}
        Judgement.objects.update(**blank)
        Adjudication.objects.update(**blank)
        migration.fill_metrics(django_apps, None)

        def metrics(row):
            row.refresh_from_db()
            return (row.material_error, row.correctness, row.fulfilment)

        self.assertEqual(metrics(resolved), ("no", "correct", "full"))
        self.assertEqual(metrics(partial), ("no", "correct", "partial"))
        self.assertEqual(metrics(pending), ("", "pending", "pending"))
        self.assertEqual(metrics(off), ("", "no_gradable_conclusion", "not_met"))
        self.assertEqual(metrics(confirmed), ("yes", "", ""))


class PassesRubricTests(GradingTestCase):
    def test_it_passes_on_no_for_unsupported_claims_and_yes_or_na_for_the_rest(self):
        passing = {**dict.fromkeys(KEYS, "yes"), "caveat": "na", "unsupported_claim": "no"}
        cases = [
            (passing, True),
            ({**passing, "unsupported_claim": "yes"}, False),
            ({**passing, "period": "no"}, False),
            ({**passing, "unit": ""}, None),
            ({key: value for key, value in passing.items() if key != "series"}, None),
            ({}, None),
        ]
        for answers, expected in cases:
            with self.subTest(answers=answers):
                outcome = Judgement(addresses_question=True, rubric_answers=answers)
                self.assertIs(grading.passes_rubric(outcome, self.rubric), expected)
        off = Judgement(addresses_question=False, rubric_answers=passing)
        self.assertIsNone(grading.passes_rubric(off, self.rubric))
        decision = Adjudication(addresses_question=True, rubric_answers=passing)
        self.assertIs(grading.passes_rubric(decision, self.rubric), True)
