"""Leads' decisions on items, and calibration items put into samples."""

from __future__ import annotations

import math
import random
import uuid
from dataclasses import dataclass

from django.db import transaction
from django.db.models import F, Max

from reviewapp.core.errors import ApplicationError
from reviewapp.core.once import create_once
from reviewapp.models import Adjudication, Assignment, CalibrationItem, Judgement, Sample, SampleItem
from reviewapp.review.calibration_patterns import PATTERNS_BY_KEY, in_both_orders, pattern_items
from reviewapp.review.selectors import latest_judgements
from reviewapp.review.services import grading
from reviewapp.review.services.review import OutcomeRefused, material_error_details_errors
from reviewapp.review.services.samples import new_alias
from scoring import logfile

CALIBRATION_GROUP_MAX_LENGTH = 100


@dataclass
class Decision:
    """A lead's decision as sent: the same answers a reader gives, with the
    reason. ``material_error`` "yes" confirms a material error, "no"
    dismisses one a reader raised (or finds none), "pending" keeps it open.
    ``grade`` and ``pending`` alone stand for the metrics they imply, as for
    JudgementInput."""

    reason: str
    addresses_question: bool = True
    rubric_answers: dict | None = None
    grade: str = ""
    pending: bool = False
    settling_evidence: str = ""
    material_status: str = ""
    error_claim: str = ""
    error_evidence: str = ""
    error_effect: str = ""
    error_kind: str = ""
    material_error: str = ""
    correctness: str = ""
    fulfilment: str = ""
    needs_more_info: bool = False


def decision_assessment(decision: Decision, *, raised: bool) -> grading.Assessment:
    """The metrics and grade ``decision`` would be stored with (services.grading.assess)."""
    return grading.assess(
        addresses_question=decision.addresses_question,
        material_error=decision.material_error,
        correctness=decision.correctness,
        fulfilment=decision.fulfilment,
        stated_grade=decision.grade,
        stated_pending=decision.pending,
        material_status=decision.material_status,
        raised=raised,
    )


def decision_field_errors(
    decision: Decision, *, previous: Adjudication | None, raised: bool
) -> dict[str, str]:
    """What a decision lacks, by form field. Every decision has a reason; the
    material-error answer and the metrics are checked and graded as a
    reader's are (contradictions refused with the rule quoted); a material
    error a reader raised is confirmed in full, dismissed or kept pending; a
    pending item is settled only by recording the evidence that settles it;
    no field holds the NUL character, which cannot be stored."""
    errors: dict[str, str] = {}
    if logfile.holds_nul(list(vars(decision).values())):
        errors["form"] = "The NUL character (\\u0000) cannot be stored: remove it."
    if not decision.reason.strip():
        errors["reason"] = "Give the reason for the decision."
    assessment = decision_assessment(decision, raised=raised)
    errors.update(assessment.errors)
    metrics, graded = assessment.metrics, assessment.graded
    if raised and not metrics.material_error:
        errors["material_error"] = (
            "A reader raised a material error: confirm it or dismiss it with the reason."
        )
    if metrics.material_error == grading.YES:
        errors.update(material_error_details_errors(decision, confirmed="confirmed "))
    settles = previous is not None and previous.pending and not graded.pending
    if settles and not decision.settling_evidence.strip():
        errors["settling_evidence"] = "Record the evidence that settles the pending item."
    return errors


def decision_errors(decision: Decision, *, previous: Adjudication | None, raised: bool) -> list[str]:
    """decision_field_errors' messages, in order."""
    return list(decision_field_errors(decision, previous=previous, raised=raised).values())


def material_error_raised(item: SampleItem) -> bool:
    """Whether a reader's latest judgement of ``item`` holds a material error
    or leaves one pending: a lead then confirms, dismisses or keeps it open."""
    return any(
        judgement.grade == Judgement.Grade.MATERIAL_ERROR
        or judgement.material_error in (grading.YES, Judgement.MaterialError.PENDING)
        for judgement in latest_judgements([item]).get(item.id, [])
    )


class DecisionConflict(ApplicationError):
    """Another lead decided the item after this one opened it; ``latest`` is
    that decision."""

    def __init__(self, latest: Adjudication):
        self.latest = latest
        super().__init__(
            f"Another lead recorded decision {latest.revision} on this item after you opened it; "
            "yours was not recorded. Read theirs, then decide again.",
            status=409,
        )


