"""Spec 004's three calibration patterns as items a lead can put into a
sample: for each, a question, the evidence a reader sees, and one answer per
graded variant with the grade spec 004 expects of it. The texts are written
for this app, free of any business detail, so they test the reader's rule
and not their knowledge of a system.

The fully resolved answer of each pattern is written in two parts and issued
in both orders (forms "ordered" and "swapped"): the review screen shows one
answer at a time, so two parts swapped within one answer is the display
order a reader can actually be shown differently. Each pair expects one grade.
"""

from __future__ import annotations

from dataclasses import dataclass

from reviewapp.review.models import CalibrationItem, Outcome

Grade = Outcome.Grade
Form = CalibrationItem.Form

# The pairs spec 004 names, each expected to get one grade: its two forms.
PAIR_KINDS = {
    "short_long": ("short and long", (Form.SHORT, Form.LONG)),
    "paragraph_table": ("paragraph and table", (Form.PARAGRAPH, Form.TABLE)),
    "swapped_order": ("two parts in swapped order", (Form.ORDERED, Form.SWAPPED)),
}


@dataclass(frozen=True)
class Variant:
    expected_grade: str
    answer: str


@dataclass(frozen=True)
class Pattern:
    key: str
    title: str
    lesson: str
    question: str
    # Records as a log carries them (selectors.item_content shows them).
    evidence: tuple[dict, ...]
    # The fully resolved answer's two parts, issued in both orders.
    resolved_parts: tuple[str, str]
    # The other graded variants, one item each.
    variants: tuple[Variant, ...]


def in_both_orders(first: str, second: str) -> dict[str, str]:
    """The same two parts as one answer each way round, by form."""
    return {Form.ORDERED: f"{first}\n\n{second}", Form.SWAPPED: f"{second}\n\n{first}"}


def _record(record_id: str, label: str) -> dict:
    return {"id": record_id, "label": label, "values": [], "period": "", "unit": "", "caveats": []}


PATTERNS = (
    Pattern(
        key="definition-not-call",
        title="A definition existing is not a call happening",
        lesson=(
            "Grade the real meaning and the user's intent, allow correcting the premise, "
            "and never score by how often an address appears."
        ),
        question="Where do the web pages still call the old status endpoint /v1/status?",
        evidence=(
            _record("CODE-1", "Shared client module: a request function for /v1/status is defined"),
            _record("CODE-2", "Monitoring list: /v1/status is registered as an address to watch"),
            _record(
                "CODE-3",
                "Search of every page in scope: no caller of that request function; "
                "the pages request /v2/status",
            ),
        ),
        resolved_parts=(
            "Within the pages checked, nothing calls /v1/status any more: the pages request /v2/status.",
            "The old address still appears twice, but neither is a call: the shared client keeps a "
            "request function for it that no page uses, and the monitoring list only registers it.",
        ),
        variants=(
            Variant(
                Grade.PARTIAL,
                "The shared client module defines a request function for /v1/status.",
            ),
            Variant(
                Grade.MATERIAL_ERROR,
                "The pages still call /v1/status: the monitoring list sends requests to it.",
            ),
            Variant(
                Grade.UNRESOLVED,
                "Search the code for /v1/status and for the request function's name, "
                "then check the monitoring settings.",
            ),
        ),
    ),
    Pattern(
        key="role-state-permission",
        title="Role differences are also gated by state and permission",
        lesson=(
            "Counterexamples test unconditional generalizations. Necessary conditions come from "
            "the question's scope; the answer need not show the grader's whole control chain."
        ),
        question="On the list page, what can an item's owner do that other users cannot?",
        evidence=(
            _record("RULE-1", "Edit: shown to the owner while the item is a draft"),
            _record(
                "RULE-2", "Withdraw: shown to the owner while the item is under review, for requests only"
            ),
            _record(
                "RULE-3",
                "Details entry: shown when the details switch is on and the user's organization "
                "holds the viewing grant, whether or not the user owns the item",
            ),
        ),
        resolved_parts=(
            "Only the owner gets Edit, and only while the item is a draft; only the owner gets Withdraw, "
            "and only for a request under review.",
            "The details entry is not an owner privilege: it appears when the details switch is on and "
            "the user's organization holds the viewing grant, so other users can reach it too.",
        ),
        variants=(
            Variant(
                Grade.MATERIAL_ERROR,
                "The owner can always edit and withdraw the item; "
                "other users see no actions on the list page.",
            ),
        ),
    ),
    Pattern(
        key="outer-choice-inner-data",
        title="An outer choice and an inner data switch are different layers",
        lesson=(
            "When existing knowledge misses the parent-level condition, go back to the source and "
            "correct the criteria; do not treat a knowledge page as the answer key."
        ),
        question=(
            "The current workflow is the new version. "
            "If I open an old snapshot, do I get the old screen back?"
        ),
        evidence=(
            _record("CODE-4", "Parent page: picks the screen component from the current workflow's version"),
            _record(
                "CODE-5", "Snapshot switcher inside the component: replaces the data shown, not the component"
            ),
            _record(
                "CODE-6", "Snapshot record: holds a revision number; the workflow version is stored apart"
            ),
        ),
        resolved_parts=(
            "No: the parent page chooses the screen from the current workflow, which is the new version, "
            "and switching to an old snapshot inside it only changes the data shown.",
            "Only a different component would render history by its own version. The snapshot's revision "
            "number is not the workflow version, so it does not decide which screen you see.",
        ),
        variants=(
            Variant(
                Grade.MATERIAL_ERROR,
                "Yes: opening an old snapshot always restores the old screen, because its revision number "
                "tells the page which version to render.",
            ),
        ),
    ),
)

PATTERNS_BY_KEY = {pattern.key: pattern for pattern in PATTERNS}


def pattern_items(pattern: Pattern) -> list[dict]:
    """The calibration items one pattern issues: its fully resolved answer in
    both orders, then each other variant, each with its expected grade."""
    items = [
        {"form": form, "answer": text, "expected_grade": Grade.RESOLVED}
        for form, text in in_both_orders(*pattern.resolved_parts).items()
    ]
    items += [
        {"form": Form.VARIANT, "answer": variant.answer, "expected_grade": variant.expected_grade}
        for variant in pattern.variants
    ]
    return [
        {**item, "group": pattern.key, "question": pattern.question, "evidence": list(pattern.evidence)}
        for item in items
    ]
