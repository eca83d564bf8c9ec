"""The lead queue: judged items that need a lead, with why. Besides the
readers' own reasons (review.selectors.reasons_for), a regrade item that a
model grader contradicts while its agreement with people is low is there as
"judge disagrees with people"; that one reason comes from judges/, which is why
the queue is a module of its own above both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from reviewapp.judges.validation import regrade_disagreements
from reviewapp.models import Adjudication, Judgement, JudgeRun, SampleItem
from reviewapp.review.selectors import REASONS, latest_decisions, latest_judgements, reasons_for


@dataclass
class QueueEntry:
    item: SampleItem
    reasons: list[str]
    judgements: list[Judgement]
    since: datetime
    decision: Adjudication | None = None
    labels: list[str] = field(default_factory=list)


def judge_disagreements(*, sample_id: int | None = None) -> set[int]:
    """Ids of the human regrade items (spec 002) whose settled human outcome a
    model grader contradicts, on the judge runs whose regrade agreement fell
    below the judge version's validation threshold; only regrade samples
    with judgements are asked, and only ``sample_id``'s when given."""
    judge_runs = JudgeRun.objects.filter(
        regrade_sample__isnull=False, regrade_sample__items__assignments__judgements__isnull=False
    ).distinct()
    if sample_id:
        judge_runs = judge_runs.filter(regrade_sample_id=sample_id)
    return {item.id for judge_run in judge_runs for item in regrade_disagreements(judge_run)}


def item_reasons(
    item: SampleItem, judgements: list[Judgement], *, disagreed: set[int] | None = None
) -> list[str]:
    """Why an item needs a lead: the readers' reasons (reasons_for) and, for a
    regrade item in ``disagreed`` (judge_disagreements, asked for the item's
    sample when not given), "judge_disagrees"."""
    reasons = reasons_for(item, judgements)
    if disagreed is None:
        disagreed = judge_disagreements(sample_id=item.sample_id)
    if item.id in disagreed:
        reasons.append("judge_disagrees")
    return reasons


def lead_queue(
    *, reason: str = "", sample_id: int | None = None, language: str = "", reader_id: int | None = None
):
    """Every judged item that needs a lead and has no final decision since
    its latest judgement, oldest first. Besides the readers' own reasons
    (reasons_for), a regrade item the judge contradicts, while the regrade
    does not show the judge agrees, is there as "judge disagrees with people"."""
    items = SampleItem.objects.filter(assignments__judgements__isnull=False).distinct()
    if sample_id:
        items = items.filter(sample_id=sample_id)
    if reader_id:
        items = items.filter(assignments__reviewer_id=reader_id)
    items = list(items.select_related("sample", "answer__run__assistant_version", "calibration"))
    judged = latest_judgements(items)
    decisions = latest_decisions(items)
    disagreed = judge_disagreements(sample_id=sample_id)
    entries = []
    for item in items:
        judgements = judged.get(item.id, [])
        item_language = item.calibration.language if item.calibration_id else item.answer.language
        if language and item_language != language:
            continue
        reasons = item_reasons(item, judgements, disagreed=disagreed)
        decision = decisions.get(item.id)
        last_judged = max(j.created_at for j in judgements)
        settled = decision is not None and not decision.pending and decision.created_at >= last_judged
        if not reasons or settled:
            continue
        if reason and reason not in reasons:
            continue
        entries.append(
            QueueEntry(
                item=item,
                reasons=reasons,
                judgements=judgements,
                since=min(j.created_at for j in judgements),
                decision=decision,
                labels=[REASONS[r] for r in reasons],
            )
        )
    return sorted(entries, key=lambda entry: (entry.since, entry.item.id))
