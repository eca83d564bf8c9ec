"""The run, upload, answer, agreement, register and findings screens, as
fixed after looking at them at 1366x768 (issue 14, item 6)."""

import csv
import io
import uuid

from django.test import TestCase, override_settings
from django.urls import reverse

from reviewapp.models import Adjudication, Answer, Assignment, Judgement, Run, Scoring, SetVersion
from reviewapp.review.services.review import rubric_default
from reviewapp.review.services.samples import Frame, sample_assign, sample_draw
from reviewapp.scorings.selectors import answer_evidence, shown_value, shown_values
from tests.fixtures import load_generated_run
from tests.helpers import PASSWORD, example_answers, example_file, jsonl, make_user

RUN_FILE = "answers_run_assistant-1.3_set-1.2.jsonl"
NARROW_NBSP = "\u202f"


class ScreenTestCase(TestCase):
    """A lead logged in; the running example's question set and run, when asked for."""

    def setUp(self):
        self.user = make_user("lead")
        self.client.login(username="lead", password=PASSWORD)

    def upload_set(self) -> SetVersion:
        with self.captureOnCommitCallbacks(execute=True):
            self.client.post(reverse("set-list"), {"file": example_file("questions_set-1.2.jsonl")})
        return SetVersion.objects.get(version="1.2")

    def upload_run(self, upload, **fields):
        with self.captureOnCommitCallbacks(execute=True):
            return self.client.post(reverse("run-upload"), {"file": upload, **fields})


class RunStatusTests(ScreenTestCase):
    def setUp(self):
        super().setUp()
        self.upload_set()
        self.upload_run(example_file(RUN_FILE))
        self.run_obj = Run.objects.get()

    def status(self, **headers):
        return self.client.get(self.run_obj.get_absolute_url(), **headers)

    def test_it_counts_the_answers_inside_the_polled_status_while_storing(self):
        Run.objects.filter(id=self.run_obj.id).update(status="ingesting", progress=40, answer_count=0)
        partial = self.status(HTTP_HX_REQUEST="true", HTTP_HX_TARGET="run-status")
        self.assertNotContains(partial, "<html")
        self.assertContains(
            partial,
            '<p class="run-count">Answers are counted once the whole file is checked and stored.</p>',
            count=1,
            html=True,
        )
        page = self.status()
        self.assertContains(page, "<html")
        self.assertContains(page, '<section id="run-status" hx-get="/runs/', count=1)
        self.assertContains(page, "Answers are counted once the whole file is checked and stored.", count=1)

    def test_it_shows_the_stored_count_while_scoring_goes_on(self):
        Scoring.objects.filter(run=self.run_obj).update(status="queued")
        partial = self.status(HTTP_HX_REQUEST="true", HTTP_HX_TARGET="run-status")
        self.assertNotContains(partial, "<html")
        self.assertContains(
            partial,
            '<p class="run-count"><strong>8</strong> answers stored; scoring goes on</p>',
            count=1,
            html=True,
        )
        page = self.status()
        self.assertContains(page, "<strong>8</strong> answers stored; scoring goes on", count=1)

    def test_it_shows_the_count_once_all_work_is_done(self):
        page = self.status()
        self.assertContains(
            page, '<p class="run-count"><strong>8</strong> answers stored</p>', count=1, html=True
        )


