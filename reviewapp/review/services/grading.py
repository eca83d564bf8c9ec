"""Spec 004's grading: the grade follows from the material-error question and
the two primary metrics, in the grading order (material errors first, then
coverage of the request). Pure functions over values: readers' judgements
and leads' decisions are checked and derived the same way, and the review
screens show the same table (GRADE_RULES) that the server applies."""

from __future__ import annotations

from dataclasses import dataclass

from reviewapp.models import Outcome, RubricVersion
from reviewapp.review.selectors import answer_passes

RESOLVED = Outcome.Grade.RESOLVED.value
PARTIAL = Outcome.Grade.PARTIAL.value
MATERIAL_ERROR = Outcome.Grade.MATERIAL_ERROR.value
UNRESOLVED = Outcome.Grade.UNRESOLVED.value
PENDING = "pending"
# A combination no grade can follow from: it is refused with the rule.
REFUSED = "refused"

YES, NO = Outcome.MaterialError.YES.value, Outcome.MaterialError.NO.value
CORRECT = Outcome.Correctness.CORRECT.value
WRONG = Outcome.Correctness.MATERIAL_ERROR.value
NO_CONCLUSION = Outcome.Correctness.NO_CONCLUSION.value
FULL, PARTLY, NOT_MET = (
    Outcome.Fulfilment.FULL.value,
    Outcome.Fulfilment.PARTIAL.value,
    Outcome.Fulfilment.NOT_MET.value,
)

OUTCOME_LABELS = {**dict(Outcome.Grade.choices), PENDING: "pending verification"}


@dataclass(frozen=True)
class GradeRule:
    """One row of the grade table: the values it matches (empty: any value)
    and the outcome, a grade, "pending" or "refused"."""

    key: str
    material_error: tuple[str, ...]
    correctness: tuple[str, ...]
    fulfilment: tuple[str, ...]
    outcome: str
    text: str

    def matches(self, material_error: str, correctness: str, fulfilment: str) -> bool:
        return all(
            not allowed or value in allowed
            for allowed, value in (
                (self.material_error, material_error),
                (self.correctness, correctness),
                (self.fulfilment, fulfilment),
            )
        )

    @property
    def outcome_label(self) -> str:
        return "refused" if self.outcome == REFUSED else OUTCOME_LABELS[self.outcome]

    @property
    def in_words(self) -> tuple[str, str, str]:
        """The values the row matches, as the guide shows them ("any" for any)."""
        return tuple(
            " or ".join(labels[value] for value in values) or "any"
            for values, labels in (
                (self.material_error, dict(Outcome.MaterialError.choices)),
                (self.correctness, dict(Outcome.Correctness.choices)),
                (self.fulfilment, dict(Outcome.Fulfilment.choices)),
            )
        )


# First match wins; the order is spec 004's grading order.
GRADE_RULES: tuple[GradeRule, ...] = (
    GradeRule(
        "error_decides",
        (YES,),
        (),
        (),
        MATERIAL_ERROR,
        "A material error decides the grade by itself: whatever the answer gets right "
        "does not make up for a key error, so errors are looked for before coverage.",
    ),
    GradeRule(
        "error_unchecked",
        (Outcome.MaterialError.PENDING,),
        (),
        (),
        PENDING,
        "A possible material error that cannot be checked yet leaves the item pending: "
        "no grade, and neither a pass nor a fail.",
    ),
    GradeRule(
        "wrong_conclusion_is_an_error",
        (NO,),
        (WRONG,),
        (),
        REFUSED,
        "A core conclusion that does not hold is itself a material error: answer the "
        "material-error question yes, with its claim, evidence and effect, or look at the conclusion again.",
    ),
    GradeRule(
        "conclusion_unchecked",
        (NO,),
        (Outcome.Correctness.PENDING,),
        (),
        PENDING,
        "A core conclusion that cannot be checked yet leaves the item pending.",
    ),
    GradeRule(
        "fulfilment_unchecked",
        (NO,),
        (),
        (Outcome.Fulfilment.PENDING,),
        PENDING,
        "Whether the request was delivered cannot be told yet: the item stays pending.",
    ),
    GradeRule(
        "all_delivered",
        (NO,),
        (CORRECT,),
        (FULL,),
        RESOLVED,
        "No material error, a core conclusion that holds, and all of the request delivered: resolved.",
    ),
    GradeRule(
        "part_delivered",
        (NO,),
        (CORRECT,),
        (PARTLY,),
        PARTIAL,
        "No material error and correct, useful content, but part of the request or a fact it "
        "needs is missing: partially resolved.",
    ),
    GradeRule(
        "nothing_delivered",
        (NO,),
        (),
        (NOT_MET,),
        UNRESOLVED,
        "No material error, and nothing the user asked for was delivered (only a plan, only "
        "questions back, a refusal, or correct content beside the point): unresolved.",
    ),
    GradeRule(
        "delivery_needs_content",
        (NO,),
        (NO_CONCLUSION,),
        (FULL, PARTLY),
        REFUSED,
        "Delivering the request, in full or in part, takes content whose correctness can be "
        "judged: with no gradable conclusion the request is not met.",
    ),
)

