"""The import page: a file from another tool, previewed with the versions and
mapping it suggests, then made a run whose figures come from this app's own
scorer; and spec 001's QA datasets taken as question sets."""

import json
from pathlib import Path

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import TestCase
from django.urls import reverse

from reviewapp.models import Answer, Question, Run, Score, SetVersion
from tests.helpers import PASSWORD, make_user

EXAMPLES = Path(__file__).resolve().parents[3] / "reviewapp" / "demo" / "imports"


def example(name: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, (EXAMPLES / name).read_bytes())


def ragas_import_fields(client) -> dict:
    """Upload the Ragas example and return the fields that import it as rag-1, its set from the file."""
    page = client.post(reverse("run-import"), {"file": example("ragas_example.jsonl")})
    return {
        "key": page.context["form"].initial["key"],
        "assistant_version": "rag-1",
        "set_version": "ragas-1",
        "set_from_file": "on",
        "language": "en",
        "action": "import",
    }


class ImportPageTests(TestCase):
    def setUp(self):
        make_user("lead")
        self.client.login(username="lead", password=PASSWORD)

    def start(self, upload, **fields):
        return self.client.post(reverse("run-import"), {"file": upload, **fields})

    def confirm(self, key, assistant_version, set_version, *, action="import", from_file=True, **fields):
        """Confirm a pending import in English, taking the set from the file unless ``from_file`` is False."""
        data = {"key": key, "assistant_version": assistant_version, "set_version": set_version}
        data |= {
            "language": "en",
            "action": action,
            **({"set_from_file": "on"} if from_file else {}),
            **fields,
        }
        with self.captureOnCommitCallbacks(execute=True):
            return self.client.post(reverse("run-import-confirm"), data)

    def test_a_csv_is_previewed_then_imported_under_its_mapping_and_scored(self):
        page = self.start(example("answers_example.csv"))
        self.assertEqual(page.status_code, 200)
        form = page.context["form"]
        # The columns of the file are offered for each field; nothing is stored yet.
        self.assertIn("Bot answer", dict(form.fields["map_answer"].choices))
        # What a field no column gives is read from, as scoring.imports.expected reads a reference.
        self.assertEqual(
            dict(form.fields["map_expected_values"].choices)[""],
            "default: the reference's number, when it is a number, a number with its unit or a short phrase "
            "around one number (a year that is the answer counts, the question's numbers are left out); "
            "none for a question to decline",
        )
        self.assertFalse(Run.objects.exists())
        self.assertFalse(SetVersion.objects.exists())
        mapping = {
            "map_question_id": "ID",
            "map_language": "Lang",
            "map_question": "Question",
            "map_answer": "Bot answer",
            "map_retrieved_contexts": "Sources",
            "map_retrieved_ids": "Source IDs",
            "map_cited_ids": "Cited",
            "map_declined": "Declined",
            "map_reference": "Gold answer",
            "map_expected_behaviour": "Expected",
        }
        key = form.initial["key"]
        preview = self.confirm(
            key,
            "bot-2.0",
            "csv-1",
            action="preview",
            **mapping,
        )
        self.assertEqual(preview.status_code, 200)
        lines = preview.context["preview"].lines
        self.assertEqual(lines[0]["question_id"], "q01")
        self.assertIn("7.6", lines[0]["answer"])
        self.assertFalse(Run.objects.exists())

        done = self.confirm(
            key,
            "bot-2.0",
            "csv-1",
            **mapping,
        )
        run = Run.objects.get()
        self.assertRedirects(done, run.get_absolute_url(), fetch_redirect_response=False)
        self.assertEqual(run.status, Run.Status.STORED)
        self.assertEqual(run.assistant_version.label, "bot-2.0")
        self.assertEqual(run.set_version.version, "csv-1")
        self.assertTrue(run.imported_from.startswith("CSV"))
        rows = list((EXAMPLES / "answers_example.csv").read_text().splitlines())[1:]
        self.assertEqual(run.answer_count, len(rows))
        # The figures are this app's, computed from the converted answers.
        scoring = run.scorings.get()
        self.assertEqual(scoring.status, "done")
        numeric = Score.objects.get(scoring=scoring, slice="all", measure="numeric_accuracy")
        expected_answers = Question.objects.filter(set_version=run.set_version, expected_behaviour="answer")
        self.assertEqual(numeric.n, expected_answers.count())
        q01 = json.loads(Answer.objects.get(run=run, question_id="q01").raw)
        self.assertEqual(q01["cited_ids"], ["FS_UNDERNOURISH_PCT"])
        self.assertEqual(
            Question.objects.get(set_version=run.set_version, question_id="q01").expected_values, [7.6]
        )
        # The pending file is gone once imported; a note of its run stays, for a second click.
        left = [path.name for path in (Path(self.settings_data_dir()) / "imports").glob("*")]
        self.assertEqual(len(left), 1)
        self.assertTrue(left[0].endswith(".run"))

    def settings_data_dir(self):
        from django.conf import settings

        return settings.DATA_DIR

    def test_a_ragas_file_is_recognised_and_its_passages_are_the_evidence(self):
        page = self.start(example("ragas_example.jsonl"))
        self.assertEqual(page.context["pending"].format, "ragas")
        key = page.context["form"].initial["key"]
        # The identifiers Ragas logs are read by default; "none" leaves them out.
        self.assertIn("retrieved_context_ids", page.context["form"].fields["map_retrieved_ids"].choices[0][1])
        self.confirm(
            key,
            "rag-1",
            "ragas-1",
            map_retrieved_ids="(none)",
        )
        run = Run.objects.get()
        answer = Answer.objects.filter(run=run).order_by("line_number").first()
        record = json.loads(answer.raw)
        self.assertTrue(record["retrieved_contexts"])
        self.assertEqual(record["retrieved_ids"], [])
        page = self.client.get(reverse("answer-detail", args=(run.id, answer.id)))
        self.assertContains(page, "passage 1")
        self.assertContains(page, record["retrieved_contexts"][0][:40])

    def test_nested_fields_are_offered_and_mapped_by_their_paths(self):
        samples = [
            {"id": 0, "doc": {"question": "How many legs has a spider?"}, "outputs": [["Eight."]]},
            {"id": 1, "doc": {"question": "How many legs has an ant?"}, "outputs": [["Six."]]},
        ]
        upload = SimpleUploadedFile(
            "samples_legs.jsonl", "".join(json.dumps(sample) + "\n" for sample in samples).encode()
        )
        page = self.start(upload, format="ragas")
        form = page.context["form"]
        self.assertIn("doc.question", dict(form.fields["map_question"].choices))
        self.assertIn("outputs[0][0]", dict(form.fields["map_answer"].choices))
        self.confirm(
            form.initial["key"],
            "lm-1",
            "legs-1",
            map_question_id="id",
            map_question="doc.question",
            map_answer="outputs[0][0]",
        )
        run = Run.objects.get()
        answers = [
            json.loads(answer.raw) for answer in Answer.objects.filter(run=run).order_by("line_number")
        ]
        self.assertEqual(
            [(answer["question_id"], answer["answer"]) for answer in answers],
            [("0", "Eight."), ("1", "Six.")],
        )
        self.assertEqual(
            Question.objects.get(set_version=run.set_version, question_id="1").question,
            "How many legs has an ant?",
        )

    def test_a_missing_mapped_column_is_named_and_nothing_is_stored(self):
        page = self.start(example("answers_example.csv"))
        key = page.context["form"].initial["key"]
        response = self.confirm(
            key,
            "bot-2.0",
            "csv-1",
            map_answer="Question",
            map_question_id="ID",
            map_reference="Nope",
        )
        self.assertEqual(response.status_code, 400)
        # "Nope" is not a column: the form offers only the file's columns.
        self.assertIn("map_reference", response.context["form"].errors)
        self.assertFalse(Run.objects.exists())
        self.assertFalse(SetVersion.objects.exists())

    def test_the_preview_names_a_problem_that_only_a_later_row_holds(self):
        # The first five rows are fine; line 8 repeats line 7's id. The preview
        # converts the whole file as the import will, so it says so before Import.
        rows = "".join(f"{n},q{n},a{n},{n}\n" for n in (1, 2, 3, 4, 5, 6, 6))
        upload = SimpleUploadedFile("late.csv", f"id,question,response,reference\n{rows}".encode())
        page = self.start(upload, assistant_version="bot-1", set_version="late-1")
        self.assertEqual(page.status_code, 200)
        errors = [str(error) for error in page.context["preview"].errors]
        self.assertEqual(len(errors), 1, errors)
        self.assertIn("line 8", errors[0])
        self.assertContains(page, "problem in the file")
        self.assertFalse(Run.objects.exists())

    def test_a_file_with_a_ragged_row_is_refused_naming_the_line(self):
        text = (
            "question_id,question,answer,reference\nq1,How many?,About 7.6,7.6\nq2,How many?,8.1,8.1,extra\n"
        )
        page = self.start(SimpleUploadedFile("answers.csv", text.encode()))
        key = page.context["form"].initial["key"]
        response = self.confirm(
            key,
            "bot-2.0",
            "csv-2",
        )
        self.assertEqual(response.status_code, 400)
        self.assertTrue(
            any("line 3" in error for error in response.context["errors"]), response.context["errors"]
        )
        self.assertFalse(Run.objects.exists())
        self.assertFalse(Answer.objects.exists())
        self.assertFalse(SetVersion.objects.exists())

    def test_a_file_that_is_not_what_it_says_is_refused(self):
        response = self.start(SimpleUploadedFile("answers.csv", b"PK\x03\x04" + b"\x00" * 60), format="csv")
        self.assertEqual(response.status_code, 400)
        self.assertTrue(response.context["errors"])
        self.assertFalse(any((Path(self.settings_data_dir()) / "imports").glob("*")))

    def test_the_page_says_which_references_give_expected_values(self):
        page = self.client.get(reverse("run-import"))
        self.assertContains(
            page,
            "A reference that is a number, a number with its unit or a short phrase around one number gives "
            "the expected value (a year that is the answer counts, the question's numbers are left out)",
            html=False,
        )
        self.assertNotContains(page, "Numbers in the reference become the expected values")

    def test_this_apps_own_log_is_sent_to_the_upload_page(self):
        line = {
            "question_id": "a1",
            "language": "en",
            "retrieved_ids": [],
            "retrieved_values": [],
            "answer": "x",
            "cited_ids": [],
            "declined": False,
        }
        response = self.start(SimpleUploadedFile("run.jsonl", json.dumps(line).encode()))
        self.assertEqual(response.status_code, 400)
        self.assertContains(response, "Upload a run", status_code=400)

    def test_another_persons_pending_import_cannot_be_confirmed(self):
        page = self.start(example("ragas_example.jsonl"))
        key = page.context["form"].initial["key"]
        make_user("other")
        self.client.login(username="other", password=PASSWORD)
        response = self.confirm(
            key,
            "rag-1",
            "ragas-1",
        )
        self.assertRedirects(response, reverse("run-import"), fetch_redirect_response=False)
        self.assertFalse(Run.objects.exists())

    def test_a_second_model_on_the_same_set_scores_against_the_existing_version(self):
        for label, from_file in (("rag-1", True), ("rag-2", False)):
            page = self.start(example("ragas_example.jsonl"))
            key = page.context["form"].initial["key"]
            response = self.confirm(key, label, "ragas-1", from_file=from_file)
            self.assertEqual(
                response.status_code, 302, getattr(response, "context", None) and response.context["errors"]
            )
        self.assertEqual(SetVersion.objects.count(), 1)
        second = Run.objects.get(assistant_version__label="rag-2")
        self.assertEqual(second.set_version.version, "ragas-1")
        self.assertEqual(second.scorings.get().set_version.version, "ragas-1")
        self.assertEqual(second.scorings.get().status, "done")

    def test_the_same_file_imported_again_leads_to_its_run(self):
        for from_file in ("on", ""):
            page = self.start(example("ragas_example.jsonl"))
            key = page.context["form"].initial["key"]
            fields = {"set_from_file": from_file} if from_file else {}
            response = self.confirm(
                key,
                "rag-1",
                "ragas-1",
                from_file=False,
                **fields,
            )
            self.assertEqual(response.status_code, 302)
        self.assertEqual(Run.objects.count(), 1)