class UploadFormTests(ScreenTestCase):
    @override_settings(CELERY_TASK_ALWAYS_EAGER=True)
    def test_it_says_an_in_process_upload_waits_and_marks_the_button_busy(self):
        page = self.client.get(reverse("run-upload"))
        self.assertContains(
            page, "after Upload the page waits until the answers are stored and scored", count=1
        )
        # The script swaps in the busy text; without it the button still sends the form.
        self.assertContains(
            page, '<button type="submit" data-busy="Uploading and storing…">Upload</button>', html=True
        )
        self.assertContains(page, '<script src="/static/upload.js" defer></script>', html=True)

    @override_settings(CELERY_TASK_ALWAYS_EAGER=False)
    def test_it_says_nothing_of_waiting_when_workers_do_the_work(self):
        page = self.client.get(reverse("run-upload"))
        self.assertNotContains(page, "the page waits")
        self.assertContains(page, 'data-busy="Uploading and storing…"', count=1)

    def test_it_offers_the_set_versions_here_and_takes_a_new_one(self):
        self.upload_set()
        page = self.client.get(reverse("run-upload"))
        self.assertContains(
            page,
            '<datalist id="set-versions"><option value="1.2">default</option></datalist>',
            count=1,
            html=True,
        )
        self.assertContains(page, 'name="set_version" list="set-versions" autocomplete="off"', count=1)
        response = self.upload_run(
            example_file("running_example.jsonl"),
            assistant_version="a-1",
            set_version="1.3",
            set_from_file="on",
        )
        self.assertEqual(response.status_code, 302)
        self.assertEqual(Run.objects.get().set_version.version, "1.3")

    def test_it_keeps_every_field_but_the_file_when_the_file_is_refused(self):
        self.upload_set()
        response = self.upload_run(
            example_file("running_example.jsonl"),
            assistant_version="a-1",
            set_version="1.2",
            set_from_file="on",
            set_name="default",
            repeats="7",
        )
        self.assertContains(response, "set version 1.2 exists already", status_code=400)
        for html in (
            '<input type="text" name="assistant_version" value="a-1" list="assistant-versions" '
            'autocomplete="off" maxlength="100" aria-describedby="id_assistant_version_helptext" '
            'id="id_assistant_version">',
            '<input type="text" name="set_version" value="1.2" list="set-versions" autocomplete="off" '
            'maxlength="100" aria-describedby="id_set_version_helptext" id="id_set_version">',
            '<input type="checkbox" name="set_from_file" aria-describedby="id_set_from_file_helptext" '
            'id="id_set_from_file" checked>',
            '<input type="text" name="set_name" value="default" list="set-names" autocomplete="off" '
            'maxlength="100" aria-describedby="id_set_name_helptext" id="id_set_name">',
            '<input type="number" name="repeats" value="7" min="1" aria-describedby="id_repeats_helptext" '
            'id="id_repeats">',
        ):
            self.assertContains(response, html, count=1, status_code=400, html=True)
        self.assertContains(response, "choose the file again", count=1, status_code=400)
        self.assertEqual(Run.objects.count(), 0)

    def test_it_explains_the_combined_form_before_anyone_is_refused(self):
        page = self.client.get(reverse("run-upload"))
        self.assertContains(
            page, "<legend>Expected values in the log? (the combined form)</legend>", html=True
        )
        self.assertContains(
            page,
            "a log whose answers carry\n        <code>expected_behaviour</code> and <code>expected_values</code> "
            "is refused unless you tick the box below.",
            count=1,
        )
        self.assertContains(
            page,
            '<label for="id_set_from_file"><input type="checkbox" name="set_from_file" '
            'aria-describedby="id_set_from_file_helptext" id="id_set_from_file"> '
            "Create or revise the question set from this file</label>",
            count=1,
            html=True,
        )

    def test_it_takes_the_running_example_as_the_page_says_on_the_first_try(self):
        # On a fresh app: no question set yet, the file names no version.
        response = self.upload_run(
            example_file("running_example.jsonl"),
            assistant_version="assistant-1.3",
            set_version="1.3",
            set_from_file="on",
        )
        run = Run.objects.get()
        self.assertRedirects(response, reverse("run-detail", args=[run.id]))
        self.assertEqual((run.status, run.answer_count), ("stored", 8))
        self.assertEqual(run.set_version.questions.count(), 8)
        self.assertEqual(run.scorings.get().status, "done")

    def test_it_still_refuses_the_combined_form_without_the_choice_and_says_where_it_is(self):
        response = self.upload_run(
            example_file("running_example.jsonl"), assistant_version="a-1", set_version="1.3"
        )
        self.assertContains(
            response,
            "Expected values belong in the question set: choose “create or revise the question set "
            "from this file”",
            count=1,
            status_code=400,
        )
        self.assertContains(response, '<fieldset class="combined" id="combined">', count=1, status_code=400)


