"""Input the app refuses with a clear 4xx naming the field or the line,
where it used to answer 500 (issue 10, "Errors")."""

import gzip
import io
import json
import threading
import uuid
import zipfile

from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import RequestFactory, TestCase, TransactionTestCase
from django.test.client import ClientHandler
from django.urls import reverse

from reviewapp.core import files
from reviewapp.core.errors import ApplicationError
from reviewapp.models import Adjudication, ApiToken, AssistantVersion, QuestionSet, Run, SetVersion
from reviewapp.review.services.adjudication import (
    Decision,
    DecisionConflict,
    adjudication_submit,
    calibration_add,
)
from reviewapp.review.services.review import rubric_default
from reviewapp.review.services.samples import Frame, sample_assign, sample_draw
from tests.fixtures import load_generated_run
from tests.helpers import PASSWORD, BaseTestCase, example_answers, example_file, jsonl, make_user

RUN_FILE = "answers_run_assistant-1.3_set-1.2.jsonl"
SET_FILE = "questions_set-1.2.jsonl"
QUESTION = {"question_id": "q1", "language": "en", "expected_behaviour": "answer", "expected_values": [1.0]}
LABEL_RULE = (
    "a label holds only ASCII letters, digits, '.', '_', '-' and '+', starting with a letter or a digit"
)


def upload(name: str, content: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content)


class ErrorsTestCase(TestCase):
    def setUp(self):
        self.lead = make_user("lead")
        self.client.force_login(self.lead)
        _, key = ApiToken.issue(user=self.lead, name="ci")
        self.auth = {"HTTP_AUTHORIZATION": f"Bearer {key}"}

    def api(self, path, data):
        with self.captureOnCommitCallbacks(execute=True):
            return self.client.post(path, data, **self.auth)

    def web(self, name, data):
        with self.captureOnCommitCallbacks(execute=True):
            return self.client.post(reverse(name), data)

    def upload_example_set(self):
        self.assertEqual(self.api("/api/question-sets", {"file": example_file(SET_FILE)}).status_code, 201)

    def run_with(self, *answers, **fields):
        """Upload answers to set 1.2 through the API; the run, once ingested."""
        response = self.api(
            "/api/runs", {"file": jsonl(*answers), "assistant_version": "a-1", "set_version": "1.2", **fields}
        )
        self.assertEqual(response.status_code, 201, response.content)
        return Run.objects.get(id=response.json()["id"])