OFF_QUESTION_RULE = (
    "An answer that does not address the question delivers none of the request and gives no "
    "conclusion to grade within its scope; only a material error it contains changes its grade."
)


@dataclass(frozen=True)
class Metrics:
    material_error: str
    correctness: str
    fulfilment: str


@dataclass(frozen=True)
class Graded:
    """What follows from the metrics: ``grade`` ("" when pending or when
    nothing follows), ``pending``, and the rule that decided it (None when the
    metrics are incomplete)."""

    grade: str
    pending: bool
    rule: GradeRule | None

    @property
    def refused(self) -> bool:
        return self.rule is not None and self.rule.outcome == REFUSED

    @property
    def outcome(self) -> str:
        """A grade value, "pending", or "" when nothing follows."""
        return PENDING if self.pending else self.grade


def metrics_in_scope(
    *, addresses_question: bool, material_error: str, correctness: str, fulfilment: str
) -> Metrics:
    """The metrics as graded: an answer off the question has no gradable
    conclusion and meets none of the request (OFF_QUESTION_RULE), whatever was
    sent for them; its material-error answer stands."""
    if not addresses_question:
        return Metrics(material_error, NO_CONCLUSION, NOT_MET)
    return Metrics(material_error, correctness, fulfilment)


def grade_from_metrics(*, material_error: str, correctness: str, fulfilment: str) -> Graded:
    """The grade, or pending verification, that GRADE_RULES give these values.

    A blank material-error answer (an outcome recorded before the question
    was asked) reads as no error raised. Returns a Graded whose rule is
    REFUSED for a contradiction, and None when no rule applies yet (a metric
    is missing)."""
    material_error = material_error or NO
    for rule in GRADE_RULES:
        if rule.matches(material_error, correctness, fulfilment):
            if rule.outcome == PENDING:
                return Graded("", True, rule)
            if rule.outcome == REFUSED:
                return Graded("", False, rule)
            return Graded(rule.outcome, False, rule)
    return Graded("", False, None)


def metrics_from_grade(
    *, grade: str, pending: bool, addresses_question: bool, material_status: str = ""
) -> dict[str, str]:
    """The material-error answer and the metrics a grade stands for, as far as
    it tells (blank where it cannot): for callers that still give only a grade,
    the same mapping as migration 0018 applied to outcomes recorded before."""
    if grade == MATERIAL_ERROR or material_status == "confirmed":
        return {"material_error": YES, "correctness": "", "fulfilment": ""}
    if not addresses_question:
        return {"material_error": "", "correctness": NO_CONCLUSION, "fulfilment": NOT_MET}
    if pending:
        return {"material_error": "", "correctness": PENDING, "fulfilment": PENDING}
    return {
        RESOLVED: {"material_error": NO, "correctness": CORRECT, "fulfilment": FULL},
        PARTIAL: {"material_error": NO, "correctness": CORRECT, "fulfilment": PARTLY},
        UNRESOLVED: {"material_error": NO, "correctness": "", "fulfilment": NOT_MET},
    }.get(grade, {"material_error": "", "correctness": "", "fulfilment": ""})


@dataclass(frozen=True)
class Assessment:
    """An outcome as it would be stored, and what stops it, by form field."""

    metrics: Metrics
    graded: Graded
    errors: dict[str, str]


