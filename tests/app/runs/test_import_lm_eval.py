"""lm-evaluation-harness samples on the import page and through POST
/api/imports: the same reading as ``python -m scoring.imports``, its
per-sample metrics kept beside this app's measures."""

import io
import json
from pathlib import Path

import orjson
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import TestCase
from django.urls import reverse

from reviewapp.models import ApiToken, Run
from scoring import imports
from tests.helpers import PASSWORD, make_user

CORPUS = Path(__file__).resolve().parents[3] / "bench" / "corpus" / "lm_eval"
ARC = CORPUS / "errorbars-arc" / "samples_arc_easy_2026-09-24T03-05-32.831346.jsonl"
GSM8K = CORPUS / "olot-gsm8k" / "samples_gsm8k_2025-04-30T18-24-41.082644.jsonl"


def upload(path: Path) -> SimpleUploadedFile:
    return SimpleUploadedFile(path.name, path.read_bytes())


def cli_lines(path: Path, **options) -> list[dict]:
    """What the command line's conversion makes of ``path``."""
    out = io.BytesIO()
    imports.convert(path, out, "lm-eval", imports.ImportOptions(**options))
    return [orjson.loads(line) for line in out.getvalue().splitlines()[1:]]


class LmEvalImportPageTests(TestCase):
    def setUp(self):
        make_user("lead")
        self.client.login(username="lead", password=PASSWORD)

    def test_multiple_choice_samples_are_previewed_imported_and_their_metrics_shown(self):
        page = self.client.post(reverse("run-import"), {"file": upload(ARC)})
        self.assertEqual(page.status_code, 200)
        self.assertEqual(page.context["pending"].format, "lm-eval")
        form = page.context["form"]
        # The task comes from the file's name; the model is asked for.
        self.assertEqual(form.initial["set_version"], "arc_easy")
        self.assertEqual(form.initial["assistant_version"], "")
        self.assertIn("resps", dict(form.fields["map_answer"].choices))
        self.assertContains(page, "the answer is the option with the highest loglikelihood")
        self.assertContains(page, "lm-eval metric: acc")
        with self.captureOnCommitCallbacks(execute=True):
            done = self.client.post(
                reverse("run-import-confirm"),
                {
                    "key": form.initial["key"],
                    "assistant_version": "tiny-gpt2",
                    "set_version": "arc_easy",
                    "set_from_file": "on",
                    "language": "en",
                    "action": "import",
                },
            )
        run = Run.objects.get()
        self.assertRedirects(done, run.get_absolute_url(), fetch_redirect_response=False)
        self.assertEqual(run.scorings.get().status, "done")
        self.assertTrue(run.imported_from.startswith("lm-evaluation-harness samples: "))
        # The same answers as the command line's, line for line.
        stored = [answer.record for answer in run.answers.order_by("line_number")]
        expected = cli_lines(ARC, assistant_version="tiny-gpt2", set_version="arc_easy")
        self.assertEqual([r["answer"] for r in stored], [line["answer"] for line in expected])
        self.assertEqual([r["lm_eval_scores"] for r in stored], [line["lm_eval_scores"] for line in expected])
        # lm-eval's acc over the run: 1 of 5, as the file says.
        accs = [json.loads(line)["acc"] for line in ARC.read_text().splitlines()]
        self.assertEqual(run.imported_scores["acc"]["n"], 5)
        self.assertEqual(run.imported_scores["acc"]["mean"], sum(accs) / 5)
        page = self.client.get(run.get_absolute_url())
        self.assertContains(page, "Scores from lm-eval")
        self.assertContains(page, "lm-eval metric: acc_norm")
        answer = run.answers.order_by("line_number").first()
        detail = self.client.get(reverse("answer-detail", args=(run.id, answer.id)))
        self.assertContains(detail, "lm-eval metric: acc")
        self.assertContains(detail, "lm-eval filter none")


class LmEvalImportApiTests(TestCase):
    def setUp(self):
        self.user = make_user("pipeline")
        _, key = ApiToken.issue(user=self.user, name="ci")
        self.auth = {"HTTP_AUTHORIZATION": f"Bearer {key}"}

    def post(self, data):
        with self.captureOnCommitCallbacks(execute=True):
            return self.client.post("/api/imports", data, **self.auth)

    def test_samples_are_told_from_the_file_and_become_a_run_as_the_command_line_reads_them(self):
        shown = self.post({"file": upload(GSM8K), "preview": "true"})
        self.assertEqual(shown.status_code, 200, shown.content)
        body = shown.json()
        self.assertEqual(body["format"], "lm-eval")
        self.assertEqual(body["set_version"], "gsm8k")
        self.assertIn("the file does not name the model: give the assistant version", body["notes"])
        self.assertEqual(body["lines"], cli_lines(GSM8K, assistant_version="x", set_version="gsm8k"))
        # Without the model the import is refused, saying what to give.
        refused = self.post({"file": upload(GSM8K), "format": "lm-eval"})
        self.assertEqual(refused.status_code, 400)
        self.assertIn("give the assistant version", " ".join(refused.json()["errors"]))
        self.assertFalse(Run.objects.exists())
        done = self.post({"file": upload(GSM8K), "assistant_version": "tinyllama", "columns": "answer=resps"})
        self.assertEqual(done.status_code, 201, done.content)
        run = Run.objects.get()
        self.assertEqual((run.assistant_version.label, run.set_version.version), ("tinyllama", "gsm8k"))
        self.assertEqual(
            [answer.record["answer"] for answer in run.answers.order_by("line_number")],
            [json.loads(line)["resps"][0][0] for line in GSM8K.read_text().splitlines()],
        )
        self.assertEqual(run.imported_scores["exact_match"]["n"], 3)
