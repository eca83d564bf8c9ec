"""Judgements, rubrics, and failures sent back into the question set."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import Max

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
from reviewapp.services.question_sets import set_version_create
from reviewapp.services.uploads import UploadRejected

ANSWERS = {"yes", "no", "na"}


@dataclass
class JudgementInput:
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


def judgement_errors(data: JudgementInput, rubric_version: RubricVersion) -> dict[str, str]:
    """What is missing or wrong, by field; empty when the judgement can be saved.

    In spec 004's order: does the answer address the question; then every
    rubric question; then a grade, or pending verification. A material error
    needs its claim, the evidence against it, its effect and its kind.
    """
    errors: dict[str, str] = {}
    if data.addresses_question is None:
        return {"addresses_question": "Say first whether the answer addresses the question."}
    if not data.addresses_question:
        return errors
    for question in rubric_version.questions.all():
        answer = data.rubric_answers.get(question.key, "")
        if answer not in ANSWERS or (answer == "na" and not question.allows_na):
            allowed = "yes, no or not applicable" if question.allows_na else "yes or no"
            errors[f"q_{question.key}"] = f"Answer “{question.text}” with {allowed}."
    if data.pending and data.grade:
        errors["grade"] = "Pending verification is not a grade: choose one or the other."
    elif not data.pending and data.grade not in Judgement.Grade.values:
        errors["grade"] = "Choose a grade, or pending verification."
    if data.grade == Judgement.Grade.MATERIAL_ERROR:
        for name, label in (
            ("error_claim", "the claim"),
            ("error_evidence", "the evidence against it"),
            ("error_effect", "its effect on the user"),
        ):
            if not getattr(data, name).strip():
                errors[name] = f"A material error records {label}."
        if data.error_kind not in Judgement.ErrorKind.values:
            errors["error_kind"] = "Say which kind of material error it is."
    return errors


def judgement_submit(
    *, assignment: Assignment, author, data: JudgementInput, submission_key: uuid.UUID
) -> Judgement:
    """Save a judgement as the assignment's next revision; the same
    submission key saves once (a double click makes one judgement). Refuses
    an incomplete judgement (UploadRejected with the fields' messages)."""
    if assignment.reviewer_id != author.id:
        raise UploadRejected("only the assigned reader judges an item")
    if existing := Judgement.objects.filter(submission_key=submission_key).first():
        return existing
    rubric_version = assignment.item.sample.rubric_version
    errors = judgement_errors(data, rubric_version)
    if errors:
        raise UploadRejected(list(errors.values()))
    addresses = bool(data.addresses_question)
    material = addresses and data.grade == Judgement.Grade.MATERIAL_ERROR

    def create() -> Judgement:
        # Lock the assignment so that two revisions never take one number.
        Assignment.objects.select_for_update().get(id=assignment.id)
        latest = Judgement.objects.filter(assignment=assignment).aggregate(n=Max("revision"))["n"]
        return Judgement.objects.create(
            assignment=assignment,
            revision=(latest or 0) + 1,
            author=author,
            rubric_version=rubric_version,
            addresses_question=addresses,
            rubric_answers=data.rubric_answers if addresses else {},
            grade=data.grade if addresses and not data.pending else "",
            pending=addresses and data.pending,
            borderline=data.borderline,
            note=data.note.strip(),
            error_claim=data.error_claim.strip() if material else "",
            error_evidence=data.error_evidence.strip() if material else "",
            error_effect=data.error_effect.strip() if material else "",
            error_kind=data.error_kind if material else "",
            submission_key=submission_key,
        )

    return create_once(Judgement, submission_key, create)


def create_once(model, submission_key: uuid.UUID, create):
    """Run ``create`` in a transaction unless a row with this one-time key
    exists; when two requests race with the same key, the loser returns the
    winner's row."""
    try:
        with transaction.atomic():
            return create()
    except IntegrityError:
        existing = model.objects.filter(submission_key=submission_key).first()
        if existing is None:
            raise
        return existing


def rubric_default() -> RubricVersion:
    """The latest version of the default rubric, written if it is missing."""
    from reviewapp import defaults

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
        raise UploadRejected("a rubric needs at least one question")
    keys = [q["key"] for q in questions]
    if len(set(keys)) != len(keys):
        raise UploadRejected("each rubric question needs its own key")
    if rubric is None:
        name = name.strip()
        if not name:
            raise UploadRejected("Give the rubric a name.")
        if Rubric.objects.filter(name=name).exists():
            raise UploadRejected(f"A rubric named {name!r} exists already.")
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
            version.questions.all().delete()
        version.guidance = guidance
        version.awkward_cases = awkward_cases
        version.save(update_fields=("guidance", "awkward_cases"))
        RubricQuestion.objects.bulk_create(
            RubricQuestion(rubric_version=version, position=position, **question)
            for position, question in enumerate(questions, start=1)
        )
    return version


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
