"""Reads of paired samples: a pair as a reader sees it, each reading, where a
pair stands (settled, awaiting a lead, pending, not read), the results with
position checks, and a pair as a lead decides it."""

from collections import defaultdict
from dataclasses import dataclass, field

from reviewapp.models import Answer, Question
from reviewapp.paired.models import (
    PairedAssignment,
    PairedDecision,
    PairedGrade,
    PairedItem,
    PairedJudgement,
    PairedSample,
)
from reviewapp.scorings.selectors import answer_evidence
from scoring.stats.paired import Paired, paired
from scoring.stats.rates import Rate, rate


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
    with Newcombe's interval (scoring.stats.paired.paired, A as the baseline), the
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
class DecisionInput:
    grade_a: str = ""
    grade_b: str = ""
    better: str = ""
    reason: str = ""


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