class EvidenceValueTests(TestCase):
    def test_it_writes_a_whole_float_without_its_decimal_part(self):
        self.assertEqual(shown_value(13157.0, language="en"), "13,157")
        self.assertEqual(shown_value(41.0, language="en"), "41")

    def test_it_groups_thousands_as_each_language_writes_them(self):
        self.assertEqual(
            [shown_value(13157, language=language) for language in ("en", "fr", "de", "es")],
            ["13,157", f"13{NARROW_NBSP}157", "13.157", "13.157"],
        )
        self.assertEqual(shown_value(1250.5, language="fr-CA"), f"1{NARROW_NBSP}250,5")

    def test_it_keeps_the_digits_of_text_and_gives_floats_their_shortest_form(self):
        self.assertEqual(shown_value("7.60", language="en"), "7.60")
        self.assertEqual(shown_value("7.60", language="de"), "7,60")
        self.assertEqual(shown_value(7.6, language="en"), "7.6")
        self.assertEqual(shown_value(1e-07, language="en"), "0.0000001")
        self.assertEqual(shown_value("n/a", language="en"), "n/a")

    def test_it_shows_a_value_logged_twice_once_with_its_count(self):
        self.assertEqual(
            shown_values([41, 41.0, 44.0, 41], language="en"),
            [{"text": "41", "count": 3}, {"text": "44", "count": 1}],
        )

    def test_it_reads_the_language_off_the_record_and_keeps_the_logged_values(self):
        evidence = answer_evidence(
            {"language": "fr", "retrieved_values": [13157.0, 13157], "retrieved_records": []}
        )
        self.assertEqual(evidence["values"], [13157.0, 13157])
        self.assertEqual(evidence["shown_values"], [{"text": f"13{NARROW_NBSP}157", "count": 2}])


class AnswerValuesTests(ScreenTestCase):
    def test_it_shows_evidence_values_as_written_with_counts_on_the_answer_page(self):
        self.upload_set()
        answers = example_answers()
        a04 = next(a for a in answers if a["question_id"] == "a04")
        a04["retrieved_values"] = [13157.0, 13157, 7.3]
        a04["retrieved_records"] = [
            {"id": "LAB_UNEMP_RATE_Q", "values": [13157.0, 13157, 7.3], "caveats": ["provisional"]}
        ]
        self.upload_run(jsonl(*answers), assistant_version="x-1", set_version="1.2")
        answer = Answer.objects.get(question_id="a04")
        page = self.client.get(reverse("answer-detail", args=[answer.run_id, answer.id]))
        counted = f'<span class="value">13{NARROW_NBSP}157 <span class="times" title="logged 2 times">×2</span></span>'
        self.assertContains(
            page, f'<dd class="values">{counted} <span class="value">7,3</span> </dd>', count=1, html=True
        )
        self.assertContains(
            page,
            f'<p class="meta values">all retrieved values: {counted} <span class="value">7,3</span> </p>',
            count=1,
            html=True,
        )
        self.assertNotContains(page, "13157.0")
        # The expected value, by the same rule.
        self.assertContains(page, 'an answer: <span class="value">7,3</span>', count=1)

    def test_it_tells_a_finding_repeated_in_one_answer_once_with_its_count_above_the_answer(self):
        self.upload_set()
        answers = example_answers()
        answers[0]["answer"] = "It was 7.97%, then 7.97%, and 7.97% again (FS_UNDERNOURISH_PCT)."
        self.upload_run(jsonl(*answers), assistant_version="x-1", set_version="1.2")
        answer = Answer.objects.get(question_id="a01")
        page = self.client.get(reverse("answer-detail", args=[answer.run_id, answer.id]))
        self.assertContains(
            page,
            '<li><span class="kind unsupported">unsupported number</span> 7.97 is neither a retrieved nor an '
            'expected value <span class="times" title="found 3 times">×3</span></li>',
            count=1,
            html=True,
        )
        content = page.content.decode()
        self.assertLess(content.index('class="answer-checks"'), content.index("<h2>Answer"))


def read(assignment, *, grade="resolved", answers=None, **fields) -> Judgement:
    """A reader's judgement stored as it is kept, every rubric question "yes" unless ``answers`` says."""
    rubric_version = assignment.item.sample.rubric_version
    keys = rubric_version.questions.values_list("key", flat=True)
    return Judgement.objects.create(
        assignment=assignment,
        revision=assignment.judgements.count() + 1,
        author=assignment.reviewer,
        rubric_version=rubric_version,
        rubric_answers={**dict.fromkeys(keys, "yes"), **(answers or {})},
        grade=grade,
        submission_key=uuid.uuid4(),
        **fields,
    )


