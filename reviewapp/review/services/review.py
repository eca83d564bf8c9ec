"""Judgements, rubrics, and failures sent back into the question set."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.db import transaction

from reviewapp.core import audit
from reviewapp.core.errors import ApplicationError, nul_field_errors
from reviewapp.core.once import create_once, next_revision
from reviewapp.models import (
    Assignment,
    Judgement,
    Question,
    Rubric,
    RubricQuestion,
    RubricVersion,
    SampleItem,
    SetVersion,
)
from reviewapp.review import defaults
from reviewapp.review.selectors import declined_answer, question_allows_na
from reviewapp.review.services import grading
from reviewapp.runs.services.question_sets import set_version_create

ANSWERS = {"yes", "no", "na"}


class OutcomeRefused(ApplicationError):
    """A judgement or decision that cannot be saved; ``fields`` holds each
    message under the form field it concerns (``errors`` lists them)."""

    def __init__(self, fields: dict[str, str]):
        self.fields = dict(fields)
        super().__init__(list(self.fields.values()))


@dataclass
class JudgementInput:
    """A reader's judgement as sent. The grade follows from
    ``material_error``, ``correctness`` and ``fulfilment``
    (services.grading); ``grade`` and ``pending`` may state it as well, and
    alone they stand for the metrics they imply (the way grades were given
    before the metrics were asked)."""

    addresses_question: bool | None
    rubric_answers: dict[str, str]
    grade: str = ""
    pending: bool = False
    borderline: bool = False
    note: str = ""
    error_claim: str = ""
    error_evidence: str = ""
    error_effect: str = ""
    error_kind: str = ""
    material_error: str = ""
    correctness: str = ""
    fulfilment: str = ""
    needs_more_info: bool = False


def material_error_details_errors(data, *, confirmed: str = "") -> dict[str, str]:
    """What a material error's record lacks, by field: its claim, the evidence
    against it, its effect on the user, and its kind. ``confirmed`` words the
    messages for a lead's decision."""
    errors = {}
    for name, label in (
        ("error_claim", "the claim"),
        ("error_evidence", "the evidence against it"),
        ("error_effect", "its effect on the user"),
    ):
        if not getattr(data, name).strip():
            errors[name] = f"A {confirmed}material error records {label}."
    if data.error_kind not in Judgement.ErrorKind.values:
        errors["error_kind"] = "Say which kind of material error it is."
    return errors


def judgement_assessment(data: JudgementInput) -> grading.Assessment:
    """The metrics and grade ``data`` would be stored with (services.grading.assess)."""
    return grading.assess(
        addresses_question=data.addresses_question is not False,
        material_error=data.material_error,
        correctness=data.correctness,
        fulfilment=data.fulfilment,
        stated_grade=data.grade,
        stated_pending=data.pending,
    )


def judgement_errors(
    data: JudgementInput, rubric_version: RubricVersion, *, declined: bool = False
) -> dict[str, str]:
    """What is missing or contradictory, by form field, all at once; empty
    when the judgement can be saved.

    In spec 004's order: whether the answer addresses the question; the
    rubric's evidence checks, for an answer that does ("na" where the rubric
    allows it, and on the figure questions of a ``declined`` answer:
    selectors.question_allows_na); whether it holds a
    material error (asked of every answer, so an off-topic answer or a wrong
    refusal can hold one), with its claim, evidence, effect and kind for a
    yes; then core-conclusion correctness and request fulfilment. Refuses
    metrics that contradict each other or a stated grade, quoting the rule,
    and an outcome other than resolved without a reason in the note (a
    material error's claim, evidence and effect are its reason).
    """
    errors: dict[str, str] = {}
    if data.addresses_question is None:
        errors["addresses_question"] = "Say first whether the answer addresses the question."
    if data.addresses_question is not False:
        for question in rubric_version.questions.all():
            answer = data.rubric_answers.get(question.key, "")
            allows_na = question_allows_na(question, declined=declined)
            if answer not in ANSWERS or (answer == "na" and not allows_na):
                allowed = "yes, no or not applicable" if allows_na else "yes or no"
                errors[f"q_{question.key}"] = f"Answer “{question.text}” with {allowed}."
    assessment = judgement_assessment(data)
    errors.update(assessment.errors)
    graded = assessment.graded
    if assessment.metrics.material_error == grading.YES:
        errors.update(material_error_details_errors(data))
    elif grading.needs_reason(graded) and not data.note.strip():
        errors["note"] = (
            f"Say why it is {grading.OUTCOME_LABELS[graded.outcome]}: every outcome but resolved "
            "needs a reason another reader can check."
        )
    errors.update(nul_field_errors(data))
    return errors