class QaDatasetSetTests(TestCase):
    def setUp(self):
        make_user("lead")
        self.client.login(username="lead", password=PASSWORD)

    def test_an_open_ended_dataset_becomes_a_set_with_references(self):
        response = self.client.post(
            reverse("set-list"),
            {
                "file": example("qa_open_example.csv"),
                "version": "qa-open-1",
                "qa_task": "open",
                "qa_columns": "question=Question,reference=Reference answer,id=qid,stratum=Topic",
                "qa_language": "en",
            },
        )
        self.assertEqual(response.status_code, 302, response.context and response.context["errors"])
        question = Question.objects.get(set_version__version="qa-open-1", question_id="open-1")
        self.assertEqual(question.reference, "7.6% of the population")
        self.assertEqual(question.expected_values, [7.6])
        self.assertEqual(question.stratum, "food security")

    def test_a_multiple_choice_dataset_keeps_the_correct_option_as_reference(self):
        response = self.client.post(
            reverse("set-list"),
            {
                "file": example("qa_mc_example.jsonl"),
                "version": "qa-mc-1",
                "qa_task": "mc",
                "qa_language": "en",
            },
        )
        self.assertEqual(response.status_code, 302, response.context and response.context["errors"])
        question = Question.objects.get(set_version__version="qa-mc-1", question_id="mc-1")
        self.assertEqual(question.reference, "B. 7.6%")
        self.assertIn("A. 5.2%", question.question)

    def test_a_missing_column_is_named_and_no_set_is_made(self):
        response = self.client.post(
            reverse("set-list"),
            {
                "file": example("qa_open_example.csv"),
                "version": "qa-open-2",
                "qa_task": "open",
                "qa_columns": "question=Nope",
            },
        )
        self.assertEqual(response.status_code, 400)
        self.assertTrue(any("Nope" in error for error in response.context["errors"]))
        self.assertFalse(SetVersion.objects.exists())