class VersionLabelTests(ErrorsTestCase):
    def test_it_refuses_a_nul_in_the_assistant_version_through_the_api(self):
        self.upload_example_set()
        response = self.api(
            "/api/runs",
            {"file": jsonl(example_answers()[0]), "assistant_version": "a\x00b", "set_version": "1.2"},
        )
        self.assertEqual(response.status_code, 400)
        self.assertEqual(
            response.json()["errors"],
            [f'assistant_version: "a\\u0000b" holds the NUL character (\\u0000); {LABEL_RULE}'],
        )
        self.assertEqual((Run.objects.count(), AssistantVersion.objects.count()), (0, 0))

    def test_it_refuses_a_300_character_assistant_version_through_the_api(self):
        self.upload_example_set()
        response = self.api(
            "/api/runs",
            {"file": jsonl(example_answers()[0]), "assistant_version": "a" * 300, "set_version": "1.2"},
        )
        self.assertEqual(response.status_code, 400)
        self.assertEqual(
            response.json()["errors"], ["assistant_version: 300 characters long, more than the 100 allowed"]
        )

    def test_it_refuses_a_label_with_a_slash_so_the_versions_page_stays_up(self):
        self.upload_example_set()
        response = self.api(
            "/api/runs",
            {"file": jsonl(example_answers()[0]), "assistant_version": "slash/probe-1", "set_version": "1.2"},
        )
        self.assertEqual(response.status_code, 400)
        self.assertEqual(
            response.json()["errors"], [f"assistant_version: \"slash/probe-1\" holds '/'; {LABEL_RULE}"]
        )
        self.assertEqual(self.client.get(reverse("version-list")).status_code, 200)

    def test_it_names_the_form_field_on_the_upload_page(self):
        self.upload_example_set()
        for value, message in (
            ("a" * 300, "Ensure this value has at most 100 characters (it has 300)."),
            ("a\x00b", "Null characters are not allowed."),
            ("slash/probe-1", f"Not a version label: \"slash/probe-1\" holds '/'; {LABEL_RULE}."),
        ):
            with self.subTest(value=value):
                response = self.web(
                    "run-upload", {"file": jsonl(example_answers()[0]), "assistant_version": value}
                )
                self.assertEqual(response.status_code, 400)
                self.assertIn(message, response.context["form"].errors["assistant_version"])
        self.assertEqual(Run.objects.count(), 0)

    def test_it_names_the_header_line_that_gives_a_bad_version(self):
        self.upload_example_set()
        header = {"assistant_version": "x" * 300, "set_version": "1.2"}
        response = self.api("/api/runs", {"file": jsonl(header, example_answers()[0], name="log.jsonl")})
        self.assertEqual(response.status_code, 400)
        self.assertEqual(
            response.json()["errors"],
            ["log.jsonl: line 1, field assistant_version: 300 characters long, more than the 100 allowed"],
        )

    def test_it_refuses_a_bad_set_version_and_set_name_for_a_question_set(self):
        for fields, error in (
            ({"version": "v\x00"}, f'version: "v\\u0000" holds the NUL character (\\u0000); {LABEL_RULE}'),
            ({"version": "9" * 300}, "version: 300 characters long, more than the 100 allowed"),
            (
                {"version": "v1", "set_name": "bad\x00name"},
                'set_name: "bad\\u0000name" holds the NUL character (\\u0000); a set name holds only '
                "ASCII letters, digits, '.', '_', '-' and '+', starting with a letter or a digit, and spaces inside",
            ),
        ):
            with self.subTest(fields=fields):
                response = self.api(
                    "/api/question-sets", {"file": jsonl(QUESTION, name="qs.jsonl"), **fields}
                )
                self.assertEqual(response.status_code, 400)
                self.assertEqual(response.json()["errors"], [error])
        self.assertEqual((SetVersion.objects.count(), QuestionSet.objects.count()), (0, 0))

    def test_it_answers_400_for_a_set_version_holding_nul(self):
        self.assertContains(self.client.get("/sets/a%00b/"), "NUL character", status_code=400)

    def test_it_names_a_bad_set_version_in_a_question_set_header(self):
        response = self.api(
            "/api/question-sets", {"file": jsonl({"set_version": "a b"}, QUESTION, name="qs.jsonl")}
        )
        self.assertEqual(response.status_code, 400)
        self.assertEqual(
            response.json()["errors"],
            [f'qs.jsonl: line 1, field set_version: "a b" holds a space; {LABEL_RULE}'],
        )


class QuestionSetLineTests(ErrorsTestCase):
    CASES = (
        (
            {"question_id": "q\x00"},
            "question_id",
            "holds the NUL character (\\u0000), which cannot be stored: remove it",
        ),
        ({"question_id": "q" * 300}, "question_id", "300 characters long, more than the 200 allowed"),
        (
            {"question_id": "a\tb"},
            "question_id",
            '"a\\tb" holds the control character U+0009; an id holds only printable characters',
        ),
        (
            {"language": "e" * 300},
            "language",
            '"eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"… is not a language code such as en, fr or pt-BR (at most 20 characters)',
        ),
        (
            {"question": "a\x00b"},
            "question",
            "holds the NUL character (\\u0000), which cannot be stored: remove it",
        ),
        ({"stratum": "s" * 300}, "stratum", "300 characters long, more than the 100 allowed"),
        ({"expected_unit": "u" * 300}, "expected_unit", "300 characters long, more than the 200 allowed"),
    )

    def test_it_names_the_line_and_field_through_the_api(self):
        for change, field, message in self.CASES:
            with self.subTest(field=field, message=message):
                file = jsonl(QUESTION | {"question_id": "q0"}, QUESTION | change, name="qs.jsonl")
                response = self.api("/api/question-sets", {"file": file, "version": "v1"})
                self.assertEqual(response.status_code, 400)
                self.assertEqual(response.json()["errors"], [f"qs.jsonl: line 2, field {field}: {message}"])
        self.assertEqual(SetVersion.objects.count(), 0)

    def test_it_names_the_line_and_field_on_the_page(self):
        response = self.web(
            "set-list",
            {"file": jsonl(QUESTION | {"question_id": "q" * 300}, name="qs.jsonl"), "version": "v1"},
        )
        self.assertContains(
            response,
            "qs.jsonl: line 1, field question_id: 300 characters long, more than the 200 allowed",
            status_code=400,
        )