# Six double-read items on "series": reader a says yes, yes, no, no, yes, no; reader b yes, no, no, no, yes, yes.
FIRST = ["yes", "yes", "no", "no", "yes", "no"]
SECOND = ["yes", "no", "no", "no", "yes", "yes"]


class LeadScreenTestCase(TestCase):
    @classmethod
    def setUpTestData(cls):
        cls.logged_run = load_generated_run(answers=60)
        cls.lead_user = make_user("lead")
        cls.manager = make_user("manager")
        cls.a = make_user("reader_a", "reviewer")
        cls.b = make_user("reader_b", "reviewer")
        cls.sample = sample_draw(
            frame=Frame(run=cls.logged_run), size=6, seed=4, rubric_version=rubric_default()
        )
        sample_assign(sample=cls.sample, reviewers=[cls.a, cls.b], readers_per_item=2)
        cls.items = {item.position: item for item in cls.sample.items.all()}

    def pair(self, position) -> tuple[Assignment, Assignment]:
        item = self.items[position]
        return Assignment.objects.get(item=item, reviewer=self.a), Assignment.objects.get(
            item=item, reviewer=self.b
        )

    def read_series(self):
        for position, first, second in zip(range(1, 7), FIRST, SECOND, strict=True):
            a, b = self.pair(position)
            read(a, answers={"series": first})
            read(b, answers={"series": second})

    def page(self, username="lead"):
        self.client.login(username=username, password=PASSWORD)
        return self.client.get(reverse("sample-agreement", args=[self.sample.id]))


class AgreementScreenTests(LeadScreenTestCase):
    def test_it_gives_each_caution_once_for_the_page(self):
        self.read_series()
        page = self.page()
        # Six items are too few on every rating, and alpha is low on one: each said once.
        self.assertContains(page, "Too few items to read anything into", count=1)
        self.assertContains(page, "the readers do not measure the same thing yet", count=1)
        self.assertContains(
            page,
            '<li class="bad">Krippendorff\'s α is below 0.667 on <strong>series</strong>: the readers do not '
            "measure the same thing yet. Settle the rule with them before reading these ratings as findings."
            "</li>",
            count=1,
            html=True,
        )
        self.assertEqual([note["number"] for note in page.context["table"]["cautions"]], [1])
        # Each figure it concerns points to it instead: all four of series, percent agreement elsewhere.
        self.assertContains(page, 'href="#agreement-note-1"', count=4 + 5)

    def test_it_shows_a_confusion_matrix_per_question(self):
        self.read_series()
        page = self.page()
        rows = {row["key"]: row for row in page.context["table"]["rows"]}
        self.assertEqual(
            rows["series"]["matrix"],
            {
                "categories": ["yes", "no"],
                "cells": [[2, 1], [1, 2]],
                "fixed_pair": True,
                "rows_reader": "reader_a",
                "columns_reader": "reader_b",
                "pairs": 6,
            },
        )
        self.assertEqual(rows["grade"]["matrix"]["cells"], [[6]])
        self.assertContains(
            page,
            '<table class="grid confusion agreement-matrix" id="matrix-series">'
            '<caption><strong>series</strong></caption><thead><tr><th></th><th class="num" scope="col">yes</th>'
            '<th class="num" scope="col">no</th></tr></thead><tbody>'
            '<tr><th scope="row">yes</th><td class="num agree">2</td><td class="num differ">1</td></tr>'
            '<tr><th scope="row">no</th><td class="num differ">1</td><td class="num agree">2</td></tr>'
            "</tbody></table>",
            count=1,
            html=True,
        )
        self.assertEqual(page.content.decode().count('class="grid confusion agreement-matrix"'), len(rows))
        self.assertContains(page, "Rows: reader_a's rating · columns: reader_b's.", count=1)

    def test_it_counts_each_pair_of_readings_once_without_a_fixed_pair(self):
        reader_c = make_user("reader_c", "reviewer")
        sample = sample_draw(
            frame=Frame(run=self.logged_run), size=3, seed=9, rubric_version=rubric_default(), name="three"
        )
        sample_assign(sample=sample, reviewers=[self.a, self.b, reader_c], readers_per_item=3)
        for item in sample.items.all():
            for assignment, rating in zip(
                item.assignments.order_by("reviewer_id"), ["yes", "no", "no"], strict=True
            ):
                read(assignment, answers={"series": rating})
        self.client.login(username="lead", password=PASSWORD)
        page = self.client.get(reverse("sample-agreement", args=[sample.id]))
        matrix = {row["key"]: row for row in page.context["table"]["rows"]}["series"]["matrix"]
        # Three items read yes, no, no: per item one no-no pair and two yes-no pairs, under "no" in the rows.
        self.assertEqual(
            (matrix["categories"], matrix["cells"], matrix["fixed_pair"], matrix["pairs"]),
            (["yes", "no"], [[0, 0], [6, 3]], False, 9),
        )
        self.assertContains(
            page,
            '<caption><strong>series</strong> <span class="meta">9 pairs</span></caption>',
            count=1,
            html=True,
        )
        self.assertContains(
            page, "More than two readers: each pair of readings of an item is counted once", count=1
        )
        # The upper triangle repeats the lower one, so it is left blank.
        self.assertContains(
            page,
            '<tr><th scope="row">yes</th><td class="num agree">0</td>'
            '<td class="num"><span class="muted">·</span></td></tr>',
            count=1,
            html=True,
        )

    def test_it_links_each_rating_to_the_items_where_readers_differ(self):
        self.read_series()
        page = self.page()
        self.assertContains(
            page,
            f'<td class="differing">2 of 6: <a href="/lead/items/{self.items[2].id}/">item 2</a> · '
            f'<a href="/lead/items/{self.items[6].id}/">item 6</a></td>',
            count=1,
            html=True,
        )
        self.assertContains(page, '<td class="differing"><span class="muted">none</span></td>', html=True)
        # A manager cannot adjudicate: the same items lead to the sample's item pages.
        page = self.page("manager")
        self.assertContains(
            page,
            f'<td class="differing">2 of 6: <a href="/samples/{self.sample.id}/items/2/">item 2</a> · '
            f'<a href="/samples/{self.sample.id}/items/6/">item 6</a></td>',
            count=1,
            html=True,
        )

    def test_it_says_so_when_no_item_is_double_read(self):
        page = self.page()
        self.assertContains(page, "No item has been read by two readers yet", count=1)
        self.assertNotContains(page, "Read with care")


