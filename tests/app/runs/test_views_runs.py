import json

from django.test import TestCase, override_settings
from django.urls import reverse

from reviewapp.models import Answer, AnswerCheck, Finding, Run, Score, Scoring, SetVersion
from reviewapp.scorings.selectors import check_numbers
from reviewapp.scorings.services import scoring_chunk_perform, scoring_plan
from tests.helpers import PASSWORD, example_answers, example_file, jsonl, make_user

RUN_FILE = "answers_run_assistant-1.3_set-1.2.jsonl"


class UploadTestCase(TestCase):
    def setUp(self):
        self.user = make_user("lead")
        self.client.login(username="lead", password=PASSWORD)

    def upload_set(self):
        with self.captureOnCommitCallbacks(execute=True):
            response = self.client.post(
                reverse("set-list"), {"file": example_file("questions_set-1.2.jsonl")}
            )
        self.assertEqual(response.status_code, 302)
        return SetVersion.objects.get(version="1.2")

    def upload_run(self, upload, **fields):
        with self.captureOnCommitCallbacks(execute=True):
            return self.client.post(reverse("run-upload"), {"file": upload, **fields})


class RunUploadTests(UploadTestCase):
    def test_it_stores_and_scores_an_uploaded_run(self):
        self.upload_set()
        response = self.upload_run(example_file(RUN_FILE))
        run = Run.objects.get()
        self.assertRedirects(response, reverse("run-detail", args=[run.id]))
        self.assertEqual((run.status, run.answer_count), ("stored", 8))
        self.assertEqual(run.assistant_version.label, "assistant-1.3")
        self.assertEqual(run.assistant_version.assistant.name, "assistant")
        self.assertEqual(run.uploaded_by, self.user)
        scoring = Scoring.objects.get(run=run)
        self.assertEqual(scoring.status, "done")
        counts = {(s.slice, s.measure): (s.k, s.n) for s in Score.objects.filter(scoring=scoring)}
        self.assertEqual(counts[("all", "numeric_accuracy")], (5, 6))
        self.assertEqual(counts[("all", "citation_validity")], (7, 8))
        self.assertEqual(counts[("language=en", "unsupported_numbers")], (2, 6))
        self.assertNotIn(("language=fr", "refusal_accuracy"), counts)
        self.assertEqual(Finding.objects.filter(scoring=scoring).count(), 5)
        self.assertEqual(AnswerCheck.objects.filter(scoring=scoring).count(), 8)

    def test_it_keeps_each_answer_exactly_as_logged(self):
        self.upload_set()
        self.upload_run(example_file(RUN_FILE))
        lines = example_file(RUN_FILE).read().decode().splitlines()
        self.assertEqual(
            list(Answer.objects.order_by("line_number").values_list("raw", flat=True)), lines[1:]
        )

    def test_it_rejects_a_bad_file_with_numbered_lines_and_stores_no_answer(self):
        self.upload_set()
        good = example_answers()
        response = self.upload_run(
            jsonl(
                {"assistant_version": "a-2", "set_version": "1.2"},
                good[0],
                "not json",
                {**good[1], "declined": "yes"},
                {**good[2], "question_id": "zz9"},
                good[0],
            )
        )
        run = Run.objects.get()
        self.assertEqual(run.status, "rejected")
        self.assertEqual(Answer.objects.count(), 0)
        self.assertEqual(Scoring.objects.count(), 0)
        self.assertEqual(
            [(e["line"], e["field"]) for e in run.line_errors],
            [(3, None), (4, "declined"), (5, "question_id"), (6, "question_id")],
        )
        page = self.client.get(response.url)
        self.assertContains(page, "line 4, field <code>declined</code>: declined must be true or false")
        self.assertContains(
            page,
            "line 6, field <code>question_id</code>: &#x27;a01&#x27; already answered on line 2",
        )
        self.assertContains(page, "no answer was stored")

    def test_it_leads_a_second_upload_of_the_same_file_to_its_run(self):
        self.upload_set()
        first = self.upload_run(example_file(RUN_FILE))
        second = self.upload_run(example_file(RUN_FILE))
        self.assertEqual(first.url, second.url)
        self.assertEqual(Run.objects.count(), 1)
        self.assertEqual(Answer.objects.count(), 8)

    def test_it_takes_versions_from_the_form_when_the_file_has_none(self):
        self.upload_set()
        self.upload_run(jsonl(*example_answers()), assistant_version="bot-7", set_version="1.2")
        self.assertEqual(Run.objects.get().assistant_version.label, "bot-7")

    def test_it_refuses_a_run_without_versions(self):
        self.upload_set()
        response = self.upload_run(jsonl(*example_answers(), name="run.jsonl"))
        self.assertContains(
            response, "run.jsonl: no assistant version: give it in a header line", status_code=400
        )
        self.assertEqual(Run.objects.count(), 0)

    def test_it_refuses_versions_that_disagree(self):
        self.upload_set()
        response = self.upload_run(example_file(RUN_FILE), set_version="1.3")
        self.assertContains(response, "the set version disagrees", status_code=400)
        self.assertContains(response, "the form says &#x27;1.3&#x27;", status_code=400)

    def test_it_refuses_an_unknown_set_version(self):
        response = self.upload_run(example_file(RUN_FILE))
        self.assertContains(
            response,
            "set version 1.2 is not known here; upload its question set first",
            status_code=400,
        )
        self.assertEqual(Run.objects.count(), 0)

    @override_settings(MAX_UPLOAD_BYTES=1000)
    def test_it_refuses_a_file_over_the_limit_and_says_the_limit(self):
        self.upload_set_small = None
        response = self.upload_run(example_file(RUN_FILE))
        self.assertContains(response, "larger than the limit of 0 MB", status_code=413)
        self.assertEqual(Run.objects.count(), 0)

    def test_it_refuses_a_body_declared_too_large_before_reading_it(self):
        with self.settings(MAX_UPLOAD_BYTES=10):
            response = self.client.post(
                reverse("run-upload"),
                data=b"",
                content_type="multipart/form-data; boundary=x",
                CONTENT_LENGTH=str(5 * 1024 * 1024),
            )
            self.assertContains(response, "The file is larger than the limit of 0 MB", status_code=413)
            api = self.client.post(
                "/api/runs",
                data=b"",
                content_type="multipart/form-data; boundary=x",
                CONTENT_LENGTH=str(5 * 1024 * 1024),
            )
            self.assertEqual(api.status_code, 413)
            self.assertEqual(api.json()["errors"], ["the file is larger than the limit of 0 MB"])
        self.assertEqual(Run.objects.count(), 0)

    def test_it_asks_before_taking_expected_values_from_a_combined_log(self):
        response = self.upload_run(
            example_file("running_example.jsonl"), assistant_version="a-1", set_version="1.2"
        )
        self.assertContains(response, "the combined form", status_code=400)
        self.assertEqual(SetVersion.objects.count(), 0)

    def test_it_creates_and_revises_a_question_set_from_a_combined_log(self):
        self.upload_set()
        response = self.upload_run(
            example_file("running_example.jsonl"),
            assistant_version="a-1",
            set_version="1.3",
            set_from_file="on",
            set_name="default",
            revise_set="on",
        )
        # Shown first (tests/app/runs/test_set_from_file.py), then confirmed.
        with self.captureOnCommitCallbacks(execute=True):
            response = self.client.post(
                reverse("run-upload-confirm"),
                {"key": response.context["key"], "seen": response.context["revision"].seen},
            )
        self.assertEqual(response.status_code, 302)
        revised = SetVersion.objects.get(version="1.3")
        self.assertEqual(revised.based_on.version, "1.2")
        self.assertEqual(revised.questions.count(), 8)
        # The revision keeps the question text of the version it revises.
        self.assertEqual(
            revised.questions.get(question_id="a02").question,
            "What was life expectancy at birth in 2022?",
        )
        run = Run.objects.get()
        self.assertEqual(run.scorings.get().status, "done")

    def test_it_refuses_a_new_set_version_that_exists(self):
        self.upload_set()
        response = self.upload_run(
            example_file("running_example.jsonl"),
            assistant_version="a-1",
            set_version="1.2",
            set_from_file="on",
        )
        self.assertContains(response, "set version 1.2 exists already", status_code=400)
        self.assertEqual(Run.objects.count(), 0)

    def test_it_needs_a_login(self):
        self.client.logout()
        response = self.client.get(reverse("run-upload"))
        self.assertRedirects(response, f"{reverse('login')}?next={reverse('run-upload')}")


