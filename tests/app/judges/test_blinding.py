"""Model grades are never shown to reviewers (issue 13, item 3).

A judge has graded a run, and the run's human regrade sample is assigned to
a reviewer who has graded some of its items and not others. The test walks
every URL of reviewapp.urls with every id the fixture has, as that reviewer,
by GET and by POST, plain and as htmx, follows the redirects it is given,
and submits judgements; no response may hold the judge's name, its label,
"model grade", the word "judge" or any verdict's raw completion. The judge
pages answer the reviewer 403 (or 404, or 405 for a method they do not take;
the judge-run API, which takes tokens only, 401).
"""

from __future__ import annotations

import functools
import json
import re
import uuid

from django.test import Client, TestCase
from django.urls import reverse
from django.utils.html import escape

from reviewapp.judges import selectors
from reviewapp.judges.services import judging
from reviewapp.models import ApiToken, Assignment, ModelVerdict
from reviewapp.review.services.review import JudgementInput, judgement_submit
from reviewapp.review.services.samples import sample_assign
from tests.crawl import PageCrawl
from tests.fixtures import load_generated_run, stand_in_version
from tests.helpers import make_user

RUBRIC_KEYS = ("series", "period", "unit", "caveat", "unsupported_claim")
JUDGE_NAME = "Cassandra Oracle"
# The words that name a model grade on a page ("judged" and "judgement" are the readers' own words).
MODEL_WORDS = re.compile(r"\bjudges?\b|model[ -]grade", re.IGNORECASE)
# Public documentation of the pipeline API, the same for everyone: it names
# the judge-run operations but holds no grade. Only the data are sought there.
PUBLIC_DOCUMENTATION = {"api:openapi-json", "api:openapi-view"}


def judgement(**changes) -> dict:
    data = {
        "submission_key": str(uuid.uuid4()),
        "addresses_question": "yes",
        **{f"q_{key}": "yes" for key in RUBRIC_KEYS},
        "grade": "resolved",
    }
    data.update(changes)
    return data


