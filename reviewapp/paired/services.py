"""Blinded comparison of two runs by people: the paired sample's draw, its
assignment to readers (places, aliases and swapped repeats from the recorded
seed), readers' judgements and leads' decisions, and the figures on the
settled pairs (issue 14, item 4; spec 004's calibration).

A is the baseline and B the candidate of scoring.stats.paired.paired: differences
are B - A. Readers' judgements are stored in the places they saw ("Answer 1",
"Answer 2"); ``reading`` turns them into A and B for leads' pages only.
"""

from __future__ import annotations

import math
import random
import secrets
import uuid
from collections import defaultdict
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from reviewapp.core import audit
from reviewapp.core.errors import ApplicationError, nul_field_errors
from reviewapp.core.once import create_once, next_revision
from reviewapp.models import Answer, Question, Run, Sample
from reviewapp.paired.models import (
    PairedAssignment,
    PairedDecision,
    PairedGrade,
    PairedItem,
    PairedJudgement,
    PairedSample,
)
from reviewapp.paired.selectors import DecisionInput
from reviewapp.review.services.samples import allocate, checked_readers, new_alias, round_robin, strata_record

PAIRED_STRATA_FIELDS = ("language", "stratum")
# A repeat comes back with at least this many other pairs between it and its
# original when the reader's order has room, so that it is not recognised at once.
REPEAT_GAP = 3
MAX_REPEAT_SHARE = 0.5


# ---------------------------------------------------------------- the draw


@dataclass(frozen=True)
class FrameQuestion:
    question_id: str
    language: str
    stratum: str
    answer_a_id: int
    answer_b_id: int


def paired_frame(*, run_a: Run, run_b: Run) -> list[FrameQuestion]:
    """The questions of the runs' set version (its tuning part) that both
    runs answered in their first attempt, by question id. Sealed questions
    stay out, as they stay out of every figure until a lead opens them."""
    answered = {}
    for run in (run_a, run_b):
        answered[run.id] = dict(
            Answer.objects.filter(run=run, attempt=1, status=Answer.Status.OK).values_list(
                "question_id", "id"
            )
        )
    questions = (
        Question.objects.filter(set_version_id=run_a.set_version_id, split=Question.Split.TUNING)
        .order_by("question_id")
        .values_list("question_id", "language", "stratum")
    )
    return [
        FrameQuestion(
            question_id=question_id,
            language=language,
            stratum=stratum or "none",
            answer_a_id=answered[run_a.id][question_id],
            answer_b_id=answered[run_b.id][question_id],
        )
        for question_id, language, stratum in questions
        if question_id in answered[run_a.id] and question_id in answered[run_b.id]
    ]


