"""Blinded comparison of two runs by people: the paired sample's draw, its
assignment to readers (places, aliases and swapped repeats from the recorded
seed), readers' judgements and leads' decisions, and the figures on the
settled pairs (issue 14, item 4; spec 004's calibration).

A is the baseline and B the candidate of scoring.compare.paired: differences
are B - A. Readers' judgements are stored in the places they saw ("Answer 1",
"Answer 2"); ``reading`` turns them into A and B for leads' pages only.
"""

from __future__ import annotations

import math
import random
import secrets
import uuid
from collections import defaultdict
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from reviewapp.core.errors import ApplicationError
from reviewapp.models import Answer, Question, Run, Sample
from reviewapp.paired.models import (
    PairedAssignment,
    PairedDecision,
    PairedGrade,
    PairedItem,
    PairedJudgement,
    PairedSample,
)
from reviewapp.review.services.samples import allocate, checked_readers, new_alias, round_robin
from reviewapp.scorings.selectors import answer_evidence
from scoring.compare import Paired, paired
from scoring.rates import Rate, rate

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
) -> PairedSample:
    """Draw a frozen paired sample of ``size`` questions both runs answered,
    stratified (proportionally, at least one a stratum) by ``strata_fields``,
    and return it with its seed, runs, frame size and strata recorded. A size
    above the frame draws every question in it.

    Refuses one run twice, a run that is not stored or is left out of its
    version's figures, runs of two set versions, unknown strata fields, a
    size below 1 or below the number of strata, fewer than one reader per
    pair, a repeat share outside 0 to 50 %, and runs with no question
    answered by both (ApplicationError, a sentence each)."""
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

    with transaction.atomic():
        paired_sample = PairedSample.objects.create(
            name=name.strip() or f"Paired sample of {timezone.localdate():%Y-%m-%d}",
            set_version_id=run_a.set_version_id,
            run_a=run_a,
            run_b=run_b,
            frame_size=len(frame),
            size=sum(counts.values()),
            strata_fields=list(strata_fields),
            strata={
                key: {
                    "population": populations[key],
                    "drawn": counts[key],
                    "weight": populations[key] / counts[key] if counts[key] else None,
                }
                for key in sorted(populations)
            },
            seed=seed,
            readers_per_item=readers_per_item,
            repeat_share=repeat_share,
            created_by=created_by,
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
    return errors


def _create_once(model, submission_key: uuid.UUID, create):
    # Two requests racing with one key: the loser's insert fails on the unique
    # key and it returns the winner's row, so a double submit saves once.
    try:
        with transaction.atomic():
            return create()
    except IntegrityError:
        existing = model.objects.filter(submission_key=submission_key).first()
        if existing is None:
            raise
        return existing


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
        # The lock keeps two revisions from taking one number.
        PairedAssignment.objects.select_for_update().get(id=assignment.id)
        latest = PairedJudgement.objects.filter(assignment=assignment).aggregate(n=Max("revision"))["n"]
        return PairedJudgement.objects.create(
            assignment=assignment,
            revision=(latest or 0) + 1,
            author=author,
            grade_first=data.grade_first,
            note_first=data.note_first.strip(),
            grade_second=data.grade_second,
            note_second=data.note_second.strip(),
            better=data.better,
            submission_key=submission_key,
        )

    return _create_once(PairedJudgement, submission_key, create)


@dataclass(frozen=True)
class DecisionInput:
    grade_a: str = ""
    grade_b: str = ""
    better: str = ""
    reason: str = ""


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
        PairedItem.objects.select_for_update().get(id=item.id)
        latest = PairedDecision.objects.filter(item=item).aggregate(n=Max("revision"))["n"]
        return PairedDecision.objects.create(
            item=item,
            revision=(latest or 0) + 1,
            lead=lead,
            grade_a=data.grade_a,
            grade_b=data.grade_b,
            better=data.better,
            reason=data.reason.strip(),
            submission_key=submission_key,
        )

    return _create_once(PairedDecision, submission_key, create)


# -------------------------------------------------------------- the reads


def pair_content(item: PairedItem, *, a_is_first: bool | None = None) -> dict:
    """What a pair shows: the question, its language, and each answer's text,
    whether it declined and its own evidence. With ``a_is_first`` (a
    reader's screen) the answers come as "first" and "second" in that
    reader's places, without saying which run is which; without it (a
    lead's page), as "a" and "b"."""
    answers = {"a": item.answer_a, "b": item.answer_b}
    question = (
        Question.objects.filter(
            set_version_id=item.paired_sample.set_version_id, question_id=item.question_id
        )
        .only("question", "language")
        .first()
    )

    def shown(answer: Answer) -> dict:
        record = answer.record
        return {
            "text": record.get("answer") or "",
            "declined": answer.declined,
            "evidence": answer_evidence(record),
        }

    content = {
        "question_text": question.question if question else "",
        "language": question.language if question else answers["a"].language,
    }
    if a_is_first is None:
        return {**content, "a": shown(answers["a"]), "b": shown(answers["b"])}
    first, second = ("a", "b") if a_is_first else ("b", "a")
    return {**content, "first": shown(answers[first]), "second": shown(answers[second])}


@dataclass(frozen=True)
class Reading:
    """A reader's latest judgement of a pair in runs' terms: the grade of A's
    and of B's answer, and which is better ("a", "b" or "equal")."""

    assignment: PairedAssignment
    judgement: PairedJudgement
    grade_a: str
    grade_b: str
    better: str
    note_a: str
    note_b: str

    @property
    def summary(self) -> str:
        return pair_summary(self.grade_a, self.grade_b, self.better)


GRADE_LABELS = dict(PairedGrade.choices)
BETTER_LABELS = dict(PairedDecision.Better.choices)


def pair_summary(grade_a: str, grade_b: str, better: str) -> str:
    """A pair in runs' terms for leads' pages: "A resolved · B material error · B better"."""
    return f"A {GRADE_LABELS[grade_a]} · B {GRADE_LABELS[grade_b]} · {BETTER_LABELS[better]}"


def reading(assignment: PairedAssignment, judgement: PairedJudgement) -> Reading:
    """Turn a judgement from the places the reader saw into A and B."""
    first, second = ("a", "b") if assignment.a_is_first else ("b", "a")
    grades = {first: judgement.grade_first, second: judgement.grade_second}
    notes = {first: judgement.note_first, second: judgement.note_second}
    better = {"1": first, "2": second, "equal": "equal"}[judgement.better]
    return Reading(
        assignment=assignment,
        judgement=judgement,
        grade_a=grades["a"],
        grade_b=grades["b"],
        better=better,
        note_a=notes["a"],
        note_b=notes["b"],
    )


SETTLED = "settled"
AWAITING_LEAD = "awaiting lead"
PENDING = "pending verification"
NOT_READ = "not yet read"
STATUSES = (SETTLED, AWAITING_LEAD, PENDING, NOT_READ)


@dataclass
class PairState:
    """Where a pair stands: its status, why, the readers' readings (the first
    showing of each reader; repeats are calibration and settle nothing) and
    the lead's latest decision; grades and preference once settled."""

    item: PairedItem
    status: str
    reason: str
    readings: list[Reading]
    assigned: int
    decision: PairedDecision | None = None
    grade_a: str = ""
    grade_b: str = ""
    better: str = ""

    @property
    def summary(self) -> str:
        return pair_summary(self.grade_a, self.grade_b, self.better) if self.status == SETTLED else ""


def pair_state(
    item: PairedItem, readings: list[Reading], *, assigned: int, decision: PairedDecision | None
) -> PairState:
    """Settled by the lead's latest decision (unless it left a grade
    pending), else by the readers when all of them have read the pair and
    agree on both grades and on which is better, no grade is pending, and
    no one saw a material error (a material error counts once a lead
    confirmed it, spec 004). Otherwise awaiting lead, pending verification
    or not yet read, with the reason."""
    state = PairState(
        item=item, status="", reason="", readings=readings, assigned=assigned, decision=decision
    )
    if decision is not None:
        if PairedGrade.PENDING in (decision.grade_a, decision.grade_b):
            state.status, state.reason = PENDING, "the lead left a grade pending verification"
            return state
        state.status, state.reason = SETTLED, "decided by a lead"
        state.grade_a, state.grade_b, state.better = decision.grade_a, decision.grade_b, decision.better
        return state
    if not assigned or len(readings) < assigned:
        state.status = NOT_READ
        state.reason = f"{len(readings)} of {assigned} readers" if assigned else "not assigned"
        return state
    grades = {grade for r in readings for grade in (r.grade_a, r.grade_b)}
    if PairedGrade.PENDING in grades:
        state.status, state.reason = PENDING, "a reader marked an answer pending verification"
    elif len({(r.grade_a, r.grade_b, r.better) for r in readings}) > 1:
        state.status, state.reason = AWAITING_LEAD, "the readers disagree"
    elif PairedGrade.MATERIAL_ERROR in grades:
        state.status, state.reason = AWAITING_LEAD, "a material error counts once a lead confirmed it"
    else:
        state.status, state.reason = SETTLED, "the readers agree"
        state.grade_a, state.grade_b, state.better = (
            readings[0].grade_a,
            readings[0].grade_b,
            readings[0].better,
        )
    return state


@dataclass(frozen=True)
class PreferenceSplit:
    """Which answer the settled pairs prefer; ``a_share`` is A's share of the
    pairs with a preference (ties left out), with its Wilson interval, or
    None when no pair has one."""

    a_better: int
    b_better: int
    equal: int
    a_share: Rate | None

    @property
    def n(self) -> int:
        return self.a_better + self.b_better + self.equal

    @property
    def shares(self) -> dict[str, float]:
        """Each choice's share of the settled pairs, for display; empty without any."""
        if not self.n:
            return {}
        return {"a": self.a_better / self.n, "b": self.b_better / self.n, "equal": self.equal / self.n}


@dataclass(frozen=True)
class PositionCheck:
    """One reader's repeats read both times: how often the same run's answer
    was preferred when the places swapped (``consistent``, with its Wilson
    interval), how often the same place was preferred instead, and how often
    both answers got the same grades both times."""

    reviewer: object
    read: int
    consistent: int
    same_place: int
    same_grades: int
    waiting: int
    rate: Rate | None


@dataclass
class PairedResults:
    states: list[PairState]
    grades: Paired
    preference: PreferenceSplit
    positions: list[PositionCheck]
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def settled(self) -> list[PairState]:
        return [state for state in self.states if state.status == SETTLED]

    @property
    def unsettled(self) -> list[PairState]:
        return [state for state in self.states if state.status != SETTLED]


def latest_readings(paired_sample: PairedSample) -> dict[int, Reading]:
    """{assignment id: its latest reading} for every judged assignment of the sample."""
    latest: dict[int, PairedJudgement] = {}
    for judgement in PairedJudgement.objects.filter(assignment__item__paired_sample=paired_sample).order_by(
        "assignment_id", "revision"
    ):
        latest[judgement.assignment_id] = judgement
    assignments = PairedAssignment.objects.filter(id__in=latest).select_related("reviewer")
    return {assignment.id: reading(assignment, latest[assignment.id]) for assignment in assignments}


def paired_results(*, paired_sample: PairedSample) -> PairedResults:
    """The sample's figures on its settled pairs: the paired table of
    "resolved" for A and B with McNemar's exact p and the B - A difference
    with Newcombe's interval (scoring.compare.paired, A as the baseline), the
    preference split with a Wilson interval on A's share, and each reader's
    position consistency on their repeats; with every pair's state and the
    count of each status against N."""
    readings = latest_readings(paired_sample)
    assignments = list(
        PairedAssignment.objects.filter(item__paired_sample=paired_sample).select_related("reviewer")
    )
    originals: dict[int, list[PairedAssignment]] = defaultdict(list)
    for assignment in assignments:
        if assignment.repeat_of_id is None:
            originals[assignment.item_id].append(assignment)
    decisions: dict[int, PairedDecision] = {}
    for decision in PairedDecision.objects.filter(item__paired_sample=paired_sample).order_by(
        "item_id", "revision"
    ):
        decisions[decision.item_id] = decision
    states = []
    for item in paired_sample.items.select_related("answer_a", "answer_b").order_by("position"):
        mine = sorted(originals[item.id], key=lambda a: a.reviewer_id)
        read = [readings[a.id] for a in mine if a.id in readings]
        states.append(pair_state(item, read, assigned=len(mine), decision=decisions.get(item.id)))

    settled = [state for state in states if state.status == SETTLED]
    grades = paired(
        {state.item.question_id: state.grade_a == PairedGrade.RESOLVED for state in settled},
        {state.item.question_id: state.grade_b == PairedGrade.RESOLVED for state in settled},
    )
    split = {choice: sum(state.better == choice for state in settled) for choice in ("a", "b", "equal")}
    decided = split["a"] + split["b"]
    preference = PreferenceSplit(
        a_better=split["a"],
        b_better=split["b"],
        equal=split["equal"],
        a_share=rate(split["a"], decided) if decided else None,
    )
    counts = {status: sum(state.status == status for state in states) for status in STATUSES}
    return PairedResults(
        states=states,
        grades=grades,
        preference=preference,
        positions=position_checks(assignments, readings),
        counts=counts,
    )


def position_checks(assignments: list[PairedAssignment], readings: dict[int, Reading]) -> list[PositionCheck]:
    """Per reader with repeats, in username order: see PositionCheck."""
    by_reader: dict[int, list[PairedAssignment]] = defaultdict(list)
    for assignment in assignments:
        if assignment.repeat_of_id is not None:
            by_reader[assignment.reviewer_id].append(assignment)
    checks = []
    for repeats in by_reader.values():
        pairs = [
            (readings[r.repeat_of_id], readings[r.id])
            for r in repeats
            if r.id in readings and r.repeat_of_id in readings
        ]
        consistent = sum(first.better == again.better for first, again in pairs)
        # The places swapped, so the same place preferred twice is the other run's answer.
        same_place = sum(
            first.better != "equal" and first.judgement.better == again.judgement.better
            for first, again in pairs
        )
        same_grades = sum(
            (first.grade_a, first.grade_b) == (again.grade_a, again.grade_b) for first, again in pairs
        )
        checks.append(
            PositionCheck(
                reviewer=repeats[0].reviewer,
                read=len(pairs),
                consistent=consistent,
                same_place=same_place,
                same_grades=same_grades,
                waiting=len(repeats) - len(pairs),
                rate=rate(consistent, len(pairs)) if pairs else None,
            )
        )
    return sorted(checks, key=lambda check: check.reviewer.get_username())


@dataclass(frozen=True)
class PairForLead:
    """What a lead's decision page shows of a pair: its state, every reader's
    latest reading (repeats too, marked on their assignment), the decisions
    newest first, and the form's starting values: the latest decision, else
    what all the readers agree on."""

    state: PairState
    readings: list[Reading]
    decisions: list[PairedDecision]
    initial: DecisionInput


def pair_for_lead(*, item: PairedItem) -> PairForLead:
    """See PairForLead."""
    readings = [r for r in latest_readings(item.paired_sample).values() if r.assignment.item_id == item.id]
    readings.sort(key=lambda r: (r.assignment.reviewer.get_username(), r.assignment.order))
    decisions = list(item.decisions.select_related("lead").order_by("-revision"))
    firsts = [r for r in readings if r.assignment.repeat_of_id is None]
    state = pair_state(
        item,
        firsts,
        assigned=item.assignments.filter(repeat_of__isnull=True).count(),
        decision=decisions[0] if decisions else None,
    )
    if decisions:
        latest = decisions[0]
        initial = DecisionInput(grade_a=latest.grade_a, grade_b=latest.grade_b, better=latest.better)
    else:

        def agreed(name: str) -> str:
            values = {getattr(r, name) for r in firsts}
            return values.pop() if len(values) == 1 else ""

        initial = DecisionInput(grade_a=agreed("grade_a"), grade_b=agreed("grade_b"), better=agreed("better"))
    return PairForLead(state=state, readings=readings, decisions=decisions, initial=initial)


def next_awaiting_lead(*, item: PairedItem) -> PairedItem | None:
    """The sample's next pair awaiting a lead after ``item``, else the first one; None when none is."""
    results = paired_results(paired_sample=item.paired_sample)
    waiting = [state.item for state in results.states if state.status == AWAITING_LEAD]
    return next((i for i in waiting if i.position > item.position), waiting[0] if waiting else None)