class RunPageTests(UploadTestCase):
    def setUp(self):
        super().setUp()
        self.set_version = self.upload_set()
        self.upload_run(example_file(RUN_FILE))
        self.run_obj = Run.objects.get()

    def test_it_shows_each_slice_with_k_n_and_interval(self):
        response = self.client.get(self.run_obj.get_absolute_url())
        # One decimal, as the specs write rates: 5 of 6, Wilson 0.4365 to 0.9699.
        self.assertContains(response, '<span class="k-n">5/6</span> <strong>83.3 %</strong>', html=False)
        self.assertContains(response, "[43.6–97.0]")
        self.assertContains(response, "no question expected a refusal")
        self.assertContains(response, "language=fr")

    def test_it_shows_the_chosen_interval_and_each_denominator(self):
        response = self.client.get(self.run_obj.get_absolute_url(), {"interval": "jeffreys"})
        self.assertContains(response, "[44.2–98.1]")  # 5 of 6, Jeffreys: 0.4419 to 0.9814
        self.assertContains(response, "<strong>Jeffreys</strong>")
        self.assertContains(
            response,
            '<span class="denominator">of answers given, and declined answers that state a number</span>',
        )
        self.assertContains(response, '<span class="k-n">2/7</span> <strong>28.6 %</strong>')

    def test_it_lists_findings_linking_to_their_answers(self):
        response = self.client.get(self.run_obj.get_absolute_url())
        a03 = Answer.objects.get(question_id="a03")
        self.assertContains(response, reverse("answer-detail", args=[self.run_obj.id, a03.id]), count=2)
        self.assertContains(response, "cited EDU_STATS_2024, which was not retrieved")

    def test_it_filters_findings_by_kind_and_language_as_a_partial(self):
        response = self.client.get(
            self.run_obj.get_absolute_url(),
            {"kind": "unsupported", "language": "en"},
            HTTP_HX_REQUEST="true",
            HTTP_HX_TARGET="findings",
        )
        self.assertNotContains(response, "<html")
        self.assertContains(response, "is neither a retrieved nor an expected value", count=2)
        self.assertNotContains(response, "EDU_STATS_2024")

    def test_it_polls_status_as_a_partial_while_work_is_going_on(self):
        Run.objects.filter(id=self.run_obj.id).update(status="ingesting")
        response = self.client.get(
            self.run_obj.get_absolute_url(), HTTP_HX_REQUEST="true", HTTP_HX_TARGET="run-status"
        )
        self.assertNotContains(response, "<html")
        self.assertContains(response, 'hx-trigger="every 1s"')
        self.assertContains(response, "validating and storing answers")

    def test_it_reloads_the_page_once_the_work_is_done(self):
        response = self.client.get(
            self.run_obj.get_absolute_url(), HTTP_HX_REQUEST="true", HTTP_HX_TARGET="run-status"
        )
        self.assertEqual(response.headers["HX-Refresh"], "true")

    def test_it_rescores_against_another_set_version_and_keeps_both(self):
        other = SetVersion.objects.create(question_set=self.set_version.question_set, version="1.3")
        for question in self.set_version.questions.all():
            question.pk = None
            question.set_version = other
            if question.question_id == "a03":
                question.expected_values = [35.0]
            question.save()
        with self.captureOnCommitCallbacks(execute=True):
            response = self.client.post(
                reverse("run-rescore", args=[self.run_obj.id]), {"set_version": "1.3"}
            )
        self.assertEqual(response.status_code, 302)
        scorings = {s.set_version.version: s for s in self.run_obj.scorings.all()}
        self.assertEqual(set(scorings), {"1.2", "1.3"})
        self.assertEqual(scorings["1.3"].scores.get(slice="all", measure="numeric_accuracy").k, 6)
        self.assertEqual(scorings["1.2"].scores.get(slice="all", measure="numeric_accuracy").k, 5)
        page = self.client.get(self.run_obj.get_absolute_url())
        self.assertContains(page, "Against set 1.2")
        self.assertContains(page, "Against set 1.3")

    def test_it_never_duplicates_rows_when_a_task_runs_twice(self):
        scoring = self.run_obj.scorings.get()
        self.assertIsNone(scoring_plan(scoring_id=scoring.id))
        self.assertIsNone(scoring_chunk_perform(chunk_id=scoring.chunks.get().id))
        Scoring.objects.filter(id=scoring.id).update(status="failed", error="boom")
        with self.captureOnCommitCallbacks(execute=True):
            self.client.post(reverse("scoring-retry", args=[self.run_obj.id, scoring.id]))
        scoring.refresh_from_db()
        self.assertEqual(scoring.status, "done")
        self.assertEqual(AnswerCheck.objects.filter(scoring=scoring).count(), 8)
        self.assertEqual(Finding.objects.filter(scoring=scoring).count(), 5)
        self.assertEqual(Score.objects.filter(scoring=scoring, slice="all").count(), 6)

    def test_it_shows_a_failed_scoring_with_its_error_and_a_retry(self):
        scoring = self.run_obj.scorings.get()
        Scoring.objects.filter(id=scoring.id).update(status="failed", error="OperationalError: gone")
        response = self.client.get(self.run_obj.get_absolute_url())
        self.assertContains(response, "failed:</strong> OperationalError: gone")
        self.assertContains(response, reverse("scoring-retry", args=[self.run_obj.id, scoring.id]))

    def test_it_refuses_get_on_actions(self):
        for name in ("run-rescore", "run-retry"):
            self.assertEqual(self.client.get(reverse(name, args=[self.run_obj.id])).status_code, 405)