def paired_draw(
    *,
    run_a: Run,
    run_b: Run,
    size: int = 30,
    strata_fields: tuple[str, ...] = ("language",),
    seed: int | None = None,
    readers_per_item: int = 2,
    repeat_share: float = 0.10,
    name: str = "",
    created_by=None,
    submission_key: uuid.UUID | None = None,
) -> PairedSample:
    """Draw a frozen paired sample of ``size`` questions both runs answered,
    stratified (proportionally, at least one a stratum) by ``strata_fields``,
    and return it with its seed, runs, frame size and strata recorded. A size
    above the frame draws every question in it.

    Refuses one run twice, a run that is not stored or is left out of its
    version's figures, runs of two set versions, unknown strata fields, a
    size below 1 or below the number of strata, fewer than one reader per
    pair, a repeat share outside 0 to 50 %, and runs with no question
    answered by both (ApplicationError, a sentence each). A ``submission_key``
    already used returns the paired sample drawn with it, drawing nothing."""
    if submission_key and (drawn := PairedSample.objects.filter(submission_key=submission_key).first()):
        return drawn
    if run_a.id == run_b.id:
        raise ApplicationError("choose two different runs: a run compared with itself shows nothing")
    for label, run in (("A", run_a), ("B", run_b)):
        if run.status != Run.Status.STORED:
            raise ApplicationError(
                f"run {run.id} (as {label}) is {run.status}; only stored runs are compared"
            )
        if run.excluded_reason:
            raise ApplicationError(
                f"run {run.id} (as {label}) is left out of its version's figures "
                f"({run.excluded_reason}); choose another run"
            )
    if run_a.set_version_id != run_b.set_version_id:
        raise ApplicationError(
            f"run {run_a.id} answers set {run_a.set_version.version} and run {run_b.id} set "
            f"{run_b.set_version.version}: a paired sample needs the same questions, so both runs "
            "must answer one set version"
        )
    unknown = sorted(set(strata_fields) - set(PAIRED_STRATA_FIELDS))
    if unknown or "language" not in strata_fields:
        raise ApplicationError(
            f"pairs are stratified by language, and also by the question's stratum if asked; not {unknown}"
        )
    if size < 1:
        raise ApplicationError("a paired sample needs at least one pair")
    if readers_per_item < 1:
        raise ApplicationError("each pair needs at least one reader")
    if not 0 <= repeat_share <= MAX_REPEAT_SHARE:
        raise ApplicationError(
            f"the repeat share lies between 0 and {MAX_REPEAT_SHARE * 100:g} %, not {repeat_share * 100:g} %"
        )
    strata_fields = tuple(field for field in PAIRED_STRATA_FIELDS if field in strata_fields)
    frame = paired_frame(run_a=run_a, run_b=run_b)
    if not frame:
        raise ApplicationError(
            f"runs {run_a.id} and {run_b.id} have no question of the set's tuning part that both "
            "answered in their first attempt"
        )
    by_stratum: dict[str, list[FrameQuestion]] = defaultdict(list)
    for question in frame:
        values = {"language": question.language, "stratum": question.stratum}
        by_stratum["|".join(f"{name}={values[name]}" for name in strata_fields)].append(question)
    populations = {key: len(questions) for key, questions in by_stratum.items()}
    counts = allocate(populations, size=size, allocation=Sample.Allocation.PROPORTIONAL, minimum=1)
    seed = secrets.randbelow(2**31) if seed is None else seed
    rng = random.Random(seed)
    drawn = {key: rng.sample(by_stratum[key], counts[key]) for key in sorted(by_stratum)}

    def create() -> PairedSample:
        with transaction.atomic():
            paired_sample = PairedSample.objects.create(
                name=name.strip() or f"Paired sample of {timezone.localdate():%Y-%m-%d}",
                set_version_id=run_a.set_version_id,
                run_a=run_a,
                run_b=run_b,
                frame_size=len(frame),
                size=sum(counts.values()),
                strata_fields=list(strata_fields),
                strata=strata_record(populations, counts),
                seed=seed,
                readers_per_item=readers_per_item,
                repeat_share=repeat_share,
                created_by=created_by,
                submission_key=submission_key,
            )
            order = [(key, question) for key in sorted(drawn) for question in drawn[key]]
            PairedItem.objects.bulk_create(
                PairedItem(
                    paired_sample=paired_sample,
                    question_id=question.question_id,
                    answer_a_id=question.answer_a_id,
                    answer_b_id=question.answer_b_id,
                    stratum=key,
                    position=position,
                )
                for position, (key, question) in enumerate(order, start=1)
            )
        return paired_sample

    return create_once(PairedSample, submission_key, create)


# ---------------------------------------------------------- the assignment


def repeat_count(*, items: int, share: float) -> int:
    """How many of a reader's ``items`` pairs come back with the places
    swapped: ``share`` × ``items`` rounded half up (10 % of 25 is 3, of 4 is 0)."""
    return min(items, math.floor(share * items + 0.5))


def _reader_random(seed: int, purpose: str, reader_id: int) -> random.Random:
    # One generator per reader and purpose: a reader's places do not depend on
    # who else reads, or on how many tries an alias took.
    return random.Random(f"{seed}:{purpose}:{reader_id}")


