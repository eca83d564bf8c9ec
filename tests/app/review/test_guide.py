"""The grader guide states every rule of spec 004's grading sections, and the
review screen, the lead's adjudication screen and the rubric page show it
alike (issue 27, point 1)."""

import html
import re

from django.test import TestCase
from django.urls import reverse

from reviewapp.models import Assignment
from reviewapp.review.services.review import rubric_default
from reviewapp.review.services.samples import Frame, sample_assign, sample_draw
from tests.fixtures import load_generated_run
from tests.helpers import PASSWORD, make_user

# Spec 004's rules, one a row: (section, the rule, a phrase the guide must hold
# for it). Kept here rather than read from the guide so that a rule dropped
# from the guide fails this test.
SPEC_004_RULES = [
    ("metrics", "core conclusion judged within the question's scope", "within the question's scope"),
    ("metrics", "request fulfilment judged only against the question", "judged only against the question"),
    ("material errors", "a yes records the claim, the evidence and the effect", "the exact claim"),
    ("material errors", "a wrong core conclusion", "the core conclusion is wrong"),
    ("material errors", "a key recommendation leading the user wrong", "do the wrong thing"),
    ("material errors", "fabricated deciding evidence", "deciding evidence is made up"),
    ("material errors", "an unverified live situation asserted as fact", "stated as confirmed fact"),
    ("material errors", "a missing necessary condition", "wrong unconditional statement"),
    ("material errors", "typos and wording that change nothing are only noted", "only noted"),
    ("material errors", "a materially wrong side recommendation", "side recommendation"),
    ("material errors", "correct but irrelevant extra information", "beside the question earns nothing"),
    ("grades", "material errors first, then coverage", "material errors first"),
    ("grades", "correct content does not offset a key error", "never makes up for a key error"),
    ("grades", "fully resolved", "Resolved:"),
    ("grades", "partially resolved", "Partially resolved:"),
    ("grades", "material error", "Material error:"),
    ("grades", "not resolved", "Unresolved:"),
    ("grades", "a wrong refusal holding a key error", "wrong refusal"),
    ("grades", "pending verification is not a grade", "not a fifth grade"),
    ("grades", "existing evidence confirming an error is graded directly", "grade it now"),
    ("grades", "needs more information coexists with a grade", "answering part and then asking"),
    ("fairness", "equivalent forms accepted", "valid route to the evidence"),
    ("fairness", "no matching of reference text, wording, headings, tool order", "tool order"),
    ("fairness", "form counts only when it hinders", "Form counts only"),
    ("fairness", "a condition is necessary only when it changes the outcome", "A condition is needed only"),
    ("fairness", "no universal demand for version fields and the like", "version fields"),
    ("fairness", "how do I debug this", "how do I debug this"),
    ("fairness", "list all: the complete set within scope", "list all"),
    ("fairness", "side topics are not omissions", "not an omission"),
    ("fairness", "premise corrections may fully resolve", "premise"),
    ("fairness", "static rules apart from live facts", "static rules"),
    ("fairness", "an admitted evidence gap, its unfinished part recorded", "evidence gap"),
    ("fairness", "missing citations are no ground for a wrong conclusion", "missing citation"),
    ("fairness", "sources a deliverable only when asked, told alike", "the same way to every setup"),
    ("fairness", "volunteered citations checked, not counted", "volunteered"),
    ("fairness", "a temporarily unreachable link", "not fabrication"),
    ("fairness", "local evidence, link path, link opening", "three separate checks"),
    ("counterexamples", "a case in scope overturning a deciding claim", "overturns a deciding claim"),
    ("counterexamples", "do not widen the question", "do not widen the question"),
    ("counterexamples", "no counterexamples section needed", "counterexamples section"),
    ("counterexamples", "an unmentioned branch is no error", "branch"),
    ("counterexamples", "in scope but skipping part is partial", "skips part of the request"),
    ("pattern 1", "a definition existing is not a call happening", "A definition existing is not a call"),
    ("pattern 1", "no business call found resolves", "no business call was found"),
    ("pattern 1", "the wrapper without judging is partial", "without judging"),
    ("pattern 1", "the monitoring entry as a request is an error", "monitoring entry"),
    ("pattern 1", "only suggesting searches is unresolved", "Only suggesting searches"),
    ("pattern 1", "never score by how often an address appears", "how often an address appears"),
    ("pattern 2", "role differences gated by state and permission", "state and permission"),
    ("pattern 2", "the differences with their conditions resolve", "with their conditions"),
    ("pattern 2", "unconditional claims about roles are errors", "owners can always act"),
    ("pattern 2", "the grader's whole control chain is not needed", "whole control chain"),
    ("pattern 3", "an outer choice and an inner data switch", "inner data switch"),
    ("pattern 3", "explaining both layers resolves", "both layers"),
    ("pattern 3", "a revision number is not a generation", "revision number"),
    ("pattern 3", "a knowledge page is not the answer key", "answer key"),
    ("calibration", "a random alias per question, seed recorded", "random alias"),
    ("calibration", "first pass hides setup, time, tool count, scores", "earlier scores"),
    ("calibration", "anonymity is limited", "anonymity is limited"),
    ("calibration", "the same facts short and long, paragraph and table", "paragraph and as a table"),
    ("calibration", "swapping two answers' order changes nothing", "swapping the order"),
    ("calibration", "calibration samples stored apart", "apart from the real questions"),
    ("calibration", "review errors, pending, partial, borderline; spot-check resolved", "spot-check"),
    ("calibration", "reasons someone else can check", "reasons another reader can check"),
    ("calibration", "length, style, tool order are no universal points", "universal plus or minus"),
    ("calibration", "model graders alone: internal consistency review", "internal consistency review"),
]


def guide_text(page_html: str) -> str:
    """The text of the page's grader guide, tags dropped and spaces folded."""
    found = re.search(r'<div class="grader-guide"[^>]*>(.*?)</div>', page_html, re.DOTALL)
    assert found, "the page holds no grader guide"
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", found.group(1))).split())


class GraderGuideTests(TestCase):
    @classmethod
    def setUpTestData(cls):
        cls.lead = make_user("lead")
        cls.reader = make_user("reader", "reviewer")
        run = load_generated_run(answers=20)
        cls.sample = sample_draw(frame=Frame(run=run), size=3, seed=3, rubric_version=rubric_default())
        sample_assign(sample=cls.sample, reviewers=[cls.reader])

    def guide_on(self, username, url) -> str:
        self.client.login(username=username, password=PASSWORD)
        response = self.client.get(url)
        self.assertEqual(response.status_code, 200, url)
        return guide_text(response.content.decode())

    def pages(self):
        assignment = Assignment.objects.filter(reviewer=self.reader).order_by("order").first()
        return {
            "review screen": ("reader", reverse("review-item", args=[self.sample.id, assignment.alias])),
            "adjudication screen": ("lead", reverse("adjudicate", args=[assignment.item_id])),
            "rubric page": ("lead", reverse("rubric-list")),
        }

    def test_it_states_every_rule_of_spec_004_on_each_page(self):
        for name, (username, url) in self.pages().items():
            text = self.guide_on(username, url).casefold()
            missing = [rule for _, rule, phrase in SPEC_004_RULES if phrase.casefold() not in text]
            self.assertEqual(missing, [], name)

    def test_it_is_the_same_guide_on_each_page(self):
        texts = {name: self.guide_on(*where) for name, where in self.pages().items()}
        self.assertEqual(len(set(texts.values())), 1, list(texts))