class AnswerPageTests(UploadTestCase):
    def setUp(self):
        super().setUp()
        self.upload_set()
        self.upload_run(example_file(RUN_FILE))
        self.run_obj = Run.objects.get()

    def page(self, question_id):
        answer = Answer.objects.get(question_id=question_id)
        return self.client.get(reverse("answer-detail", args=[self.run_obj.id, answer.id]))

    def test_it_shows_the_answer_beside_its_evidence_and_caveats(self):
        response = self.page("a04")
        self.assertContains(response, "Quel était le taux de chômage au deuxième trimestre 2025 ?")
        self.assertContains(response, "<code>LAB_UNEMP_RATE_Q</code>")
        self.assertContains(response, '<p class="caveat">! provisional</p>', html=True)
        self.assertContains(response, '<mark class="num ok" title="matches 7.3">7,3</mark>', html=True)

    def test_it_marks_unsupported_numbers_and_invalid_citations(self):
        response = self.page("a03")
        self.assertContains(
            response,
            '<mark class="num bad" title="no retrieved or expected value matches">35</mark>',
            html=True,
        )
        response = self.page("a07")
        self.assertContains(response, '<code>EDU_STATS_2024</code> <span class="bad">not retrieved</span>')

    def test_a_check_stored_with_its_numbers_shows_them_as_stored(self):
        # Checks made before numbers were read again when shown kept them.
        answer = Answer.objects.get(question_id="a04")
        check = AnswerCheck.objects.get(answer=answer)
        self.assertIsNone(check.numbers)
        stored = [{"text": "7,3", "start": 0, "end": 0, "supported": False, "matched": None}]
        start = answer.record["answer"].index("7,3")
        stored[0].update(start=start, end=start + 3)
        AnswerCheck.objects.filter(id=check.id).update(numbers=stored)
        response = self.page("a04")
        self.assertContains(
            response,
            '<mark class="num bad" title="no retrieved or expected value matches">7,3</mark>',
            html=True,
        )

    def test_numbers_are_read_again_with_the_scorings_options(self):
        check = AnswerCheck.objects.select_related("scoring").get(answer__question_id="a04")
        record = {**check.answer.record, "answer": "It was 4.2 %.", "retrieved_values": [4.21]}
        self.assertEqual([n["supported"] for n in check_numbers(check, record)], [False])
        check.scoring.options = {"rounding": True}
        [number] = check_numbers(check, record)
        self.assertEqual((number["text"], number["supported"], number["matched"]), ("4.2", True, 4.21))

    def test_it_shows_log_text_as_text(self):
        answers = example_answers()
        answers[0]["answer"] = "<script>alert('x')</script> 7.6"
        answers[0]["retrieved_records"][0]["caveats"] = ["<b>bold</b>"]
        with self.captureOnCommitCallbacks(execute=True):
            self.client.post(
                reverse("run-upload"),
                {"file": jsonl(*answers), "assistant_version": "x-1", "set_version": "1.2"},
            )
        run = Run.objects.get(assistant_version__label="x-1")
        answer = run.answers.get(question_id="a01")
        response = self.client.get(reverse("answer-detail", args=[run.id, answer.id]))
        self.assertNotContains(response, "<script>alert('x')</script>")
        self.assertContains(response, "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;")
        self.assertContains(response, "&lt;b&gt;bold&lt;/b&gt;")

    def test_it_gives_404_for_an_answer_of_another_run(self):
        answer = Answer.objects.get(question_id="a01")
        self.assertEqual(
            self.client.get(reverse("answer-detail", args=[self.run_obj.id + 1, answer.id])).status_code,
            404,
        )

    def test_it_shows_other_logged_fields_verbatim(self):
        answers = example_answers()
        answers[0]["latency_ms"] = 1234
        with self.captureOnCommitCallbacks(execute=True):
            self.client.post(
                reverse("run-upload"),
                {"file": jsonl(*answers), "assistant_version": "x-2", "set_version": "1.2"},
            )
        answer = Run.objects.get(assistant_version__label="x-2").answers.get(question_id="a01")
        response = self.client.get(reverse("answer-detail", args=[answer.run_id, answer.id]))
        self.assertContains(response, "<dt>latency_ms</dt><dd><code>1234</code></dd>", html=True)
        self.assertEqual(json.loads(answer.raw)["latency_ms"], 1234)


