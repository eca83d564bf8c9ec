"""Issue 31, point 5: input that gave a 500 gets a sentence beside its field
(or a 400/422 naming it), and nothing is stored."""


from django.test import TransactionTestCase
from django.urls import reverse

from reviewapp.core.errors import NUL_MESSAGE, ApplicationError
from reviewapp.models import Judge, Judgement, PairedJudgement, RubricVersion, SeverityWeights
from reviewapp.review.services.adjudication import calibration_add
from reviewapp.review.services.review import rubric_save
from tests.app.judges.test_views import judge_form
from tests.app.paired.test_views import PairedViewCase
from tests.app.paired.test_views import form as paired_form
from tests.app.review.test_views_review import ReviewTestCase, full_judgement
from tests.helpers import PASSWORD, BaseTestCase, make_user

NUL = "\x00"


class NulInTheReadersScreensTests(ReviewTestCase):
    def test_a_nul_in_a_judgement_note_is_shown_beside_the_note_and_nothing_is_saved(self):
        self.login(self.reader_a)
        first = self.mine(self.reader_a)[0]
        data = full_judgement(correctness="partially_correct", note=f"half{NUL}right")
        response = self.client.post(self.url(first), data, HTTP_HX_REQUEST="true")
        self.assertEqual(response.status_code, 200)
        self.assertContains(response, NUL_MESSAGE)
        self.assertFalse(Judgement.objects.filter(assignment=first).exists())
        plain = self.client.post(self.url(first), data)
        self.assertContains(plain, "note", status_code=400)
        self.assertFalse(Judgement.objects.filter(assignment=first).exists())


class NulInThePairedScreenTests(PairedViewCase):
    def test_a_nul_in_a_paired_note_is_shown_beside_it(self):
        client = self.as_user(self.reader)
        response = client.post(
            self.item_url(self.mine[0]), paired_form(note_2=f"off{NUL}"), HTTP_HX_REQUEST="true"
        )
        self.assertEqual(response.status_code, 200)
        self.assertContains(response, NUL_MESSAGE)
        self.assertFalse(PairedJudgement.objects.exists())


class NulInLeadFormsTests(BaseTestCase):
    def setUp(self):
        self.client.login(username="lead", password=PASSWORD)

    def test_judge_options_with_a_nul_nan_or_deep_nesting_are_refused_beside_the_field(self):
        for options, says in (
            ('{"stop": "\\u0000"}', "NUL character"),
            ('{"temperature": NaN}', "NaN is not a number an option can hold"),
            ('{"a": ' * 5000 + "1" + "}" * 5000, "nested"),
            ('{"a": ' * 12 + "1" + "}" * 12, "nested more than 8 levels"),
        ):
            response = self.client.post(reverse("judge-new"), judge_form(name="probe", options=options))
            self.assertContains(response, says, status_code=400)
        self.assertFalse(Judge.objects.filter(name="probe").exists())

    def test_a_count_past_what_the_column_holds_is_refused_beside_its_field(self):
        # Found by the form fuzz (test_form_fuzz.py): PostgreSQL's "integer out of range", a 500.
        response = self.client.post(
            reverse("judge-new"), judge_form(name="probe", validation_min_items="99999999999")
        )
        self.assertContains(response, "from 10 to 1,000,000 items", status_code=400)
        self.assertFalse(Judge.objects.filter(name="probe").exists())


class NulReachingTheDatabaseTests(TransactionTestCase):
    """What no form checks reaches PostgreSQL, which refuses it: the
    middleware's last word names the field (outside a test's transaction,
    as in production: the whole page)."""

    def test_severity_weights_with_a_nul_are_refused_naming_the_field(self):
        make_user("lead")
        self.client.login(username="lead", password=PASSWORD)
        response = self.client.post(
            reverse("severity"), {"field": "stratum", "weights": f"heal{NUL}th = 3", "default_weight": "1"}
        )
        self.assertContains(response, "The field weights holds a NUL character", status_code=400)
        self.assertContains(response, "<title>Not taken", status_code=400)
        self.assertFalse(SeverityWeights.objects.exists())


class LengthsProseFitsTests(BaseTestCase):
    def test_a_rubric_question_of_a_thousand_characters_is_kept_and_a_longer_one_refused(self):
        prose = "Does the answer give the figure the source states, for the period asked? " * 15
        question = prose[:1000]
        version = rubric_save(
            name="Prose", guidance="", awkward_cases=[], questions=[{"key": "figure", "text": question}]
        )
        self.assertEqual(version.questions.get().text, question)
        for questions, name, says in (
            (
                [{"key": "figure", "text": question + "?"}],
                "Longer",
                "question 1: its question is 1,001 characters",
            ),
            ([{"key": "k" * 41, "text": "Fine?"}], "Long key", "question 1: its key is 41 characters"),
            ([{"key": "fine", "text": "Fine?"}], "n" * 201, "the name is 201 characters"),
        ):
            with self.assertRaisesMessage(ApplicationError, says):
                rubric_save(name=name, guidance="", awkward_cases=[], questions=questions)
        self.assertEqual(RubricVersion.objects.filter(rubric__name__in=["Longer", "Long key"]).count(), 0)

    def test_the_rubric_page_says_so_beside_the_form(self):
        self.client.login(username="lead", password=PASSWORD)
        response = self.client.post(
            reverse("rubric-new"), {"name": "Too long", "guidance": "", "questions": f"fig | {'x' * 1001}"}
        )
        self.assertContains(response, "its question is 1,001 characters", status_code=400)


class CalibrationRecordTests(ReviewTestCase):
    def test_nan_or_infinity_in_a_records_values_is_refused_with_where(self):
        for value in (float("nan"), float("inf")):
            with self.assertRaisesMessage(
                ApplicationError, "evidence[0]['values']['rate']: NaN and infinity"
            ):
                calibration_add(
                    sample=self.sample,
                    group="g",
                    question="What was the rate?",
                    evidence=[{"source_id": "s1", "values": {"rate": value}}],
                    variants={"plain": "It was 5 %.", "reworded": "Five per cent."},
                )
        self.assertFalse(self.sample.items.filter(calibration__isnull=False).exists())