class RunLineTests(ErrorsTestCase):
    def setUp(self):
        super().setUp()
        self.upload_example_set()
        self.answer = example_answers()[0]

    def test_it_rejects_bad_ids_and_languages_with_their_line_and_field(self):
        run = self.run_with(
            self.answer | {"question_id": "q" * 300},
            self.answer | {"question_id": "a02", "language": "english (uk)"},
            self.answer | {"question_id": "a03", "answer": "nul \x00 here"},
        )
        self.assertEqual(run.status, "rejected")
        self.assertEqual(
            run.line_errors,
            [
                {
                    "line": 1,
                    "field": "question_id",
                    "message": "300 characters long, more than the 200 allowed",
                },
                {
                    "line": 2,
                    "field": "language",
                    "message": '"english (uk)" is not a language code such as en, fr or pt-BR (at most 20 characters)',
                },
                {
                    "line": 3,
                    "field": "answer",
                    "message": "holds the NUL character (\\u0000), which cannot be stored: remove it",
                },
            ],
        )
        self.assertEqual(run.answers.count(), 0)

    def test_it_refuses_an_answer_line_over_the_size_limit(self):
        long_answer = self.answer | {"question_id": "a02", "answer": "x" * (101 * 1024)}
        run = self.run_with(self.answer, long_answer)
        self.assertEqual(run.status, "rejected")
        self.assertEqual(
            run.line_errors,
            [
                {
                    "line": 2,
                    "field": None,
                    "message": "the line is 101 KB, longer than the limit of 100 KB a line (REVIEWAPP_MAX_ANSWER_KB)",
                }
            ],
        )

    def test_it_refuses_a_five_megabyte_answer_without_scoring_it(self):
        with self.settings(MAX_ANSWER_BYTES=2048):
            run = self.run_with(self.answer | {"answer": "7.6 " * (5 * 1024 * 1024 // 4)})
        self.assertEqual(run.status, "rejected")
        # 1,310,720 × "7.6 " = 5,242,880 bytes = 5,120 KB, plus the line's other fields.
        self.assertEqual(
            run.line_errors,
            [
                {
                    "line": 1,
                    "field": None,
                    "message": "the line is 5,120 KB, longer than the limit of 2.0 KB a line "
                    "(REVIEWAPP_MAX_ANSWER_KB)",
                }
            ],
        )
        self.assertEqual((run.answers.count(), run.scorings.count()), (0, 0))

    def test_it_refuses_a_question_line_over_the_size_limit(self):
        with self.settings(MAX_ANSWER_BYTES=1024):
            response = self.api(
                "/api/question-sets",
                {"file": jsonl(QUESTION | {"question": "q" * 2000}, name="qs.jsonl"), "version": "v1"},
            )
        self.assertEqual(response.status_code, 400)
        self.assertEqual(
            response.json()["errors"],
            [
                "qs.jsonl: line 1: the line is 2.1 KB, longer than the limit of 1.0 KB a line (REVIEWAPP_MAX_ANSWER_KB)"
            ],
        )


class FileEncodingTests(ErrorsTestCase):
    def test_it_names_a_utf16_file_through_the_api_and_the_page(self):
        text = example_file(SET_FILE).read().decode()
        for encoding in ("utf-16", "utf-16-le"):
            with self.subTest(encoding=encoding):
                response = self.api("/api/question-sets", {"file": upload(SET_FILE, text.encode(encoding))})
                self.assertEqual(response.status_code, 400)
                self.assertEqual(
                    response.json()["errors"], [f"{SET_FILE}: this file is UTF-16: save it as UTF-8"]
                )
        response = self.web("run-upload", {"file": upload(RUN_FILE, text.encode("utf-16"))})
        self.assertContains(response, "this file is UTF-16: save it as UTF-8", status_code=400)
        self.assertEqual(SetVersion.objects.count(), 0)

    def test_it_takes_gzip_files_decompressed_as_it_stores_them(self):
        self.assertEqual(
            self.api(
                "/api/question-sets",
                {"file": upload(f"{SET_FILE}.gz", gzip.compress(example_file(SET_FILE).read()))},
            ).status_code,
            201,
        )
        plain = example_file(RUN_FILE).read()
        response = self.api("/api/runs", {"file": upload(f"{RUN_FILE}.gz", gzip.compress(plain))})
        self.assertEqual(response.status_code, 201)
        run = Run.objects.get()
        self.assertEqual((run.status, run.answer_count, run.file_name), ("stored", 8, RUN_FILE))
        with open(files.storage().path(run.stored_name), "rb") as stored:
            self.assertEqual(stored.read(), plain)
        # The same answers, plain this time, are the same run.
        again = self.api("/api/runs", {"file": upload(RUN_FILE, plain)})
        self.assertEqual((again.status_code, again.json()["id"]), (200, run.id))

    def test_it_counts_the_size_limit_on_the_decompressed_file(self):
        with self.settings(MAX_UPLOAD_BYTES=1000):
            response = self.api(
                "/api/question-sets", {"file": upload(f"{SET_FILE}.gz", gzip.compress(b" " * 5000))}
            )
        self.assertEqual(response.status_code, 413)
        self.assertEqual(
            response.json()["errors"], [f"{SET_FILE}: the file is larger uncompressed than the limit of 0 MB"]
        )

    def test_it_names_a_broken_gzip_file_and_a_zip_archive(self):
        broken = gzip.compress(example_file(SET_FILE).read())[:-20]
        response = self.api("/api/question-sets", {"file": upload("qs.jsonl.gz", broken)})
        self.assertEqual(response.status_code, 400)
        self.assertEqual(
            response.json()["errors"],
            [
                "qs.jsonl: this file is gzip-compressed but cannot be read: "
                "Compressed file ended before the end-of-stream marker was reached"
            ],
        )
        archive = io.BytesIO()
        with zipfile.ZipFile(archive, "w") as zipped:
            zipped.writestr(SET_FILE, example_file(SET_FILE).read())
        response = self.api("/api/question-sets", {"file": upload("qs.zip", archive.getvalue())})
        self.assertEqual(response.status_code, 400)
        self.assertEqual(SetVersion.objects.count(), 0)
        self.assertEqual(
            response.json()["errors"],
            ["qs.zip: this file is a zip archive: decompress it (unzip) and upload the .jsonl inside"],
        )


class UndeclaredLengthTests(ErrorsTestCase):
    """Django reads a body without Content-Length (a chunked upload) as
    empty; the app says so instead of "Field required" or a CSRF failure."""

    def send_without_length(self, path, data, **extra):
        request = RequestFactory().post(path, data, **extra)
        environ = dict(request.environ)
        del environ["CONTENT_LENGTH"]
        environ["HTTP_TRANSFER_ENCODING"] = "chunked"
        return ClientHandler(enforce_csrf_checks=True)(environ)

    def test_it_refuses_an_api_upload_without_content_length(self):
        response = self.send_without_length("/api/runs", {"file": example_file(RUN_FILE)}, **self.auth)
        self.assertEqual(response.status_code, 411)
        self.assertEqual(
            json.loads(response.content)["errors"],
            [
                "the request has no Content-Length (a chunked upload?): send the file with its length, "
                "as browsers and curl -F do"
            ],
        )

    def test_it_refuses_a_page_upload_without_content_length_before_the_csrf_check(self):
        response = self.send_without_length(reverse("run-upload"), {"file": example_file(RUN_FILE)})
        self.assertEqual(response.status_code, 411)
        self.assertIn(b"The request has no Content-Length", response.content)


class AgreementDatesTests(ErrorsTestCase):
    def test_it_answers_a_date_that_is_not_one_with_a_form_error(self):
        for query, message in (
            ("from=abc", "from: Enter a valid date."),
            ("from=2024-13-45", "from: Enter a valid date."),
            ("to=0001-01-01", "to: Give a date between the years 1900 and 2999."),
            ("from=2024-05-01&to=2024-04-01", "The first day comes after the last."),
        ):
            with self.subTest(query=query):
                response = self.client.get(f"{reverse('agreement')}?{query}")
                self.assertContains(response, message, status_code=400)
                self.assertEqual(response.context["date_errors"], [message])

    def test_it_still_shows_good_dates(self):
        response = self.client.get(f"{reverse('agreement')}?from=2024-01-01&to=2024-01-31")
        self.assertContains(response, "Samples drawn 2024-01-01 to 2024-01-31")


class SampleTestCase(BaseTestCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        cls.logged_run = load_generated_run(answers=40)
        cls.other_lead = make_user("lead2", "lead")
        cls.reader = make_user("reader_a", "reviewer")
        cls.sample = sample_draw(
            frame=Frame(run=cls.logged_run), size=5, seed=4, rubric_version=rubric_default()
        )
        sample_assign(sample=cls.sample, reviewers=[cls.reader], readers_per_item=1)

    def setUp(self):
        self.client.force_login(self.lead)


class CalibrationItemPageTests(SampleTestCase):
    def add(self, **changes):
        arguments = {
            "sample": self.sample,
            "group": "unemployment",
            "question": "What was the unemployment rate in 2024?",
            "evidence": [{"id": "LAB_UNEMP", "values": [7.3], "caveats": ["provisional"]}],
            "variants": {"short": "7.3 %.", "long": "It was 7.3 % in 2024."},
        }
        return calibration_add(**(arguments | changes))

    def test_it_opens_a_calibration_item_from_the_sample_page(self):
        long_form, _ = self.add()  # the forms go in by name: long, then short
        page = self.client.get(reverse("sample-detail", args=[self.sample.id]))
        link = reverse("sample-item", args=[self.sample.id, long_form.position])
        self.assertContains(page, f'href="{link}"')
        item = self.client.get(link)
        self.assertContains(item, "What was the unemployment rate in 2024?")
        self.assertContains(item, "It was 7.3 % in 2024.")
        self.assertContains(item, "! provisional")
        self.assertContains(item, "calibration item")

    def test_it_adds_nothing_to_a_set_from_a_calibration_item(self):
        short, _ = self.add()
        response = self.client.post(
            reverse("sample-item", args=[self.sample.id, short.position]), {"version": "cal-1"}
        )
        self.assertContains(response, "A calibration item comes from no question set", status_code=400)
        self.assertFalse(SetVersion.objects.filter(version="cal-1").exists())

    def test_it_refuses_a_bad_language_or_a_nul_in_a_calibration_item(self):
        with self.assertRaisesMessage(ApplicationError, 'language: "english please" is not a language code'):
            self.add(language="english please")
        with self.assertRaisesMessage(ApplicationError, "the NUL character (\\u0000) cannot be stored"):
            self.add(question="a\x00b")


class DecisionConflictTests(SampleTestCase):
    def decide(self, lead, reason, *, seen_revision=None, key=None):
        item = self.sample.items.get(position=1)
        return adjudication_submit(
            item=item,
            lead=lead,
            decision=Decision(reason=reason, grade="resolved"),
            submission_key=key or uuid.uuid4(),
            seen_revision=seen_revision,
        )

    def test_it_tells_the_later_lead_and_shows_the_other_decision(self):
        item = self.sample.items.get(position=1)
        url = reverse("adjudicate", args=[item.id])
        opened = self.client.get(url)
        self.assertContains(opened, '<input type="hidden" name="seen_revision" value="0">')
        self.decide(self.other_lead, "the record holds 7.6", seen_revision=0)
        response = self.client.post(
            url,
            {
                "submission_key": str(uuid.uuid4()),
                "seen_revision": "0",
                "grade": "unresolved",
                "reason": "no value matches",
            },
        )
        self.assertContains(response, "Another lead decided this item after you opened it.", status_code=409)
        self.assertContains(response, "revision 1 by lead2", status_code=409)
        self.assertContains(response, "the record holds 7.6", status_code=409)
        # The lead's own reason waits in the form, now carrying revision 1.
        self.assertContains(response, "no value matches</textarea>", status_code=409)
        self.assertContains(response, '<input type="hidden" name="seen_revision" value="1">', status_code=409)
        self.assertEqual(list(item.adjudications.values_list("revision", "lead__username")), [(1, "lead2")])

        again = self.client.post(
            url,
            {
                "submission_key": str(uuid.uuid4()),
                "seen_revision": "1",
                "grade": "unresolved",
                "reason": "no value matches",
            },
        )
        self.assertRedirects(again, reverse("lead-queue"))
        self.assertEqual(
            list(item.adjudications.values_list("revision", "lead__username", "grade")),
            [(1, "lead2", "resolved"), (2, "lead", "unresolved")],
        )

    def test_it_refuses_a_nul_in_a_decision(self):
        item = self.sample.items.get(position=1)
        response = self.client.post(
            reverse("adjudicate", args=[item.id]),
            {
                "submission_key": str(uuid.uuid4()),
                "seen_revision": "0",
                "grade": "resolved",
                "reason": "a\x00b",
            },
        )
        self.assertContains(
            response, "The NUL character (\\u0000) cannot be stored: remove it.", status_code=400
        )
        self.assertEqual(item.adjudications.count(), 0)

    def test_it_raises_the_conflict_with_the_decision_in_between(self):
        first = self.decide(self.other_lead, "first", seen_revision=0)
        with self.assertRaisesMessage(
            DecisionConflict, "Another lead recorded decision 1 on this item"
        ) as caught:
            self.decide(self.lead, "second", seen_revision=0)
        self.assertEqual(caught.exception.latest, first)
        self.assertEqual(caught.exception.status, 409)

    def test_it_takes_the_same_form_sent_twice_as_one_decision(self):
        key = uuid.uuid4()
        first = self.decide(self.lead, "once", seen_revision=0, key=key)
        self.assertEqual(self.decide(self.lead, "once", seen_revision=0, key=key), first)
        self.assertEqual(Adjudication.objects.count(), 1)


class SimultaneousDecisionTests(TransactionTestCase):
    """Two leads sending a decision on the same item at the same moment: the
    lock on the item lets one through and tells the other."""

    def test_it_records_one_and_tells_the_other(self):
        run = load_generated_run(answers=20)
        leads = [make_user("lead"), make_user("lead2", "lead")]
        sample = sample_draw(frame=Frame(run=run), size=3, seed=1, rubric_version=rubric_default())
        item = sample.items.get(position=1)
        start = threading.Barrier(2)
        outcomes = []

        def decide(lead):
            try:
                start.wait()
                adjudication_submit(
                    item=item,
                    lead=lead,
                    decision=Decision(reason=f"by {lead}", grade="resolved"),
                    submission_key=uuid.uuid4(),
                    seen_revision=0,
                )
                outcomes.append("recorded")
            except DecisionConflict:
                outcomes.append("conflict")
            finally:
                connection.close()

        threads = [threading.Thread(target=decide, args=(lead,)) for lead in leads]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual(sorted(outcomes), ["conflict", "recorded"])
        self.assertEqual(Adjudication.objects.filter(item=item).count(), 1)


class NulInAddressTests(TestCase):
    def test_it_refuses_a_nul_in_any_address_with_a_400(self):
        make_user("manager")
        self.client.login(username="manager", password=PASSWORD)
        for address in ("/versions/a%00b/", "/versions/?set=a%00b", "/versions/compare/?set=x&baseline=a%00"):
            response = self.client.get(address)
            self.assertEqual(response.status_code, 400, address)
            self.assertContains(response, "NUL character", status_code=400)


class NotFoundPageTests(ErrorsTestCase):
    def test_it_answers_a_missing_run_with_the_sites_own_page(self):
        response = self.client.get(reverse("run-detail", args=[999999]))
        # The site's page, with its menu and the way back, not the server's bare one.
        self.assertContains(response, "<h1>Not found</h1>", status_code=404)
        self.assertContains(response, f'href="{reverse("version-list")}"', status_code=404)
        self.assertContains(response, f'action="{reverse("logout")}"', status_code=404)