class ChunkedScoringTests(UploadTestCase):
    def test_it_adds_up_chunks_to_the_same_scores_as_one_chunk(self):
        self.upload_set()
        with self.settings(SCORING_CHUNK_ANSWERS=3):
            self.upload_run(example_file(RUN_FILE))
        scoring = Run.objects.get().scorings.get()
        self.assertEqual((scoring.status, scoring.chunks_total, scoring.chunks_done), ("done", 3, 3))
        self.assertEqual(sorted(scoring.chunks.values_list("answers", flat=True)), [2, 3, 3])
        counts = {(s.slice, s.measure): (s.k, s.n) for s in scoring.scores.all()}
        self.assertEqual(counts[("all", "numeric_accuracy")], (5, 6))
        self.assertEqual(counts[("all", "unsupported_numbers")], (2, 8))
        self.assertEqual(counts[("language=en", "citation_validity")], (5, 6))
        self.assertEqual(counts[("stratum=subnational", "refusal_accuracy")], (1, 2))
        self.assertEqual(scoring.findings.count(), 5)

    def test_it_marks_the_scoring_failed_when_a_chunk_fails(self):
        self.upload_set()
        with self.settings(SCORING_CHUNK_ANSWERS=3):
            self.upload_run(example_file(RUN_FILE))
        scoring = Run.objects.get().scorings.get()
        chunk = scoring.chunks.first()
        Answer.objects.filter(run=scoring.run, line_number=chunk.first_line).update(raw="{broken")
        with self.captureOnCommitCallbacks(execute=True):
            Scoring.objects.filter(id=scoring.id).update(status="failed")
            self.client.post(reverse("scoring-retry", args=[scoring.run_id, scoring.id]))
        scoring.refresh_from_db()
        self.assertEqual(scoring.status, "failed")
        self.assertIn("JSONDecodeError", scoring.error)