def assess(
    *,
    addresses_question: bool,
    material_error: str,
    correctness: str,
    fulfilment: str,
    stated_grade: str = "",
    stated_pending: bool = False,
    material_status: str = "",
    raised: bool = False,
) -> Assessment:
    """Check the material-error answer and the metrics, and grade them.

    When none of the three is given but a grade (or pending) is, they are
    read from the grade (metrics_from_grade): the way callers graded before.
    For a lead's decision given that way, ``material_status`` "dismissed"
    answers the material-error question no, and on an item where a reader
    ``raised`` one a grade alone leaves it unanswered.
    Otherwise the material-error answer is required, and so are both metrics
    of an answer on the question unless a material error decides the grade.
    Refused, with the rule quoted under "grade": a contradiction in the table,
    and a stated grade or pending that does not follow from the metrics."""
    errors: dict[str, str] = {}
    by_grade = not (material_error or correctness or fulfilment) and bool(stated_grade or stated_pending)
    if stated_grade and stated_pending:
        errors["grade"] = "Pending verification is not a grade: give one or the other."
    if by_grade:
        values = metrics_from_grade(
            grade=stated_grade,
            pending=stated_pending,
            addresses_question=addresses_question,
            material_status=material_status,
        )
        if material_status == "dismissed":
            values["material_error"] = NO
        elif raised and values["material_error"] != YES:
            values["material_error"] = Outcome.MaterialError.PENDING if stated_pending else ""
        material_error, correctness, fulfilment = (
            values["material_error"],
            values["correctness"],
            values["fulfilment"],
        )
    metrics = metrics_in_scope(
        addresses_question=addresses_question,
        material_error=material_error,
        correctness=correctness,
        fulfilment=fulfilment,
    )
    if not by_grade:
        if metrics.material_error not in Outcome.MaterialError.values:
            errors["material_error"] = "Say whether the answer holds a material error: yes, no or pending."
        # Beside a material error the grade is decided; the metrics are still
        # worth recording but are not required.
        if metrics.material_error != YES:
            if metrics.correctness not in Outcome.Correctness.values:
                errors["correctness"] = (
                    "Say whether the core conclusion holds: correct, material error, "
                    "no gradable conclusion or pending."
                )
            if metrics.fulfilment not in Outcome.Fulfilment.values:
                errors["fulfilment"] = (
                    "Say how much of the request is met: fully, partly, not met or pending."
                )
    graded = grade_from_metrics(
        material_error=metrics.material_error, correctness=metrics.correctness, fulfilment=metrics.fulfilment
    )
    if graded.refused:
        errors.setdefault("grade", f"These answers contradict each other. The rule: “{graded.rule.text}”")
    # A grade given alone for an answer off the question was never kept, so
    # it is not held against the metrics there.
    elif graded.rule is not None and (addresses_question or not by_grade):
        stated = PENDING if stated_pending else stated_grade
        if stated and stated != graded.outcome:
            errors.setdefault(
                "grade",
                f"“{OUTCOME_LABELS.get(stated, stated)}” does not follow from the answers given, which "
                f"make it {graded.rule.outcome_label}. The rule: “{graded.rule.text}”",
            )
    elif graded.rule is None and by_grade and stated_grade not in Outcome.Grade.values and not stated_pending:
        errors.setdefault("grade", "Choose a grade, or pending verification.")
    return Assessment(metrics, graded, errors)


def passes_rubric(outcome: Outcome, rubric_version: RubricVersion) -> bool | None:
    """Whether ``outcome`` passes every question of ``rubric_version``: the
    question keyed "unsupported_claim" passes on "no", every other on "yes"
    or "na". False as soon as one answer fails; None when there is nothing to
    count (an answer off the question carries no rubric answers) or a
    question is unanswered."""
    answers = outcome.rubric_answers or {}
    if not outcome.addresses_question or not answers:
        return None
    unanswered = False
    for question in rubric_version.questions.all():
        answer = answers.get(question.key) or ""
        if not answer:
            unanswered = True
        elif not answer_passes(question.key, answer):
            return False
    return None if unanswered else True


def needs_reason(graded: Graded) -> bool:
    """Every outcome but resolved is explained (spec 004: reasons another
    grader can check); an incomplete one is refused for other causes first."""
    return graded.outcome not in ("", RESOLVED)


# The review screens' grade keys: each sets the material-error answer and the
# two metrics at once (None leaves a metric as it is). The screens' script
# reads them, and the metric rows show the keys that set each value.
GRADE_KEYS: dict[str, tuple[str, str, str | None]] = {
    "1": (NO, CORRECT, FULL),
    "2": (NO, CORRECT, PARTLY),
    "3": (YES, WRONG, None),
    "4": (NO, NO_CONCLUSION, NOT_MET),
    "p": (PENDING, PENDING, PENDING),
}


def keys_setting(*, metric: str, value: str) -> list[str]:
    """The grade keys (GRADE_KEYS) that set ``metric`` ("correctness" or
    "fulfilment") to ``value``, in key order."""
    place = {"correctness": 1, "fulfilment": 2}[metric]
    return [key for key, values in GRADE_KEYS.items() if values[place] == value]


def rules_for_screen() -> list[dict]:
    """GRADE_RULES as the review screens' script reads them to show the grade
    while the reader chooses (the server grades again on submit)."""
    return [
        {
            "material_error": list(rule.material_error),
            "correctness": list(rule.correctness),
            "fulfilment": list(rule.fulfilment),
            "outcome": rule.outcome,
            "label": rule.outcome_label,
            "text": rule.text,
        }
        for rule in GRADE_RULES
    ]