MATERIAL = {
    "error_claim": "the rate was 35",
    "error_evidence": "the record holds 41",
    "error_effect": "understates the rate",
    "error_kind": "wrong_conclusion",
}


class RegisterScreenTests(LeadScreenTestCase):
    def dismiss(self, position):
        a, b = self.pair(position)
        read(a, grade="material_error", **MATERIAL)
        read(b)
        return Adjudication.objects.create(
            item=self.items[position],
            revision=1,
            lead=self.lead_user,
            reason="the record's 41 is the 2019 figure; 35 is right for 2020",
            grade="resolved",
            material_status="dismissed",
            submission_key=uuid.uuid4(),
        )

    def test_it_keeps_the_readers_claim_beside_the_reason_for_dismissing_it(self):
        self.dismiss(1)
        self.client.login(username="lead", password=PASSWORD)
        page = self.client.get(reverse("register"), {"status": "dismissed"})
        self.assertContains(
            page,
            '<td><p class="raised"><span class="tag">reader</span> the core conclusion is wrong</p></td>'
            '<td><p class="raised">the rate was 35</p></td>'
            '<td><p class="raised">the record holds 41</p></td>'
            '<td><p class="raised">understates the rate</p></td>'
            '<td class="decision"><span class="status dismissed">dismissed</span> '
            '<span class="reason">the record\'s 41 is the 2019 figure; 35 is right for 2020</span></td>',
            count=1,
            html=True,
        )

    def test_it_exports_the_readers_claim_of_a_dismissed_error(self):
        self.dismiss(1)
        self.client.login(username="manager", password=PASSWORD)
        response = self.client.get(reverse("register"), {"status": "dismissed", "format": "csv"})
        rows = list(csv.reader(io.StringIO(response.content.decode())))
        self.assertEqual(
            rows[0][11:], ["reason", "raised_kind", "raised_claim", "raised_evidence", "raised_effect"]
        )
        self.assertEqual(
            rows[1][11:],
            [
                "the record's 41 is the 2019 figure; 35 is right for 2020",
                "wrong_conclusion",
                "the rate was 35",
                "the record holds 41",
                "understates the rate",
            ],
        )

    def test_it_links_a_manager_to_the_item_they_can_open(self):
        self.dismiss(1)
        self.client.login(username="manager", password=PASSWORD)
        page = self.client.get(reverse("register"), {"status": "dismissed"})
        self.assertContains(
            page, f'href="/samples/{self.sample.id}/items/1/" title="the item in its sample"', count=1
        )
        self.assertNotContains(page, 'href="/lead/items/')