class InspectImportTests(TestCase):
    """An Inspect log through the page: versions suggested from the log, its
    scores on the answer page and never on a reviewer's screen."""

    def setUp(self):
        self.lead = make_user("lead")
        self.client.login(username="lead", password=PASSWORD)

    def test_the_log_names_its_versions_and_its_scores_stay_off_the_blinded_screen(self):
        from reviewapp.review.services.review import rubric_default
        from reviewapp.review.services.samples import Frame, sample_assign, sample_draw

        page = self.start_inspect()
        form = page.context["form"]
        self.assertEqual(form.initial["assistant_version"], "openai-gpt-4o")
        self.assertEqual(form.initial["set_version"], "regional_statistics-0")
        self.assertIn("contexts", dict(form.fields["map_retrieved_contexts"].choices))
        with self.captureOnCommitCallbacks(execute=True):
            done = self.client.post(
                reverse("run-import-confirm"),
                {
                    "key": form.initial["key"],
                    "assistant_version": "openai-gpt-4o",
                    "set_version": "regional_statistics-0",
                    "set_from_file": "on",
                    "language": "en",
                    "map_retrieved_contexts": "contexts",
                    "action": "import",
                },
            )
        run = Run.objects.get()
        self.assertRedirects(done, run.get_absolute_url(), fetch_redirect_response=False)
        self.assertEqual(run.scorings.get().status, "done")
        answer = run.answers.order_by("line_number").first()
        detail = self.client.get(reverse("answer-detail", args=(run.id, answer.id)))
        self.assertContains(detail, "Inspect scorer: match")
        # Over the run: how often the log's scorer said what, apart from this app's figures.
        scored = [a.record["inspect_scores"] for a in run.answers.all() if a.record.get("inspect_scores")]
        values = [scores["match"]["value"] for scores in scored]
        self.assertTrue(values)
        self.assertEqual(run.imported_scores["match"]["n"], len(values))
        self.assertEqual(run.imported_scores["match"]["values"]["C"], values.count("C"))
        page = self.client.get(run.get_absolute_url())
        self.assertContains(page, "Inspect scorer: match")

        sample = sample_draw(
            frame=Frame(run=run), size=3, seed=1, rubric_version=rubric_default(), created_by=self.lead
        )
        reader = make_user("reader", "reviewer")
        sample_assign(sample=sample, reviewers=[reader], readers_per_item=1)
        self.client.login(username="reader", password=PASSWORD)
        for assignment in reader.assignments.all():
            screen = self.client.get(reverse("review-item", args=(sample.id, assignment.alias)))
            self.assertEqual(screen.status_code, 200)
            self.assertContains(screen, "passage 1")
            self.assertNotContains(screen, "Inspect")
            self.assertNotContains(screen, "inspect_scores")

    def start_inspect(self):
        return self.client.post(reverse("run-import"), {"file": example("inspect_example.eval")})