def adjudication_submit(
    *,
    item: SampleItem,
    lead,
    decision: Decision,
    submission_key: uuid.UUID,
    seen_revision: int | None = None,
) -> Adjudication:
    """Record a lead's decision as the item's next revision (a double submit
    saves once). The readers' judgements are left as they are.

    ``seen_revision`` is the item's latest decision when the lead opened it
    (0 for none): when another decision came in since, DecisionConflict is
    raised and nothing is written. The check and the write happen under a
    lock on the item, so of two leads deciding at once one is told.
    Refuses (OutcomeRefused, by field) what decision_field_errors finds.
    """
    if existing := Adjudication.objects.filter(submission_key=submission_key).first():
        return existing
    previous = item.adjudications.order_by("-revision").first()
    raised = material_error_raised(item)
    errors = decision_field_errors(decision, previous=previous, raised=raised)
    if errors:
        raise OutcomeRefused(errors)
    assessment = decision_assessment(decision, raised=raised)
    metrics, graded = assessment.metrics, assessment.graded
    material = metrics.material_error == grading.YES
    dismissed = metrics.material_error == grading.NO and (raised or decision.material_status == "dismissed")
    status = "confirmed" if material else ("dismissed" if dismissed else "")

    def create() -> Adjudication:
        SampleItem.objects.select_for_update().get(id=item.id)
        # Under the lock: the same form sent twice at once is one decision,
        # not a conflict with itself.
        if existing := Adjudication.objects.filter(submission_key=submission_key).first():
            return existing
        latest = item.adjudications.aggregate(n=Max("revision"))["n"] or 0
        if seen_revision is not None and latest > seen_revision:
            raise DecisionConflict(
                Adjudication.objects.select_related("lead").get(item=item, revision=latest)
            )
        if seen_revision is not None and latest < seen_revision:
            raise ApplicationError(
                "The form does not match this item's decisions: reload it and decide again."
            )
        return Adjudication.objects.create(
            item=item,
            revision=latest + 1,
            lead=lead,
            addresses_question=decision.addresses_question,
            rubric_answers=(decision.rubric_answers or {}) if decision.addresses_question else {},
            grade=graded.grade,
            pending=graded.pending,
            material_error=metrics.material_error,
            correctness=metrics.correctness,
            fulfilment=metrics.fulfilment,
            needs_more_info=decision.needs_more_info,
            reason=decision.reason.strip(),
            settling_evidence=decision.settling_evidence.strip(),
            material_status=status,
            error_claim=decision.error_claim.strip() if material else "",
            error_evidence=decision.error_evidence.strip() if material else "",
            error_effect=decision.error_effect.strip() if material else "",
            error_kind=decision.error_kind if material else "",
            submission_key=submission_key,
        )

    return create_once(Adjudication, submission_key, create)


def calibration_add(
    *,
    sample: Sample,
    group: str,
    question: str,
    evidence: list[dict],
    variants: dict[str, str],
    parts: tuple[str, str] = ("", ""),
    language: str = "en",
    created_by=None,
) -> list[SampleItem]:
    """Put the same facts, written in several forms, into a sample as items
    readers cannot tell from the others. Each reader of the sample gets every
    form, at random places among the items they have not judged yet.
    ``parts``, two parts of one answer, become two items more: the parts in
    order and swapped (calibration_patterns.in_both_orders).

    Refuses (ApplicationError) fewer than two forms, an unknown form, only one
    of the two parts, a missing question, a language that is not a short code
    (logfile.language_problem), a group over 100 characters or already in the
    sample, and the NUL character anywhere."""
    if logfile.holds_nul([group, question, language, evidence, variants, list(parts)]):
        raise ApplicationError("the NUL character (\\u0000) cannot be stored: remove it")
    if problem := logfile.language_problem(language):
        raise ApplicationError(f"language: {problem}")
    if where := _not_finite(evidence, "evidence"):
        raise ApplicationError(f"{where}: NaN and infinity are not values a record can hold; write a number")
    if len(group.strip()) > CALIBRATION_GROUP_MAX_LENGTH:
        raise ApplicationError(f"group: at most {CALIBRATION_GROUP_MAX_LENGTH} characters")
    variants = {form: text.strip() for form, text in variants.items() if text.strip()}
    first, second = (part.strip() for part in parts)
    if bool(first) != bool(second):
        raise ApplicationError("two parts in both orders: write both parts, or neither")
    if first:
        variants.update(in_both_orders(first, second))
    if len(variants) < 2:
        raise ApplicationError("write the same facts in at least two forms")
    # A graded variant needs the grade it should get: only a pattern issues one.
    unknown = set(variants) - (set(CalibrationItem.Form.values) - {CalibrationItem.Form.VARIANT})
    if unknown:
        raise ApplicationError(f"unknown forms: {', '.join(sorted(unknown))}")
    if not question.strip():
        raise ApplicationError("a calibration item needs its question")
    rows = [
        {
            "group": group.strip(),
            "form": form,
            "question": question.strip(),
            "answer": text,
            "evidence": evidence,
        }
        for form, text in sorted(variants.items())
    ]
    return _calibration_place(sample=sample, rows=rows, language=language, created_by=created_by)