class FindingsScreenTests(ScreenTestCase):
    def setUp(self):
        super().setUp()
        self.upload_set()
        self.upload_run(example_file(RUN_FILE))
        self.run_obj = Run.objects.get()
        self.scoring = self.run_obj.scorings.get()

    def test_it_finds_findings_by_question_id_as_a_partial(self):
        response = self.client.get(
            self.run_obj.get_absolute_url(),
            {"question": "A03"},
            HTTP_HX_REQUEST="true",
            HTTP_HX_TARGET="findings",
        )
        self.assertNotContains(response, "<html")
        self.assertEqual([f.question_id for f in response.context["findings"]], ["a03", "a03"])
        self.assertContains(
            response,
            '<input type="search" id="findings-question" name="question" value="A03" size="14" '
            'placeholder="id or part of one">',
            count=1,
            html=True,
        )

    def test_it_finds_findings_by_question_id_on_the_full_page(self):
        page = self.client.get(self.run_obj.get_absolute_url(), {"question": "a07", "kind": "citation"})
        self.assertContains(page, "<html")
        self.assertEqual([(f.question_id, f.kind) for f in page.context["findings"]], [("a07", "citation")])
        self.assertContains(page, "cited EDU_STATS_2024, which was not retrieved", count=1)
        csv_link = f"/runs/{self.run_obj.id}/scorings/{self.scoring.id}/findings.csv?kind=citation&amp;language=&amp;question=a07"
        self.assertContains(page, csv_link, count=1)

    def test_it_says_when_no_question_id_matches(self):
        page = self.client.get(self.run_obj.get_absolute_url(), {"question": "zz"})
        self.assertContains(page, "No findings for a question id holding “zz”.", count=1)

    def test_it_writes_the_csv_with_the_screens_labels_and_filters(self):
        url = reverse("export-findings", args=[self.run_obj.id, self.scoring.id, "csv"])
        rows = list(csv.reader(io.StringIO(self.client.get(url, {"question": "a03"}).content.decode())))
        self.assertEqual(rows[0], ["line", "question_id", "language", "kind", "detail", "sealed_part"])
        self.assertEqual(
            [(row[1], row[3], row[5]) for row in rows[1:]],
            [("a03", "wrong number", "no"), ("a03", "unsupported number", "no")],
        )
        every = list(csv.reader(io.StringIO(self.client.get(url).content.decode())))
        self.assertEqual(
            sorted({row[3] for row in every[1:]}),
            [
                "invalid citation",
                "should have declined",
                "unsupported number",
                "wrong number",
            ],
        )

    def test_it_keeps_the_codes_in_json(self):
        url = reverse("export-findings", args=[self.run_obj.id, self.scoring.id, "json"])
        findings = self.client.get(url, {"question": "a03"}).json()["findings"]
        self.assertEqual(
            [(f["kind"], f["sealed_part"]) for f in findings], [("numeric", False), ("unsupported", False)]
        )

    def test_it_keeps_text_that_looks_like_a_formula_harmless(self):
        self.scoring.findings.filter(question_id="a03").update(question_id="=a03")
        url = reverse("export-findings", args=[self.run_obj.id, self.scoring.id, "csv"])
        rows = list(csv.reader(io.StringIO(self.client.get(url, {"question": "=a03"}).content.decode())))
        self.assertEqual([row[1] for row in rows[1:]], ["'=a03", "'=a03"])