def judgement_submit(
    *, assignment: Assignment, author, data: JudgementInput, submission_key: uuid.UUID
) -> Judgement:
    """Save a judgement as the assignment's next revision, with the grade
    that follows from its metrics, and return it; the same submission key
    saves once (a double click makes one judgement). Refuses another
    reader's assignment (ApplicationError) and what judgement_errors finds
    (OutcomeRefused, by field)."""
    if assignment.reviewer_id != author.id:
        raise ApplicationError("only the assigned reader judges an item")
    if existing := Judgement.objects.filter(submission_key=submission_key).first():
        return existing
    rubric_version = assignment.item.sample.rubric_version
    errors = judgement_errors(data, rubric_version, declined=declined_answer(assignment.item))
    if errors:
        raise OutcomeRefused(errors)
    addresses = bool(data.addresses_question)
    assessment = judgement_assessment(data)
    metrics, graded = assessment.metrics, assessment.graded
    material = metrics.material_error == grading.YES

    def create() -> Judgement:
        revision = next_revision(parent=assignment, revisions=Judgement.objects.filter(assignment=assignment))
        return Judgement.objects.create(
            assignment=assignment,
            revision=revision,
            author=author,
            rubric_version=rubric_version,
            addresses_question=addresses,
            rubric_answers=data.rubric_answers if addresses else {},
            grade=graded.grade,
            pending=graded.pending,
            material_error=metrics.material_error,
            correctness=metrics.correctness,
            fulfilment=metrics.fulfilment,
            needs_more_info=data.needs_more_info,
            borderline=data.borderline,
            note=data.note.strip(),
            error_claim=data.error_claim.strip() if material else "",
            error_evidence=data.error_evidence.strip() if material else "",
            error_effect=data.error_effect.strip() if material else "",
            error_kind=data.error_kind if material else "",
            submission_key=submission_key,
        )

    return create_once(Judgement, submission_key, create)


def rubric_default() -> RubricVersion:
    """The latest version of the default rubric, written if it is missing."""
    rubric, _ = Rubric.objects.get_or_create(name=defaults.RUBRIC_NAME)
    latest = rubric.versions.order_by("-number").first()
    if latest is not None:
        return latest
    return rubric_save(
        rubric=rubric,
        guidance=defaults.GUIDANCE,
        awkward_cases=defaults.AWKWARD_CASES,
        questions=[
            {"key": key, "text": text, "allows_na": allows_na, "na_rule": na_rule}
            for key, text, allows_na, na_rule in defaults.QUESTIONS
        ],
    )


def latest_judgement(assignment: Assignment) -> Judgement | None:
    return assignment.judgements.order_by("-revision").first()


def rubric_save(
    *,
    rubric: Rubric | None = None,
    name: str = "",
    guidance: str,
    awkward_cases: list[dict],
    questions: list[dict],
    created_by=None,
) -> RubricVersion:
    """Write the rubric: into its latest version while no judgement uses it,
    else into a new version (a frozen version never changes). Without
    ``rubric``, a new rubric called ``name`` is written; a refused one leaves
    nothing behind."""
    if not questions:
        raise ApplicationError("a rubric needs at least one question")
    keys = [q["key"] for q in questions]
    if len(set(keys)) != len(keys):
        raise ApplicationError("each rubric question needs its own key")
    if too_long := _rubric_lengths(questions, name if rubric is None else ""):
        raise ApplicationError(too_long)
    if rubric is None:
        name = name.strip()
        if not name:
            raise ApplicationError("Give the rubric a name.")
        if Rubric.objects.filter(name=name).exists():
            raise ApplicationError(f"A rubric named {name!r} exists already.")
    before: list[str] = []
    with transaction.atomic():
        if rubric is None:
            rubric = Rubric.objects.create(name=name)
        latest = rubric.versions.order_by("-number").first()
        if latest is None or latest.is_frozen:
            version = RubricVersion.objects.create(
                rubric=rubric, number=(latest.number + 1) if latest else 1, created_by=created_by
            )
        else:
            version = latest
            before = [question.text for question in version.questions.all()]
            version.questions.all().delete()
        version.guidance = guidance
        version.awkward_cases = awkward_cases
        version.save(update_fields=("guidance", "awkward_cases"))
        RubricQuestion.objects.bulk_create(
            RubricQuestion(rubric_version=version, position=position, **question)
            for position, question in enumerate(questions, start=1)
        )
        # Written in bulk, so no signal logs them: the trail gets them here.
        audit.record(version, {"questions": (before, [question["text"] for question in questions])})
    return version


def _rubric_lengths(questions: list[dict], name: str) -> list[str]:
    """Each part of a rubric longer than it may be, as a sentence naming it."""
    problems = []
    limits = {field.name: field.max_length for field in RubricQuestion._meta.fields if field.max_length}
    for number, question in enumerate(questions, start=1):
        parts = (("key", "its key"), ("text", "its question"), ("na_rule", "its not-applicable rule"))
        for part, words in parts:
            length = len(question.get(part) or "")
            if length > limits[part]:
                problems.append(
                    f"question {number}: {words} is {length:,} characters, "
                    f"more than the {limits[part]:,} it may be"
                )
    name_limit = Rubric._meta.get_field("name").max_length
    if len(name.strip()) > name_limit:
        problems.append(f"the name is {len(name.strip()):,} characters, more than the {name_limit} it may be")
    return problems


def failure_into_set(
    *,
    item: SampleItem,
    version: str,
    expected_values: list[float],
    expected_caveats: list[str],
    question_text: str = "",
    created_by=None,
) -> SetVersion:
    """Put a judged item's question, with its corrected expected answer and
    caveats, into a new version of its question set, in one step."""
    answer = item.answer
    base = answer.run.set_version
    current = Question.objects.filter(set_version=base, question_id=answer.question_id).first()
    question = {
        "question_id": answer.question_id,
        "language": answer.language,
        "expected_behaviour": current.expected_behaviour if current else "answer",
        "expected_values": [float(v) for v in expected_values],
        "expected_caveats": [c.strip() for c in expected_caveats if c.strip()],
    }
    if question_text.strip():
        question["question"] = question_text.strip()
    return set_version_create(
        version=version,
        questions=[question],
        based_on=base,
        created_by=created_by,
        source_name=f"sample {item.sample_id}, item {item.position}",
        note=f"failure from review of {answer.question_id} added to the set",
    )
