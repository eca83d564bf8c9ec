"""The model graders' pages: judges, judge runs, export and validation."""

import json
import uuid
from unittest import mock

from django.test import override_settings
from django.urls import reverse
from django.utils.html import escape

from reviewapp import tasks
from reviewapp.celery import app
from reviewapp.judges import selectors, validation
from reviewapp.judges.services import judge_versions, judging
from reviewapp.models import (
    JudgeChunk,
    JudgeRun,
    JudgeVersion,
    ModelVerdict,
    Sample,
    ValidationItem,
    ValidationSet,
)
from reviewapp.review.services.review import JudgementInput, judgement_submit, rubric_default
from reviewapp.review.services.samples import sample_assign
from reviewapp.scorings.services import scoring_open_sealed
from scoring.stats.agreement import KAPPA_INTERVAL_METHOD
from tests.fixtures import load_generated_run, run_to_end, stand_in_version, twin
from tests.helpers import BaseTestCase, make_user

NO_CALIBRATION = "internal consistency review (no human calibration)"


def judge_form(**changes) -> dict:
    fields = {
        "provider": "stand-in",
        "model": "",
        "base_url": "",
        "options": "",
        "key_variable": "",
        "max_tokens": "1024",
        "concurrency": "1",
        "metrics": ["rubric", "faithfulness"],
        "rubric_version": str(rubric_default().id),
        "validation_threshold": "0.6",
        "validation_min_items": "50",
    }
    fields.update(changes)
    return fields


