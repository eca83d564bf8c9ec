"""Nothing on a reader's screens tells the two runs of a paired comparison
apart (issue 14, item 4).

Two versions of an assistant answered one set; a paired sample of their
answers, named after them, is assigned to a reader with repeats, and the
reader has judged some pairs and not others. The test walks every URL of
reviewapp.urls with every id the fixture has, as that reader, by GET and by
POST, plain and as htmx, follows the redirects it is given, and submits
judgements (saved, and refused); no response may hold either assistant
version's label, the assistant's name, a run's id, file name or digest, the
set version, the sample's name, or words that name a run or a side ("run A",
"baseline", "left is", "A better", "repeat", …). The reader reaches every
one of their pairs both ways, and none of the leads' paired pages.
"""

from __future__ import annotations

import json
import re
import uuid

from django.test import Client, TestCase
from django.urls import reverse
from django.utils.html import escape

from reviewapp.paired.models import PairedAssignment
from reviewapp.paired.services import PairedInput, paired_assign, paired_draw, paired_judgement_submit
from reviewapp.review.services.review import rubric_default
from reviewapp.review.services.samples import Frame, sample_assign, sample_draw
from tests.crawl import PageCrawl
from tests.fixtures import load_generated_run, twin
from tests.helpers import make_user

# Words that would name a run or a side; the public API documentation, the
# same for everyone, is searched for the data only (it documents the gate's
# baseline and candidate and runs' repeats).
SIDE_WORDS = [
    re.compile(pattern, flags)
    for pattern, flags in (
        (r"\b(left|right) is\b", re.IGNORECASE),
        (r"\b(run|version|side|model|assistant) [AB]\b", re.IGNORECASE),
        (r"\b(baseline|candidate)\b", re.IGNORECASE),
        (r"\brepeat", re.IGNORECASE),
        (r"\bswapped\b", re.IGNORECASE),
        (r"a_is_first|run_a|run_b|answer_a|answer_b", re.IGNORECASE),
        (r"\b[AB] (better|first|second)\b", 0),
        (r"\b(answer|Answer) [AB]\b", 0),
        (r"\b[AB]'s answer\b", 0),
        (r"\((A|B)\)", 0),
    )
]
PUBLIC_DOCUMENTATION = {"api:openapi-json", "api:openapi-view"}
LEADS_PAIRED_PAGES = {"paired-list", "paired-new", "paired-detail", "paired-assign", "paired-decide"}


def judgement(**changes) -> dict:
    data = {
        "submission_key": str(uuid.uuid4()),
        "grade_1": "resolved",
        "grade_2": "unresolved",
        "note_2": "only a plan",
        "better": "1",
    }
    data.update(changes)
    return data