class ModelGradeBlindingTests(PageCrawl, TestCase):
    @classmethod
    def setUpTestData(cls):
        cls.logged_run = load_generated_run(answers=80, assistant="blindbot-2.0", version="blind-1")
        cls.reviewer = make_user("reviewer")
        cls.lead = make_user("lead")
        cls.version = stand_in_version(name=JUDGE_NAME)
        judge_run = judging.judge_run_estimate(judge_versions=[cls.version], run=cls.logged_run)
        with cls.captureOnCommitCallbacks(execute=True):
            judging.judge_run_confirm(judge_run=judge_run, draw_regrade=judging.regrade_draw)
        judge_run.refresh_from_db()
        cls.judge_run = judge_run
        cls.sample = judge_run.regrade_sample
        sample_assign(sample=cls.sample, reviewers=[cls.reviewer], readers_per_item=1)
        cls.assignments = list(Assignment.objects.filter(reviewer=cls.reviewer).order_by("order"))
        # Blind before the reader's own grade and after it alike.
        for assignment in cls.assignments[: len(cls.assignments) // 2]:
            judgement_submit(
                assignment=assignment,
                author=cls.reviewer,
                data=JudgementInput(
                    addresses_question=True,
                    rubric_answers=dict.fromkeys(RUBRIC_KEYS, "yes"),
                    grade="resolved",
                ),
                submission_key=uuid.uuid4(),
            )
        cls.lead_token, _ = ApiToken.issue(user=cls.lead, name="ci")

    def setUp(self):
        self.client = Client()
        self.client.force_login(self.reviewer)

    def secrets(self) -> list[str]:
        """What would give a model grade away, as stored and as a page or JSON would escape it."""
        verdicts = ModelVerdict.objects.filter(judge_run=self.judge_run)
        raw = {verdict.raw for verdict in verdicts} | {
            completion["text"] for verdict in verdicts for completion in verdict.completions
        }
        raw.discard("")
        self.assertGreater(len(raw), 20)
        found = {JUDGE_NAME, selectors.judge_label(self.version), *raw}
        return sorted(found | {escape(text) for text in found} | {json.dumps(text)[1:-1] for text in found})

    def rubric_texts(self) -> list[str]:
        """What the lead wrote for readers, shown on their screens: its guidance
        says "Judge the answer…" of the readers themselves, so the words are
        sought outside it (the data are sought everywhere)."""
        rubric = self.sample.rubric_version
        texts = [rubric.guidance, *(question.text for question in rubric.questions.all())]
        texts += [
            text for case in rubric.awkward_cases for text in (case.get("case", ""), case.get("rule", ""))
        ]
        return sorted({escape(text) for text in texts if text}, key=len, reverse=True)

    def arguments(self) -> dict[str, list]:
        """Every value each URL argument takes here; a new argument fails the test until it has values."""
        item = self.assignments[0].item
        scoring = self.logged_run.scorings.get()
        return {
            "run_id": [self.logged_run.id],
            "scoring_id": [scoring.id],
            "answer_id": [item.answer_id],
            "version": [self.logged_run.set_version.version],
            "label": [self.logged_run.assistant_version.label],
            "sample_id": [self.sample.id],
            "position": [item.position],
            "item_id": [item.id],
            "rubric_id": [self.sample.rubric_version.rubric_id],
            "alias": [assignment.alias for assignment in self.assignments],
            "fmt": ["csv", "json", "jsonl"],
            "token_id": [self.lead_token.id],
            "judge_id": [self.version.judge_id],
            "judge_run_id": [self.judge_run.id],
            # No paired comparison here: its pages answer 404, its queue is empty.
            "paired_id": [self.sample.id],
            "pair_alias": [self.assignments[0].alias],
        }

    def test_no_page_a_reviewer_reaches_shows_a_model_grade(self):
        secrets = self.secrets()
        rubric_texts = self.rubric_texts()
        leaks, reached, judge_pages = [], [], []

        def look(name: str, method: str, url: str, data=None, **headers):
            response, text = self.request(method, url, data, **headers)
            variant = f"{method} {url}{' (htmx)' if headers else ''}"
            for secret in secrets:
                if secret in text:
                    leaks.append(f"{variant}: {secret[:60]!r}")
            words = MODEL_WORDS.search(
                functools.reduce(lambda page, human: page.replace(human, ""), rubric_texts, text)
            )
            if words and name not in PUBLIC_DOCUMENTATION:
                leaks.append(f"{variant}: the words {words.group(0)!r}")
            if response.status_code == 200:
                reached.append((name, method, url, bool(headers)))
            return response

        for name, url in self.urls():
            is_judge_page = bool(re.search(r"judge(?!ment)", name))
            for method in ("GET", "POST"):
                for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
                    response = look(name, method, url, **headers)
                    if is_judge_page:
                        judge_pages.append((name, method, response.status_code))
                    location = response.get("Location") or response.get("HX-Redirect")
                    if response.status_code in (301, 302) and location and location.startswith("/"):
                        look(f"{name} (followed)", "GET", location)
        # A judgement sent, plain and by htmx: the next item comes in place or by redirect.
        open_items = [assignment for assignment in self.assignments if not assignment.judgements.exists()]
        for assignment in open_items[:2]:
            url = reverse("review-item", args=[self.sample.id, assignment.alias])
            look("review-item", "POST", url, judgement())
            look("review-item", "POST", url, judgement(), HTTP_HX_REQUEST="true")
            look("review-item", "POST", url, judgement(grade=""), HTTP_HX_REQUEST="true")

        self.assertEqual(leaks, [], "\n".join(leaks))
        # The walk reached the reviewer's screens: the queue, and every item both ways.
        reached_names = {name for name, *_ in reached}
        for assignment in self.assignments:
            url = reverse("review-item", args=[self.sample.id, assignment.alias])
            self.assertIn(("review-item", "GET", url, False), reached)
            self.assertIn(("review-item", "GET", url, True), reached)
        # Nothing else of the app opens to a reviewer: sign-in (also after signing out), the
        # favicon and the public API documentation apart, only their queues, reached also from
        # the home page.
        self.assertEqual(
            reached_names,
            {
                "review-queue",
                "review-start (followed)",
                "paired-queue",
                "review-item",
                "home (followed)",
                "login",
                "logout (followed)",
                # The favicon redirects to its static file, which is public.
                "favicon (followed)",
                *PUBLIC_DOCUMENTATION,
            },
        )
        self.assertNotEqual(judge_pages, [])
        refused = [entry for entry in judge_pages if entry[2] not in (401, 403, 404, 405)]
        self.assertEqual(refused, [], "a reviewer reached a judge page")