class CalibrationAmongPassagesTests(TestCase):
    """Among imported answers whose evidence is passages, a calibration item's
    record is shown as a passage too, so readers cannot tell it apart."""

    def test_a_calibration_item_shows_its_record_as_a_passage(self):
        from reviewapp.models import Assignment
        from reviewapp.review.services.adjudication import calibration_add
        from reviewapp.review.services.review import rubric_default
        from reviewapp.review.services.samples import Frame, sample_assign, sample_draw

        lead = make_user("lead")
        self.client.login(username="lead", password=PASSWORD)
        fields = ragas_import_fields(self.client)
        with self.captureOnCommitCallbacks(execute=True):
            self.client.post(reverse("run-import-confirm"), fields)
        sample = sample_draw(
            frame=Frame(run=Run.objects.get()),
            size=3,
            seed=1,
            rubric_version=rubric_default(),
            created_by=lead,
        )
        reader = make_user("reader", "reviewer")
        sample_assign(sample=sample, reviewers=[reader], readers_per_item=1)
        calibration_add(
            sample=sample,
            group="cal-1",
            question="What was the rate in 2024?",
            evidence=[{"id": "CAL_RATE", "label": "Rate", "values": [4.2], "period": "2024", "unit": "%"}],
            variants={"short": "4.2%.", "long": "The rate was 4.2% in 2024."},
            created_by=lead,
        )
        self.client.login(username="reader", password=PASSWORD)
        calibrations = Assignment.objects.filter(reviewer=reader, item__calibration__isnull=False)
        self.assertEqual(calibrations.count(), 2)
        for calibration in calibrations:
            screen = self.client.get(reverse("review-item", args=(sample.id, calibration.alias)))
            self.assertContains(screen, "passage 1")
            self.assertContains(screen, "CAL_RATE: Rate, 2024, %: 4.2")
            self.assertNotContains(screen, "<code>CAL_RATE</code>")


class SecondClickTests(TestCase):
    def test_a_second_click_on_import_leads_to_the_run_the_first_made(self):
        make_user("lead")
        self.client.login(username="lead", password=PASSWORD)
        fields = ragas_import_fields(self.client)
        with self.captureOnCommitCallbacks(execute=True):
            first = self.client.post(reverse("run-import-confirm"), fields)
            second = self.client.post(reverse("run-import-confirm"), fields, follow=True)
        run = Run.objects.get()
        self.assertRedirects(first, run.get_absolute_url(), fetch_redirect_response=False)
        self.assertRedirects(second, run.get_absolute_url())
        self.assertContains(second, "imported already")
        self.assertEqual(SetVersion.objects.count(), 1)