def first_places(items: list[PairedItem], rng: random.Random) -> dict[int, bool]:
    """{item id: True when run A's answer is "Answer 1"}: half of the items
    each way (the odd one by a coin), shuffled."""
    flags = [True, False] * (len(items) // 2)
    if len(items) % 2:
        flags.append(rng.random() < 0.5)
    rng.shuffle(flags)
    return {item.id: flag for item, flag in zip(sorted(items, key=lambda i: i.position), flags, strict=True)}


def reader_sequence(
    items: list[PairedItem], *, share: float, rng: random.Random
) -> list[tuple[PairedItem, bool]]:
    """The reader's order as (item, is a repeat): the items shuffled, then
    ``repeat_count`` of them shown again at a random later place, with at
    least REPEAT_GAP other pairs in between when the order has room."""
    sequence: list[tuple[PairedItem, bool]] = [(item, False) for item in items]
    rng.shuffle(sequence)
    count = repeat_count(items=len(items), share=share)
    # Repeat pairs that have room after them, so that a repeat is not seen
    # right after its original; all of them when too few do.
    roomy = [item for item, _ in sequence[: max(len(sequence) - REPEAT_GAP - 1, 0)]]
    chosen = rng.sample(roomy if len(roomy) >= count else items, count)
    for item in sorted(chosen, key=lambda i: sequence.index((i, False))):
        after = sequence.index((item, False)) + 1
        earliest = min(after + REPEAT_GAP, len(sequence))
        sequence.insert(rng.randint(earliest, len(sequence)), (item, True))
    return sequence


def paired_assign(
    *, paired_sample: PairedSample, reviewers: list, readers_per_item: int | None = None
) -> list[PairedAssignment]:
    """Give each pair to ``readers_per_item`` readers (the sample's number
    unless told), balanced across them. Each reader gets their pairs in a
    shuffled order under random aliases, run A's answer first in half of
    them, and a repeat share of them again later with the places swapped,
    all from the sample's seed. Returns the assignments, repeats included.

    Refuses no readers, fewer readers than readers per pair, and a sample
    that is assigned already."""
    readers_per_item = readers_per_item or paired_sample.readers_per_item
    reviewers = checked_readers(reviewers, readers_per_item, unit="pair")
    with transaction.atomic():
        locked = PairedSample.objects.select_for_update().get(id=paired_sample.id)
        if PairedAssignment.objects.filter(item__paired_sample=locked).exists():
            raise ApplicationError("this paired sample is assigned already; draw a new one to read it again")
        items = list(locked.items.order_by("position"))
        per_reader = round_robin(items, reviewers, readers_per_item)
        taken = set(
            PairedAssignment.objects.filter(reviewer__in=reviewers).values_list("reviewer_id", "alias")
        )
        made: list[PairedAssignment] = []
        for reader in reviewers:
            mine = per_reader[reader.pk]
            places = first_places(mine, _reader_random(locked.seed, "places", reader.pk))
            sequence = reader_sequence(
                mine, share=locked.repeat_share, rng=_reader_random(locked.seed, "order", reader.pk)
            )
            aliases = _reader_random(locked.seed, "aliases", reader.pk)
            originals: dict[int, PairedAssignment] = {}
            repeats: list[PairedAssignment] = []
            for order, (item, is_repeat) in enumerate(sequence, start=1):
                assignment = PairedAssignment(
                    item=item,
                    reviewer=reader,
                    alias=new_alias(aliases, reader.pk, taken),
                    order=order,
                    a_is_first=not places[item.id] if is_repeat else places[item.id],
                )
                if is_repeat:
                    repeats.append(assignment)
                else:
                    originals[item.id] = assignment
            PairedAssignment.objects.bulk_create(originals.values())
            for repeat in repeats:
                repeat.repeat_of = originals[repeat.item_id]
            PairedAssignment.objects.bulk_create(repeats)
            made += [*originals.values(), *repeats]
        locked.readers_per_item = readers_per_item
        locked.save(update_fields=("readers_per_item",))
        audit.record(locked, {"assigned to": ("", sorted({a.reviewer.get_username() for a in made}))})
    return sorted(made, key=lambda a: (a.reviewer_id, a.order))


# ------------------------------------------------- judgements and decisions


@dataclass(frozen=True)
class PairedInput:
    """A reader's form as sent: a grade (or pending) and a note for each
    answer in the places shown, and which answer is better."""

    grade_first: str = ""
    note_first: str = ""
    grade_second: str = ""
    note_second: str = ""
    better: str = ""


def paired_judgement_errors(data: PairedInput) -> dict[str, str]:
    """What is missing or wrong, by form field; empty when it can be saved.
    Each answer needs a grade or pending verification, and a note for
    anything but resolved (a reason someone else can check); and the reader
    says which answer is better, or that they are equal."""
    errors: dict[str, str] = {}
    for place, grade, note in (
        (1, data.grade_first, data.note_first),
        (2, data.grade_second, data.note_second),
    ):
        if grade not in PairedGrade.values:
            errors[f"grade_{place}"] = f"Grade answer {place}, or mark it pending verification."
        elif grade != PairedGrade.RESOLVED and not note.strip():
            errors[f"note_{place}"] = (
                f"Say why answer {place} is {PairedGrade(grade).label}: a reason someone else can check."
            )
    if data.better not in PairedJudgement.Better.values:
        errors["better"] = "Say which answer is better, or that they are equal."
    # The form's names for the notes: note_1 and note_2.
    named = {"note_first": "note_1", "note_second": "note_2"}
    errors.update({named.get(field, field): message for field, message in nul_field_errors(data).items()})
    return errors


def paired_judgement_submit(
    *, assignment: PairedAssignment, author, data: PairedInput, submission_key: uuid.UUID
) -> PairedJudgement:
    """Save the reader's judgement as the assignment's next revision and
    return it; the same submission key saves once. Refuses anyone but the
    assigned reader and an incomplete judgement (ApplicationError with the
    fields' messages)."""
    if assignment.reviewer_id != author.id:
        raise ApplicationError("only the assigned reader judges a pair")
    if existing := PairedJudgement.objects.filter(submission_key=submission_key).first():
        return existing
    errors = paired_judgement_errors(data)
    if errors:
        raise ApplicationError(list(errors.values()))

    def create() -> PairedJudgement:
        revision = next_revision(
            parent=assignment, revisions=PairedJudgement.objects.filter(assignment=assignment)
        )
        return PairedJudgement.objects.create(
            assignment=assignment,
            revision=revision,
            author=author,
            grade_first=data.grade_first,
            note_first=data.note_first.strip(),
            grade_second=data.grade_second,
            note_second=data.note_second.strip(),
            better=data.better,
            submission_key=submission_key,
        )

    return create_once(PairedJudgement, submission_key, create)


def paired_decision_errors(data: DecisionInput) -> dict[str, str]:
    """What a lead's decision lacks, by form field: a grade (or pending) for
    each run's answer, which is better, and the reason."""
    errors: dict[str, str] = {}
    for label, grade in (("a", data.grade_a), ("b", data.grade_b)):
        if grade not in PairedGrade.values:
            errors[f"grade_{label}"] = f"Grade {label.upper()}'s answer, or leave it pending verification."
    if data.better not in PairedDecision.Better.values:
        errors["better"] = "Say which answer is better, or that they are equal."
    if not data.reason.strip():
        errors["reason"] = "Give the reason for the decision; the readers' judgements stay as they were."
    return errors


def paired_decision_submit(
    *, item: PairedItem, lead, data: DecisionInput, submission_key: uuid.UUID
) -> PairedDecision:
    """Record a lead's decision on a pair as its next revision and return it;
    the same submission key records once. Refuses an incomplete decision
    (ApplicationError with the fields' messages)."""
    if existing := PairedDecision.objects.filter(submission_key=submission_key).first():
        return existing
    errors = paired_decision_errors(data)
    if errors:
        raise ApplicationError(list(errors.values()))

    def create() -> PairedDecision:
        revision = next_revision(parent=item, revisions=PairedDecision.objects.filter(item=item))
        return PairedDecision.objects.create(
            item=item,
            revision=revision,
            lead=lead,
            grade_a=data.grade_a,
            grade_b=data.grade_b,
            better=data.better,
            reason=data.reason.strip(),
            submission_key=submission_key,
        )

    return create_once(PairedDecision, submission_key, create)