@override_settings(JUDGE_CHUNK_ANSWERS=50)  # several chunks from a small run
class JudgePagesTestCase(BaseTestCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        cls.logged_run = load_generated_run(answers=60)

    def setUp(self):
        self.client.force_login(self.lead)

    def estimate(self, version: JudgeVersion) -> JudgeRun:
        response = self.client.post(
            reverse("judge-run-new", args=[self.logged_run.id]),
            {"judge_versions": [version.id], "regrade_share": "10"},
        )
        judge_run = JudgeRun.objects.latest("id")
        self.assertRedirects(response, reverse("judge-run-detail", args=[judge_run.id]))
        return judge_run

    def confirm(self, judge_run: JudgeRun, *, execute: bool = True):
        """Confirm on the page; with ``execute`` off, plan it as the worker
        would, but leave its chunks' tasks unsent."""
        with self.captureOnCommitCallbacks(execute=execute):
            response = self.client.post(reverse("judge-run-confirm", args=[judge_run.id]))
        self.assertRedirects(response, reverse("judge-run-detail", args=[judge_run.id]))
        if not execute:
            judging.judge_run_plan(judge_run_id=judge_run.id)
        judge_run.refresh_from_db()
        return response


class JudgeEditTests(JudgePagesTestCase):
    def test_it_creates_a_judge_from_the_form(self):
        response = self.client.post(
            reverse("judge-new"),
            judge_form(
                name="grader",
                options='{"temperature": 0}',
                max_tokens="512",
                validation_threshold="0.7",
                validation_min_items="60",
            ),
        )
        self.assertRedirects(response, reverse("judge-list"))
        version = JudgeVersion.objects.get()
        self.assertEqual(
            (
                version.judge.name,
                version.number,
                version.provider,
                version.options,
                version.max_tokens,
                version.metrics,
                version.rubric_version,
                version.validation_threshold,
                version.validation_min_items,
                version.created_by,
            ),
            (
                "grader",
                1,
                "stand-in",
                {"temperature": 0},
                512,
                ["rubric", "faithfulness"],
                rubric_default(),
                0.7,
                60,
                self.lead,
            ),
        )
        listing = self.client.get(reverse("judge-list"))
        self.assertContains(listing, '<th scope="row">grader</th>', html=False)
        self.assertContains(listing, 'v1 <span class="tag">not used yet</span>')
        self.assertContains(listing, reverse("judge-validation", args=[version.judge_id]))

    def test_it_shows_each_refusal_next_to_its_field(self):
        response = self.client.post(
            reverse("judge-new"),
            judge_form(
                name="grader",
                provider="openai",
                model="m",
                options='{"api_key": "sk-1"}',
                key_variable="sk-live-123",
                metrics=[],
            ),
        )
        self.assertEqual(response.status_code, 400)
        self.assertEqual(
            response.context["form"].errors,
            {
                "options": ["a key is never stored: name its environment variable instead"],
                "key_variable": ["the name of an environment variable: capitals, digits and _"],
                "metrics": ["choose at least one metric or the rubric"],
            },
        )
        self.assertContains(
            response, "a key is never stored: name its environment variable instead", status_code=400
        )
        self.assertFalse(JudgeVersion.objects.exists())

    def test_it_asks_for_a_rubric_version_when_the_rubric_is_graded_and_for_json_options(self):
        response = self.client.post(
            reverse("judge-new"), judge_form(name="grader", rubric_version="", options="{temperature")
        )
        self.assertEqual(response.status_code, 400)
        self.assertEqual(
            response.context["form"].errors,
            {"options": ["not JSON: Expecting property name enclosed in double quotes at line 1"]},
        )
        response = self.client.post(reverse("judge-new"), judge_form(name="grader", rubric_version=""))
        self.assertEqual(
            response.context["form"].errors,
            {"rubric_version": ["choose the rubric version whose questions the judge answers"]},
        )

    def test_it_edits_a_version_that_graded_nothing_in_place(self):
        version = stand_in_version()
        page = self.client.get(reverse("judge-edit", args=[version.judge_id]))
        self.assertContains(page, "Version 1 has graded nothing yet: saving changes it in place.")
        self.assertNotContains(page, 'name="name"')
        response = self.client.post(
            reverse("judge-edit", args=[version.judge_id]), judge_form(metrics=["faithfulness"])
        )
        self.assertRedirects(response, reverse("judge-list"))
        version.refresh_from_db()
        self.assertEqual(
            (version.number, version.metrics, version.rubric_version), (1, ["faithfulness"], None)
        )
        self.assertEqual(JudgeVersion.objects.count(), 1)

    def test_it_writes_a_new_version_when_the_latest_is_frozen(self):
        version = stand_in_version(metrics=["faithfulness"])
        self.confirm(self.estimate(version))
        page = self.client.get(reverse("judge-edit", args=[version.judge_id]))
        self.assertContains(page, "Version 1 is frozen: it has graded answers. Saving writes version 2;")
        self.assertContains(page, "Save as version 2")
        response = self.client.post(
            reverse("judge-edit", args=[version.judge_id]),
            judge_form(metrics=["answer_relevance"], rubric_version=""),
        )
        self.assertRedirects(response, reverse("judge-list"))
        version.refresh_from_db()
        self.assertEqual(version.metrics, ["faithfulness"])
        latest = version.judge.versions.order_by("-number").first()
        self.assertEqual((latest.number, latest.metrics), (2, ["answer_relevance"]))


class JudgeRunTests(JudgePagesTestCase):
    def test_it_shows_the_cost_then_starts_once_on_a_double_confirm(self):
        version = stand_in_version()
        judge_run = self.estimate(version)
        self.assertEqual(judge_run.status, JudgeRun.Status.ESTIMATED)
        self.assertEqual(judge_run.regrade_share, 0.1)
        self.assertEqual(list(judge_run.judge_versions.all()), [version])
        page = self.client.get(reverse("judge-run-detail", args=[judge_run.id]))
        estimate = judge_run.estimate
        self.assertContains(page, f"<dt>calls</dt><dd><strong>{estimate['calls']:,}</strong></dd>")
        self.assertContains(
            page,
            f'<dt>prompt tokens</dt><dd><strong>{estimate["prompt_tokens"]:,}</strong> <span class="muted">an estimate;',
        )
        self.assertContains(page, f"<dt>answers</dt><dd>{estimate['answers']}</dd>")
        self.assertContains(page, "Confirm and start")
        self.assertFalse(JudgeChunk.objects.exists())

        self.confirm(judge_run)
        second = self.confirm(judge_run)
        self.assertEqual(judge_run.status, JudgeRun.Status.DONE)
        self.assertEqual((judge_run.chunks_total, JudgeChunk.objects.count()), (2, 2))
        self.assertEqual(ModelVerdict.objects.filter(judge_run=judge_run).count(), estimate["calls"])
        self.assertEqual(Sample.objects.get().id, judge_run.regrade_sample_id)
        messages = [str(message) for message in second.wsgi_request._messages]
        self.assertEqual(messages, ["This judge run is done already: nothing more was started."])

    def test_it_confirms_at_once_and_a_worker_draws_the_chunks_and_the_regrade(self):
        judge_run = self.estimate(stand_in_version())
        url = reverse("judge-run-detail", args=[judge_run.id])
        sent = []

        def send(task, *args):
            sent.append((task.name, *args))
            return True

        app.conf.task_always_eager = False
        self.addCleanup(setattr, app.conf, "task_always_eager", True)
        with mock.patch("reviewapp.tasks.send", send):
            self.confirm(judge_run)
            self.confirm(judge_run)  # a double click
        # The request drew nothing and cut nothing: it queued one task.
        self.assertEqual(sent, [("reviewapp.tasks.plan_judge_run_task", judge_run.id)])
        self.assertEqual((judge_run.status, judge_run.chunks_total), (JudgeRun.Status.QUEUED, 0))
        self.assertFalse(JudgeChunk.objects.exists())
        self.assertFalse(Sample.objects.exists())
        partial = self.client.get(url, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="progress")
        content = partial.content.decode()
        self.assertTrue(content.startswith(f'\n<section id="progress" hx-get="{url}" hx-trigger="every 1s"'))
        self.assertIn("preparing: drawing the regrade sample and cutting the answers into chunks", content)
        self.assertNotContains(self.client.get(url), "No progress for a while")

        # The worker's task, delivered twice, plans once.
        with mock.patch("reviewapp.tasks.send", send):
            for _ in range(2):
                with self.captureOnCommitCallbacks(execute=True):
                    tasks.plan_judge_run_task(judge_run.id)
        chunk_ids = list(judge_run.chunks.order_by("id").values_list("id", flat=True))
        self.assertEqual(sent[1:], [("reviewapp.tasks.judge_chunk_task", chunk_id) for chunk_id in chunk_ids])
        judge_run.refresh_from_db()
        self.assertEqual((judge_run.chunks_total, len(chunk_ids)), (2, 2))
        self.assertEqual(Sample.objects.get().id, judge_run.regrade_sample_id)
        partial = self.client.get(url, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="progress")
        self.assertIn("waiting for a worker · 0 of 2 chunks · 0 %", partial.content.decode())
        self.assertEqual(run_to_end(judge_run).status, JudgeRun.Status.DONE)
        done = self.client.get(url, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="progress")
        self.assertEqual(done["HX-Refresh"], "true")

    def test_it_refuses_an_estimate_without_a_judge(self):
        stand_in_version()
        response = self.client.post(
            reverse("judge-run-new", args=[self.logged_run.id]), {"regrade_share": "10"}
        )
        self.assertEqual(response.status_code, 400)
        self.assertEqual(response.context["form"].errors, {"judge_versions": ["This field is required."]})
        self.assertFalse(JudgeRun.objects.exists())

    def test_the_progress_partial_alone_answers_htmx_while_it_works(self):
        judge_run = self.estimate(stand_in_version())
        self.confirm(judge_run, execute=False)
        self.assertEqual(judge_run.status, JudgeRun.Status.QUEUED)
        url = reverse("judge-run-detail", args=[judge_run.id])
        partial = self.client.get(url, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="progress")
        content = partial.content.decode()
        self.assertTrue(content.startswith(f'\n<section id="progress" hx-get="{url}" hx-trigger="every 1s"'))
        self.assertIn("waiting for a worker · 0 of 2 chunks · 0 %", content)
        self.assertNotIn("<html", content)
        page = self.client.get(url)
        self.assertContains(page, "<html")
        self.assertContains(page, "waiting for a worker · 0 of 2 chunks · 0 %")
        for chunk_id in judge_run.chunks.values_list("id", flat=True):
            judging.judge_chunk_perform(chunk_id=chunk_id)
        done = self.client.get(url, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="progress")
        self.assertEqual(done["HX-Refresh"], "true")

    def test_it_cancels_and_resumes_keeping_what_was_stored(self):
        judge_run = self.estimate(stand_in_version(metrics=["faithfulness"]))
        self.confirm(judge_run, execute=False)
        first = judge_run.chunks.order_by("id").first()
        judging.judge_chunk_perform(chunk_id=first.id)
        stored = ModelVerdict.objects.filter(judge_run=judge_run).count()
        response = self.client.post(reverse("judge-run-cancel", args=[judge_run.id]))
        self.assertRedirects(response, reverse("judge-run-detail", args=[judge_run.id]))
        judge_run.refresh_from_db()
        self.assertEqual(judge_run.status, JudgeRun.Status.CANCELLED)
        self.assertEqual(
            list(judge_run.chunks.order_by("id").values_list("status", flat=True)), ["done", "cancelled"]
        )
        page = self.client.get(reverse("judge-run-detail", args=[judge_run.id]))
        self.assertContains(page, "after 1 of 2 chunks. What was stored is kept.")
        self.assertContains(page, f'action="{reverse("judge-run-resume", args=[judge_run.id])}"')
        with self.captureOnCommitCallbacks(execute=True):
            self.client.post(reverse("judge-run-resume", args=[judge_run.id]))
        judge_run.refresh_from_db()
        self.assertEqual(judge_run.status, JudgeRun.Status.DONE)
        self.assertEqual(
            ModelVerdict.objects.filter(judge_run=judge_run).count(), judge_run.estimate["calls"]
        )
        self.assertGreater(judge_run.estimate["calls"], stored)

    def test_a_stuck_run_says_so_and_resumes(self):
        judge_run = self.estimate(stand_in_version(metrics=["faithfulness"]))
        # Confirmed, but the broker never took its chunks (nothing queued them).
        self.confirm(judge_run, execute=False)
        page = self.client.get(reverse("judge-run-detail", args=[judge_run.id]))
        self.assertContains(page, "No progress for a while: no worker holds a chunk of this run.")
        with self.captureOnCommitCallbacks(execute=True):
            self.client.post(reverse("judge-run-resume", args=[judge_run.id]))
        judge_run.refresh_from_db()
        self.assertEqual(judge_run.status, JudgeRun.Status.DONE)
        self.assertEqual(
            ModelVerdict.objects.filter(judge_run=judge_run).count(), judge_run.estimate["calls"]
        )

    def test_it_counts_and_lists_each_failure_under_the_judges_label(self):
        broken = judge_versions.judge_version_save(
            name="unset key",
            provider="openai",
            model="m",
            key_variable="NO_SUCH_JUDGE_API_KEY",
            metrics=["answer_relevance"],
        )
        working = stand_in_version(metrics=["answer_relevance"])
        judge_run = judging.judge_run_estimate(judge_versions=[broken, working], run=self.logged_run)
        with self.captureOnCommitCallbacks(execute=True):
            judging.judge_run_confirm(judge_run=judge_run)
        # Opened, so that every answer is counted (test_sealed_verdicts.py: until then the sealed stay out).
        scoring_open_sealed(scoring=self.logged_run.scorings.get(), opened_by=None, reason="count them all")
        answers = judge_run.estimate["answers"]
        page = self.client.get(reverse("judge-run-detail", args=[judge_run.id]))
        self.assertContains(page, f'<h2>Failures <span class="count">{answers}</span></h2>')
        self.assertContains(
            page,
            '<td class="error-text">the openai judge&#x27;s key is read from NO_SUCH_JUDGE_API_KEY, which is not set</td>',
            count=50,
        )
        self.assertContains(page, f"page 1 of 2 · {answers} in all")
        self.assertContains(page, f'<tr title="unset key v1 (m): {NO_CALIBRATION}">')
        self.assertContains(page, f'<tr title="{selectors.judge_label(working)}: {NO_CALIBRATION}">')
        figures = {
            figure["label"]: [
                (row["metric"], row["verdicts"], row["failures"], row["undefined"]) for row in figure["rows"]
            ]
            for figure in page.context["figures"]
        }
        self.assertEqual(
            figures,
            {
                selectors.judge_label(working): [("answer_relevance", answers, 0, 0)],
                "unset key v1 (m)": [("answer_relevance", answers, answers, 0)],
            },
        )

    def test_the_export_has_a_line_per_verdict_with_its_raw_completion(self):
        version = stand_in_version(metrics=["faithfulness"])
        judge_run = self.estimate(version)
        self.confirm(judge_run)
        response = self.client.get(reverse("judge-run-export", args=[judge_run.id]))
        self.assertEqual(response["Content-Type"], "application/x-ndjson")
        self.assertEqual(
            response["Content-Disposition"], f'attachment; filename="judge-run-{judge_run.id}-verdicts.jsonl"'
        )
        lines = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
        verdicts = ModelVerdict.objects.shown().filter(judge_run=judge_run).order_by("answer_id")
        self.assertEqual(len(lines), verdicts.count())
        first = verdicts.first()
        self.assertEqual(
            lines[0],
            {
                "judge_run": judge_run.id,
                "answer_id": first.answer_id,
                "question_id": first.answer.question_id,
                "attempt": first.answer.attempt,
                "language": first.answer.language,
                "judge": "numbers",
                "judge_version": 1,
                "judge_version_id": version.id,
                "judge_label": "numbers v1 (stand-in judge (numbers only, not a language model))",
                "metric": "faithfulness",
                "score": first.score,
                "labels": first.labels,
                "error": "",
                "undefined": first.undefined,
                "raw": first.raw,
                "completions": first.completions,
                "prompt_hash": version.prompt_hash,
                "seconds": first.seconds,
                "created_at": first.created_at.isoformat(),
            },
        )
        self.assertTrue(lines[0]["raw"])
        self.assertEqual(
            set(lines[0]["completions"][0]),
            {"text", "prompt_tokens", "completion_tokens", "cached", "finish_reason"},
        )

    def test_the_run_page_lists_its_judge_runs(self):
        judge_run = self.estimate(stand_in_version())
        page = self.client.get(reverse("run-detail", args=[self.logged_run.id]))
        self.assertContains(page, reverse("judge-run-new", args=[self.logged_run.id]))
        self.assertContains(
            page,
            f'<a href="{reverse("judge-run-detail", args=[judge_run.id])}">judge run #{judge_run.id}</a>',
        )
        self.client.force_login(self.manager)
        page = self.client.get(reverse("run-detail", args=[self.logged_run.id]))
        self.assertContains(page, f"judge run #{judge_run.id}")
        self.assertNotContains(page, "Grade with judges")


class JudgeAccessTests(JudgePagesTestCase):
    def urls(self) -> dict[str, tuple[str, str]]:
        """Every judge page by URL name: (method it takes, URL)."""
        version = stand_in_version()
        judge_run = judging.judge_run_estimate(judge_versions=[version], run=self.logged_run)
        judge, run = version.judge_id, judge_run.id
        return {
            "judge-list": ("get", reverse("judge-list")),
            "judge-new": ("get", reverse("judge-new")),
            "judge-edit": ("get", reverse("judge-edit", args=[judge])),
            "judge-validation": ("get", reverse("judge-validation", args=[judge])),
            "judge-validation-draw": ("post", reverse("judge-validation-draw", args=[judge])),
            "judge-run-new": ("get", reverse("judge-run-new", args=[self.logged_run.id])),
            "judge-run-detail": ("get", reverse("judge-run-detail", args=[run])),
            "judge-run-confirm": ("post", reverse("judge-run-confirm", args=[run])),
            "judge-run-cancel": ("post", reverse("judge-run-cancel", args=[run])),
            "judge-run-resume": ("post", reverse("judge-run-resume", args=[run])),
            "judge-run-export": ("get", reverse("judge-run-export", args=[run])),
        }

    def test_a_reviewer_gets_403_on_every_judge_page(self):
        self.client.force_login(self.reviewer)
        statuses = {
            name: getattr(self.client, method)(url).status_code for name, (method, url) in self.urls().items()
        }
        self.assertEqual(statuses, dict.fromkeys(statuses, 403))
        self.assertEqual(JudgeRun.objects.get().status, JudgeRun.Status.ESTIMATED)
        self.assertNotContains(self.client.get(reverse("review-queue")), "Judges")

    def test_the_wrong_method_gets_405(self):
        statuses = {
            name: (self.client.post if method == "get" else self.client.get)(url).status_code
            for name, (method, url) in self.urls().items()
            if name not in ("judge-new", "judge-edit", "judge-run-new")
        }
        self.assertEqual(statuses, dict.fromkeys(statuses, 405))

    def test_a_manager_reads_but_never_writes(self):
        self.client.force_login(self.manager)
        urls = self.urls()
        statuses = {
            name: getattr(self.client, method)(url).status_code for name, (method, url) in urls.items()
        }
        self.assertEqual(
            statuses,
            {
                "judge-list": 200,
                "judge-new": 403,
                "judge-edit": 403,
                "judge-validation": 200,
                "judge-validation-draw": 403,
                "judge-run-new": 403,
                "judge-run-detail": 200,
                "judge-run-confirm": 403,
                "judge-run-cancel": 403,
                "judge-run-resume": 403,
                "judge-run-export": 200,
            },
        )
        listing = self.client.get(urls["judge-list"][1])
        self.assertContains(listing, f'<a href="{reverse("judge-list")}">Judges</a>')
        self.assertNotContains(listing, "New judge")
        self.assertNotContains(self.client.get(urls["judge-run-detail"][1]), "Confirm and start")


class JudgeValidationTests(JudgePagesTestCase):
    def test_it_draws_a_validation_set_and_shows_each_label_against_people(self):
        version = stand_in_version()
        judge_run = self.estimate(version)
        self.confirm(judge_run)
        # Two readers agree on each regrade item: people have settled them.
        sample = judge_run.regrade_sample
        readers = [make_user("reader-a", "reviewer"), make_user("reader-b", "reviewer")]
        for assignment in sample_assign(sample=sample, reviewers=readers, readers_per_item=2):
            resolved = assignment.item.position % 2 == 0
            judgement_submit(
                assignment=assignment,
                author=assignment.reviewer,
                data=JudgementInput(
                    addresses_question=True,
                    rubric_answers=dict.fromkeys(
                        ("series", "period", "unit", "caveat", "unsupported_claim"),
                        "yes" if resolved else "no",
                    ),
                    grade="resolved" if resolved else "unresolved",
                    note="" if resolved else "the records do not hold the figure given",
                ),
                submission_key=uuid.uuid4(),
            )
        url = reverse("judge-validation", args=[version.judge_id])
        self.assertContains(self.client.get(url), "No validation set yet")
        response = self.client.post(reverse("judge-validation-draw", args=[version.judge_id]))
        self.assertRedirects(response, url)
        drawn = ValidationSet.objects.get()
        self.assertEqual(
            (drawn.items.filter(split=ValidationItem.Split.HOLDOUT).count(), drawn.items.count()), (15, 30)
        )
        page = self.client.get(url)
        self.assertContains(page, f"seed <code>{drawn.seed}</code>")
        self.assertContains(page, "<strong>15</strong> holdout items")
        expected = validation.judge_validation(judge_version=version, validation_set=drawn)
        self.assertEqual(
            [figures.label for figures in expected.labels],
            [
                "pass",
                "grade",
                "rubric:series",
                "rubric:period",
                "rubric:unit",
                "rubric:caveat",
                "rubric:unsupported_claim",
            ],
        )
        passed = expected.label("pass")
        self.assertEqual(passed.n, 15)
        self.assertContains(
            page, 'Pass (resolved) or fail <span class="meta">label <code>pass</code> · n = 15</span>'
        )
        agreeing = 15 - len(passed.differing_items)
        self.assertContains(page, f"({agreeing}/15)")
        for position, (category, cells) in enumerate(zip(passed.categories, passed.matrix, strict=True)):
            counts = "".join(
                f'<td class="num{" agree" if column == position else ""}">{count}</td>'
                for column, count in enumerate(cells)
            )
            self.assertInHTML(
                f'<tr><th scope="row">people {category}</th>{counts}</tr>', page.content.decode()
            )
        self.assertEqual(sum(map(sum, passed.matrix)), 15)
        self.assertContains(
            page,
            f'<strong>{passed.kappa:.2f}</strong> <span title="95 % interval, {escape(KAPPA_INTERVAL_METHOD)}">'
            f"[{passed.kappa_low:.2f}, {passed.kappa_upp:.2f}]</span>",
        )
        # Why the labels are too few to validate on, in the page's words.
        people = [sum(row) for row in passed.matrix]
        self.assertContains(
            page,
            escape(
                f"people's labels: {people[0]} pass, {people[1]} fail; validation needs at least 10 of each"
            ),
        )
        self.assertContains(page, "with at least 10 of each label among people's")
        self.assertContains(
            page,
            f"<strong>Not validated</strong> for “pass”: {escape(passed.missing)}.",
        )
        self.assertIn("15 items, 50 needed", passed.missing)
        for direction in passed.errors:
            self.assertContains(
                page,
                f"<dt>{direction.title}</dt><dd>{direction.k}/{direction.n} "
                f"<strong>{direction.rate * 100:.1f} %</strong></dd>",
            )
        self.assertContains(
            page, f'<a href="{reverse("judge-run-detail", args=[judge_run.id])}">#{judge_run.id}</a>'
        )
        # The judge run's own page shows the regrade agreement beside its figures.
        regrade = validation.regrade_agreement(judge_run)
        run_page = self.client.get(reverse("judge-run-detail", args=[judge_run.id]))
        self.assertContains(
            run_page,
            f"<strong>{regrade.percent * 100:.1f} %</strong> ({regrade.agreeing}/{regrade.n} agree) on the pass label "
            f"({regrade.n} settled items of 30)",
        )
        # A model grader's mean score carries its interval, never bare.
        self.assertContains(run_page, "mean score [95 %]")
        for row in selectors.judge_run_counts(judge_run):
            if row["mean_score"] is not None:
                self.assertContains(
                    run_page,
                    f'{row["mean_score"]:.3f} <span class="ci" title="95 % interval, {row["mean_method"]}">'
                    f"[{row['mean_low']:.3f}, {row['mean_high']:.3f}]",
                )

    def test_it_says_when_nothing_settled_can_be_drawn(self):
        version = stand_in_version()
        response = self.client.post(reverse("judge-validation-draw", args=[version.judge_id]), follow=True)
        self.assertContains(
            response, "No validation set was drawn: no sample item has a settled human outcome yet"
        )
        self.assertFalse(ValidationSet.objects.exists())
        self.assertEqual(
            self.client.get(reverse("judge-validation", args=[version.judge_id]) + "?version=9").status_code,
            404,
        )


class HeadToHeadPageTests(JudgePagesTestCase):
    def test_a_head_to_head_is_started_from_the_form_and_shows_each_judges_preferences(self):
        other = twin(self.logged_run, "bot-2.0", lambda text: text.replace("2024", "2024 (999.5)"))
        version = stand_in_version(metrics=["rubric"])
        form = self.client.get(reverse("judge-run-new", args=[self.logged_run.id]))
        self.assertContains(form, f"run #{other.id} (bot-2.0)")
        response = self.client.post(
            reverse("judge-run-new", args=[self.logged_run.id]),
            {"judge_versions": [version.id], "regrade_share": "10", "other_run": other.id},
        )
        judge_run = JudgeRun.objects.latest("id")
        self.assertRedirects(response, reverse("judge-run-detail", args=[judge_run.id]))
        self.assertEqual(judge_run.other_run, other)
        self.confirm(judge_run)
        self.assertEqual((judge_run.status, judge_run.regrade_sample), ("done", None))
        page = self.client.get(reverse("judge-run-detail", args=[judge_run.id]))
        (row,) = page.context["head_to_head"]
        self.assertContains(
            page, f"run #{self.logged_run.id} against run #{other.id}, each pair asked in both orders"
        )
        self.assertContains(page, f"{row['wins']} · {row['losses']} · {row['ties']}")
        self.assertEqual(row["position_consistency"], 1.0)
        # Position consistency is shown with its k/n, not as a bare share.
        self.assertContains(page, f'<span class="k-n">{row["n"]}/{row["n"]}</span> 100.0 %')