class RescoreOptionsTests(UploadTestCase):
    def test_it_scores_again_with_options_and_extra_slices_and_shows_them(self):
        set_version = self.upload_set()
        self.upload_run(example_file(RUN_FILE))
        run = Run.objects.get()
        with self.captureOnCommitCallbacks(execute=True):
            response = self.client.post(
                reverse("run-rescore", args=[run.id]),
                {"set_version": "1.2", "rounding": "on", "extra_slices": "question_id"},
            )
        scoring = run.scorings.get(options={"rounding": True})
        self.assertEqual(scoring.set_version, set_version)
        self.assertEqual(scoring.slice_fields, ["language", "stratum", "split", "question_id"])
        self.assertEqual(
            scoring.scores.filter(slice__startswith="question_id=").values("slice").distinct().count(), 8
        )
        page = self.client.get(response.url + "&slices=stratum")
        self.assertContains(page, "stratum=subnational")
        self.assertContains(page, '<span class="tag">rounding</span>', html=True)

    def test_it_refuses_a_slice_name_that_is_not_a_field(self):
        self.upload_set()
        self.upload_run(example_file(RUN_FILE))
        run = Run.objects.get()
        response = self.client.post(
            reverse("run-rescore", args=[run.id]), {"set_version": "1.2", "extra_slices": "a b"}, follow=True
        )
        self.assertContains(
            response, "The scoring was not queued: extra_slices: &#x27;a b&#x27; is not a field name"
        )
        self.assertEqual(run.scorings.count(), 1)
