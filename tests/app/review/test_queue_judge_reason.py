"""The lead queue's "judge disagrees with people": regrade items a model
grader contradicts while its agreement with people on the regrade is low."""

import uuid

from django.urls import reverse

from reviewapp.judges.services import judging
from reviewapp.models import Assignment, ModelVerdict, SampleItem
from reviewapp.review import queue
from reviewapp.review.services.adjudication import Decision, adjudication_submit
from reviewapp.review.services.review import JudgementInput, judgement_submit
from reviewapp.review.services.samples import sample_assign
from tests.fixtures import load_generated_run, stand_in_version
from tests.helpers import PASSWORD, BaseTestCase, make_user

RUBRIC_KEYS = ("series", "period", "unit", "caveat", "unsupported_claim")


class JudgeDisagreesTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        cls.readers = [make_user("reader_a", "reviewer"), make_user("reader_b", "reviewer")]
        logged_run = load_generated_run(answers=40)
        version = stand_in_version(name="contrary judge", metrics=["rubric"])
        judge_run = judging.judge_run_estimate(judge_versions=[version], run=logged_run)
        with cls.captureOnCommitCallbacks(execute=True):
            judging.judge_run_confirm(judge_run=judge_run, draw_regrade=judging.regrade_draw)
        judge_run.refresh_from_db()
        cls.judge_run = judge_run
        cls.sample = judge_run.regrade_sample
        sample_assign(sample=cls.sample, reviewers=cls.readers, readers_per_item=2)
        cls.judge_passes = {
            answer_id: labels["grade"] == "resolved"
            for answer_id, labels in ModelVerdict.objects.filter(judge_run=judge_run).values_list(
                "answer_id", "labels"
            )
        }
        cls.items = list(SampleItem.objects.filter(sample=cls.sample).order_by("position"))

    def grade_every_item(self, *, agree_with_judge: bool) -> None:
        """Both readers give each item the same outcome: the judge's pass or
        fail, or its opposite."""
        for assignment in Assignment.objects.filter(item__sample=self.sample).select_related("item"):
            passes = self.judge_passes[assignment.item.answer_id] == agree_with_judge
            judgement_submit(
                assignment=assignment,
                author=assignment.reviewer,
                data=JudgementInput(
                    addresses_question=True,
                    rubric_answers=dict.fromkeys(RUBRIC_KEYS, "yes" if passes else "no"),
                    grade="resolved" if passes else "unresolved",
                    note="" if passes else "the records do not hold the figure given",
                ),
                submission_key=uuid.uuid4(),
            )

    def test_it_sends_each_regrade_item_the_judge_contradicts_to_a_lead(self):
        self.grade_every_item(agree_with_judge=False)
        entries = queue.lead_queue()
        self.assertEqual(len(self.items), 25)  # every answered attempt of the run: fewer than 30
        self.assertEqual({entry.item.id for entry in entries}, {item.id for item in self.items})
        self.assertTrue(all("judge disagrees with people" in entry.labels for entry in entries))
        self.assertEqual(len(queue.lead_queue(reason="judge_disagrees", sample_id=self.sample.id)), 25)

    def test_it_adds_the_reason_to_an_item_in_the_queue_for_another(self):
        spot_checked = next(item for item in self.items if not self.judge_passes[item.answer_id])
        SampleItem.objects.filter(id=spot_checked.id).update(spot_check=True)
        self.grade_every_item(agree_with_judge=False)
        entry = next(entry for entry in queue.lead_queue() if entry.item.id == spot_checked.id)
        self.assertEqual(entry.reasons, ["spot_check", "judge_disagrees"])
        self.assertEqual(entry.labels, ["spot check of a resolved item", "judge disagrees with people"])

    def test_a_lead_decision_takes_the_item_out_and_the_item_page_says_why_it_came(self):
        self.grade_every_item(agree_with_judge=False)
        first = self.items[0]
        self.client.login(username="lead", password=PASSWORD)
        page = self.client.get(reverse("adjudicate", args=[first.id]))
        self.assertContains(page, '<span class="tag">judge disagrees with people</span>', html=True)
        adjudication_submit(
            item=first,
            lead=self.lead,
            decision=Decision(
                addresses_question=True,
                rubric_answers=dict.fromkeys(RUBRIC_KEYS, "yes"),
                grade="resolved",
                reason="the readers are right",
            ),
            submission_key=uuid.uuid4(),
            seen_revision=0,
        )
        self.assertNotIn(first.id, {entry.item.id for entry in queue.lead_queue()})
        self.assertEqual(len(queue.lead_queue(reason="judge_disagrees")), 24)

    def test_it_sends_nothing_when_the_judge_agrees_with_people(self):
        self.grade_every_item(agree_with_judge=True)
        self.assertEqual(queue.lead_queue(reason="judge_disagrees"), [])
        self.assertEqual(queue.judge_disagreements(), set())