def _not_finite(value, where: str) -> str:
    """Where in ``value`` a float is NaN or infinite (JSON cannot hold it), or empty."""
    if isinstance(value, float) and not math.isfinite(value):
        return where
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return ""
    for key, inner in items:
        if found := _not_finite(inner, f"{where}[{key!r}]" if isinstance(key, str) else f"{where}[{key}]"):
            return found
    return ""


def calibration_patterns_issue(*, sample: Sample, keys: list[str], created_by=None) -> list[SampleItem]:
    """Put spec 004's calibration patterns chosen by ``keys``
    (calibration_patterns.PATTERNS) into a sample: each graded variant becomes
    an item holding the grade it should get, placed for every reader as
    calibration_add places its items.

    Refuses (ApplicationError) no pattern, an unknown one, and one already in
    the sample (its variants would pair with the earlier copies)."""
    if not keys:
        raise ApplicationError("patterns: choose at least one pattern")
    unknown = [key for key in keys if key not in PATTERNS_BY_KEY]
    if unknown:
        raise ApplicationError(f"patterns: unknown pattern {', '.join(unknown)}")
    rows = [row for key in dict.fromkeys(keys) for row in pattern_items(PATTERNS_BY_KEY[key])]
    return _calibration_place(sample=sample, rows=rows, language="en", created_by=created_by)


def _calibration_place(*, sample: Sample, rows: list[dict], language: str, created_by) -> list[SampleItem]:
    """Store each row as a calibration item of the sample and give it to every
    reader of the sample at a random place among their unjudged items."""
    with transaction.atomic():
        locked = Sample.objects.select_for_update().get(id=sample.id)
        taken_groups = set(
            locked.items.filter(calibration__isnull=False).values_list("calibration__group", flat=True)
        )
        if clash := sorted({row["group"] for row in rows} & taken_groups):
            raise ApplicationError(
                f"group: {', '.join(clash)} is already in this sample: give it another name"
            )
        position = (locked.items.aggregate(n=Max("position"))["n"] or 0) + 1
        items = []
        for offset, row in enumerate(rows):
            calibration = CalibrationItem.objects.create(
                **{**row, "group": row["group"] or f"sample-{sample.id}-{position}"},
                language=language,
                created_by=created_by,
            )
            items.append(
                SampleItem.objects.create(
                    sample=locked, calibration=calibration, stratum="calibration", position=position + offset
                )
            )
        readers = list(
            Assignment.objects.filter(item__sample=locked)
            .order_by()
            .values_list("reviewer", flat=True)
            .distinct()
        )
        rng = random.Random(f"{locked.seed}-calibration-{position}")
        taken = set(Assignment.objects.filter(reviewer__in=readers).values_list("reviewer_id", "alias"))
        for reader in readers:
            for item in items:
                open_orders = list(
                    Assignment.objects.filter(item__sample=locked, reviewer=reader, judgements__isnull=True)
                    .order_by("order")
                    .values_list("order", flat=True)
                )
                last = Assignment.objects.filter(item__sample=locked, reviewer=reader).aggregate(
                    n=Max("order")
                )["n"]
                place = rng.choice([*open_orders, last + 1])
                Assignment.objects.filter(item__sample=locked, reviewer=reader, order__gte=place).update(
                    order=F("order") + 1
                )
                Assignment.objects.create(
                    item=item, reviewer_id=reader, alias=new_alias(rng, reader, taken), order=place
                )
    return items