class PairedBlindingTests(PageCrawl, TestCase):
    @classmethod
    def setUpTestData(cls):
        cls.run_a = load_generated_run(answers=40, assistant="hushbot-4.1", version="hush-1")
        cls.run_b = twin(cls.run_a, "hushbot-5.0", change=lambda text: text + " See also the annex.")
        cls.reader = make_user("reader", "reviewer")
        cls.lead = make_user("lead")
        cls.paired = paired_draw(
            run_a=cls.run_a,
            run_b=cls.run_b,
            size=10,
            seed=13,
            readers_per_item=1,
            repeat_share=0.3,
            name="hushbot-4.1 (baseline) against hushbot-5.0 (candidate)",
        )
        paired_assign(paired_sample=cls.paired, reviewers=[cls.reader], readers_per_item=1)
        cls.assignments = list(PairedAssignment.objects.filter(reviewer=cls.reader).order_by("order"))
        # Blind before the reader's own judgement and after it alike.
        for assignment in cls.assignments[::2]:
            paired_judgement_submit(
                assignment=assignment,
                author=cls.reader,
                data=PairedInput(grade_first="resolved", grade_second="resolved", better="equal"),
                submission_key=uuid.uuid4(),
            )
        # An ordinary sample of one of the runs, read by the same reader: its
        # screens may not name the run either.
        cls.sample = sample_draw(frame=Frame(run=cls.run_a), size=3, seed=2, rubric_version=rubric_default())
        cls.sample_assignments = sample_assign(sample=cls.sample, reviewers=[cls.reader], readers_per_item=1)

    def setUp(self):
        self.client = Client()
        self.client.force_login(self.reader)

    def secrets(self) -> list[str]:
        """What would tell the runs apart, as stored and as a page or JSON would escape it."""
        found = {self.paired.name, self.run_a.set_version.version}
        for run in (self.run_a, self.run_b):
            found |= {run.assistant_version.label, run.assistant_version.assistant.name, run.file_name}
            found |= {run.sha256} - {""}
        return sorted(found | {escape(text) for text in found} | {json.dumps(text)[1:-1] for text in found})

    def run_ids(self) -> re.Pattern:
        ids = "|".join(str(run.id) for run in (self.run_a, self.run_b))
        return re.compile(rf"\bruns?[ /#]*(?:{ids})\b|/runs/(?:{ids})/", re.IGNORECASE)

    def arguments(self) -> dict[str, list]:
        """Every value each URL argument takes here; a new argument fails the test until it has values."""
        item = self.sample_assignments[0].item
        scoring = self.run_a.scorings.get()
        return {
            "run_id": [self.run_a.id, self.run_b.id],
            "scoring_id": [scoring.id],
            "answer_id": [item.answer_id],
            "version": [self.run_a.set_version.version],
            "label": [self.run_a.assistant_version.label, self.run_b.assistant_version.label],
            "sample_id": [self.sample.id],
            "position": [1, 2],
            "item_id": [item.id],
            "rubric_id": [self.sample.rubric_version.rubric_id],
            "alias": [assignment.alias for assignment in self.sample_assignments],
            "fmt": ["csv", "json", "jsonl"],
            "token_id": [1],
            "judge_id": [1],
            "judge_run_id": [1],
            "paired_id": [self.paired.id],
            "pair_alias": [assignment.alias for assignment in self.assignments],
        }

    def test_no_page_a_reader_reaches_tells_the_runs_apart(self):
        secrets = self.secrets()
        run_ids = self.run_ids()
        leaks, reached, lead_pages = [], [], []

        def look(name: str, method: str, url: str, data=None, **headers):
            response, text = self.request(method, url, data, **headers)
            variant = f"{method} {url}{' (htmx)' if headers else ''}"
            leaks.extend(f"{variant}: {secret[:60]!r}" for secret in secrets if secret in text)
            if name not in PUBLIC_DOCUMENTATION:
                if found := run_ids.search(text):
                    leaks.append(f"{variant}: {found.group(0)!r}")
                for words in SIDE_WORDS:
                    if found := words.search(text):
                        leaks.append(f"{variant}: the words {found.group(0)!r}")
            if response.status_code == 200:
                reached.append((name, method, url, bool(headers)))
            return response

        for name, url in self.urls():
            for method in ("GET", "POST"):
                for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
                    response = look(name, method, url, **headers)
                    if name in LEADS_PAIRED_PAGES:
                        lead_pages.append((name, method, response.status_code))
                    location = response.get("Location") or response.get("HX-Redirect")
                    if response.status_code in (301, 302) and location and location.startswith("/"):
                        look(f"{name} (followed)", "GET", location)
        # Judgements sent, plain and by htmx: the next pair comes in place or by redirect; a refused one stays.
        open_pairs = [assignment for assignment in self.assignments if not assignment.judgements.exists()]
        for assignment in open_pairs[:3]:
            url = reverse("paired-item", args=[self.paired.id, assignment.alias])
            look("paired-item", "POST", url, judgement())
            look("paired-item", "POST", url, judgement(), HTTP_HX_REQUEST="true")
            look("paired-item", "POST", url, judgement(note_2="", better=""))
            look("paired-item", "POST", url, judgement(grade_1=""), HTTP_HX_REQUEST="true")
        last = self.assignments[-1]
        look("paired-item", "POST", reverse("paired-item", args=[self.paired.id, last.alias]), judgement())

        self.assertEqual(leaks, [], "\n".join(leaks))
        # The walk reached the reader's paired screens: the queue, and every pair (repeats too) both ways.
        self.assertEqual(len(self.assignments), 13)
        for assignment in self.assignments:
            url = reverse("paired-item", args=[self.paired.id, assignment.alias])
            self.assertIn(("paired-item", "GET", url, False), reached)
            self.assertIn(("paired-item", "GET", url, True), reached)
        reached_names = {name for name, *_ in reached}
        self.assertTrue({"paired-queue", "paired-start (followed)"} <= reached_names)
        # None of the leads' paired pages opens to a reader.
        self.assertNotEqual(lead_pages, [])
        opened = [entry for entry in lead_pages if entry[2] not in (403, 405)]
        self.assertEqual(opened, [], "a reader reached a lead's paired page")

    def test_the_reader_screen_shows_only_neutral_labels(self):
        assignment = self.assignments[0]
        response = self.client.get(reverse("paired-item", args=[self.paired.id, assignment.alias]))
        text = response.content.decode()
        self.assertEqual(re.findall(r'data-place="([^"]*)"', text), ["1", "2", "1", "2"])
        self.assertEqual(set(re.findall(r"\bAnswer (\w)\b", text)), {"1", "2"})
