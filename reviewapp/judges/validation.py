"""A judge is trusted only as far as it agrees with people.

Settled human outcomes (a lead's decision, or readers who agree and leave a
lead nothing to decide) are drawn into a frozen validation set with a seeded
tuning/holdout split. A judge version's rubric verdicts on those items are
compared with the people's outcomes per label: pass or fail, the four
grades, and each rubric question, each with its confusion matrix, percent
agreement, Cohen's kappa with its 95 % interval, Krippendorff's alpha and,
for yes/no labels, the judge's errors in each direction. A judge version is
validated for a label when kappa's lower bound on enough holdout items is
above the threshold its lead set, and people gave each label often enough
(scoring.stats.agreement.MIN_EACH_LABEL) for agreement to mean something. Every run a judge grades has a human
regrade sample (spec 002); its agreement is computed the same way.

Statistics come from scoring.stats.agreement (statsmodels, krippendorff, and
kappa's interval from its posterior); this module only lines up the ratings
and says when a figure cannot be computed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from reviewapp.core.errors import ApplicationError
from reviewapp.models import (
    Adjudication,
    JudgeRun,
    JudgeVersion,
    ModelVerdict,
    SampleItem,
    ValidationItem,
    ValidationSet,
)
from reviewapp.review.models import GRADES
from reviewapp.review.selectors import (
    counted_grade,
    latest_decisions,
    latest_judgements,
    outcome_key,
    reasons_for,
)
from scoring.stats.agreement import kappa_with_interval, krippendorff_alpha, validation_missing
from scoring.stats.rates import wilson_interval

PASS_CATEGORIES = ("pass", "fail")
RUBRIC_PREFIX = "rubric:"
SPLITS = tuple(ValidationItem.Split.values)
NO_VALIDATION_SET = "no validation set drawn"
UNCALIBRATED_TITLE = "internal consistency review (no human calibration)"
# A spot check audits readers who agree on a resolved item; it is not a
# doubt about the item, so it does not keep the readers' outcome unsettled
# (holding those items back would take resolved items out of validation).
NOT_BLOCKING = {"spot_check"}


@dataclass(frozen=True)
class Settled:
    """An item's settled human outcome: ``grade`` is an outcome_key value (a
    grade, "not_addressed" or, from a lead only, "pending"); ``source`` is
    "lead" or "readers"."""

    grade: str
    rubric_answers: dict[str, str]
    source: str


@dataclass(frozen=True)
class DirectionalError:
    """How often the judge says ``judge_says`` where people say the other:
    k of the n items people labelled that other way."""

    title: str
    k: int
    n: int
    note: str = ""

    @property
    def rate(self) -> float | None:
        return self.k / self.n if self.n else None


@dataclass(frozen=True)
class LabelFigures:
    """Agreement between people and a judge on one label. ``matrix`` has a
    row per people's category and a column per judge's category, both in
    ``categories`` order. A figure that cannot be computed is None, with the
    reason in ``notes`` under the figure's name. ``differing_items`` are the
    sample item ids where people and judge differ, in the order compared."""

    label: str
    title: str
    categories: tuple[str, ...]
    matrix: list[list[int]]
    n: int
    percent: float | None
    kappa: float | None
    kappa_low: float | None
    kappa_upp: float | None
    alpha: float | None
    errors: tuple[DirectionalError, ...] = ()
    notes: dict[str, str] = field(default_factory=dict)
    differing_items: tuple[int, ...] = ()
    validated: bool = False
    missing: str = ""

    @property
    def agreeing(self) -> int:
        """Items where people and the judge agree: percent agreement's k of n."""
        return self.n - len(self.differing_items)


@dataclass(frozen=True)
class Validation:
    """A judge version against people on one split of a validation set.

    ``items`` is the split's size; of those, ``unsettled`` have no settled
    human outcome now, ``pending`` are settled as pending verification (not a
    grade, so left out of every label), ``without_verdict`` have no
    successful rubric verdict of this judge version, and the rest are in
    ``labels``. ``note`` says why there are no labels at all."""

    judge_version: JudgeVersion
    validation_set: ValidationSet | None
    split: str
    items: int = 0
    unsettled: int = 0
    pending: int = 0
    without_verdict: int = 0
    labels: tuple[LabelFigures, ...] = ()
    note: str = ""

    def label(self, key: str) -> LabelFigures | None:
        return next((figures for figures in self.labels if figures.label == key), None)

    @property
    def validated(self) -> bool:
        """Validated for pass or fail, the label a gate and a run's figures use."""
        figures = self.label("pass")
        return figures is not None and figures.validated

    @property
    def missing(self) -> str:
        figures = self.label("pass")
        return figures.missing if figures is not None else self.note


# -- settled outcomes --------------------------------------------------------


@dataclass(frozen=True)
class ReviewState:
    """Where an item stands: settled (with its outcome), awaiting a lead,
    pending verification, or not yet read by every reader it needs."""

    state: str
    settled: Settled | None = None


SETTLED, AWAITING_LEAD, PENDING, NOT_READ = "settled", "awaiting_lead", "pending", "not_read"


def review_states(
    items: Iterable[SampleItem], *, readers_needed: Callable[[SampleItem], int]
) -> dict[int, ReviewState]:
    """Each logged-answer item's state, by item id (calibration items test
    readers, not the assistant, and are left out).

    The latest lead decision settles an item whenever there is one (a
    pending decision leaves it pending). Without one: no reader yet, or fewer
    than ``readers_needed(item)``, is not read; a reader's pending is
    pending; readers who all agree on the outcome and every rubric answer,
    and leave a lead nothing to decide (material error, partial, borderline:
    lead.reasons_for), settle it; anything else awaits a lead."""
    items = [item for item in items if item.answer_id is not None and item.calibration_id is None]
    if not items:
        return {}
    decisions = latest_decisions(items)
    judged = latest_judgements(items)
    states = {}
    for item in items:
        decision = decisions.get(item.id)
        if decision is not None:
            key = outcome_key(decision)
            states[item.id] = (
                ReviewState(PENDING)
                if key == "pending"
                else ReviewState(SETTLED, Settled(key, dict(decision.rubric_answers or {}), "lead"))
            )
            continue
        judgements = judged.get(item.id, [])
        outcomes = {outcome_key(judgement) for judgement in judgements}
        if "pending" in outcomes:
            states[item.id] = ReviewState(PENDING)
            continue
        if not judgements or len(judgements) < readers_needed(item):
            states[item.id] = ReviewState(NOT_READ)
            continue
        answers = [judgement.rubric_answers or {} for judgement in judgements]
        agree = len(outcomes) == 1 and all(other == answers[0] for other in answers[1:])
        if not agree or set(reasons_for(item, judgements)) - NOT_BLOCKING:
            states[item.id] = ReviewState(AWAITING_LEAD)
            continue
        states[item.id] = ReviewState(SETTLED, Settled(outcomes.pop(), dict(answers[0]), "readers"))
    return states


def settled_outcomes(items: Iterable[SampleItem]) -> dict[int, Settled]:
    """Each logged-answer item's settled human outcome, by item id, as a
    judge is validated on it: a lead's decision, or at least two readers who
    agree and leave a lead nothing to decide (review_states). A lead's
    pending decision is kept as a settled "pending" (each label leaves it
    out). Items with neither are left out of the result."""
    items = list(items)
    settled = {}
    for item_id, state in review_states(items, readers_needed=lambda item: 2).items():
        if state.settled is not None:
            settled[item_id] = state.settled
        elif state.state == PENDING:
            latest = Adjudication.objects.filter(item_id=item_id).order_by("-revision").first()
            if latest is not None:
                settled[item_id] = Settled("pending", dict(latest.rubric_answers or {}), "lead")
    return settled


# -- validation sets ---------------------------------------------------------


# -- validation --------------------------------------------------------------


def judge_validation(
    *, judge_version: JudgeVersion, validation_set: ValidationSet | None = None, split: str = "holdout"
) -> Validation:
    """The judge version's rubric verdicts against the settled human outcomes
    of one split of a validation set (the judge's latest set when none is
    given): a LabelFigures for "pass", "grade" and each "rubric:<key>". Only
    the holdout split can validate; "tuning" figures are there to look at.
    Each item's verdict is this version's latest successful rubric verdict,
    from any judge run; people's outcomes are read as they stand now.
    Without a validation set, an empty Validation noting "no validation set
    drawn".

    Refuses (ApplicationError) an unknown split and a validation set drawn for
    another judge."""
    if split not in SPLITS:
        raise ApplicationError(f"the split is {' or '.join(SPLITS)}, not {split!r}")
    if validation_set is None:
        validation_set = judge_version.judge.validation_sets.order_by("-created_at", "-id").first()
        if validation_set is None:
            return Validation(
                judge_version=judge_version, validation_set=None, split=split, note=NO_VALIDATION_SET
            )
    elif validation_set.judge_id != judge_version.judge_id:
        raise ApplicationError(f"{validation_set} was drawn for another judge, not {judge_version.judge}")
    items = [
        drawn.item
        for drawn in ValidationItem.objects.filter(validation_set=validation_set, split=split)
        .select_related("item")
        .order_by("item_id")
    ]
    verdicts = _rubric_verdicts(ModelVerdict.objects.filter(judge_version=judge_version), items)
    compared, counts = _compared(items, verdicts)
    labels = _all_labels(compared, judge_version)
    if split == ValidationItem.Split.HOLDOUT:
        labels = tuple(_with_validation(figures, judge_version) for figures in labels)
    else:
        # Tuning items are the ones a judge's prompt may be adjusted on:
        # agreeing with them proves nothing about items it has not seen.
        tuning = "tuning items do not validate a judge: only holdout items count"
        labels = tuple(replace(figures, missing=tuning) for figures in labels)
    return Validation(
        judge_version=judge_version,
        validation_set=validation_set,
        split=split,
        items=len(items),
        labels=labels,
        note="" if compared else "no item of this split has both a settled human grade and a verdict",
        **counts,
    )


def judge_is_validated(judge_version: JudgeVersion, *, label: str = "pass") -> bool:
    """Whether the judge version is validated for ``label`` on the holdout
    split of its judge's latest validation set."""
    figures = judge_validation(judge_version=judge_version).label(label)
    return figures is not None and figures.validated


def validation_title(judge_version: JudgeVersion) -> str:
    """How figures from this judge version are titled: validated against
    people, with kappa's lower bound and n, or (spec 004) an internal
    consistency review when it has no human calibration."""
    figures = judge_validation(judge_version=judge_version).label("pass")
    if figures is None or not figures.validated:
        return UNCALIBRATED_TITLE
    return f"validated against people (κ lower bound {figures.kappa_low:.2f} on {figures.n} items)"


# -- the human regrade of a judge run ----------------------------------------


def regrade_agreement(judge_run: JudgeRun) -> LabelFigures | None:
    """Pass-or-fail agreement between the settled human outcomes of a judge
    run's regrade sample and that run's rubric verdicts, from the first of
    its judge versions (by id) that grades the rubric. None when the run has
    no regrade sample or no judge version grading the rubric."""
    regrade = _regrade(judge_run)
    return regrade[0] if regrade is not None else None


def regrade_disagreements(judge_run: JudgeRun) -> list[SampleItem]:
    """The regrade items whose settled human pass label differs from the
    judge's, in sample order, unless the regrade shows the judge agrees with
    people: the lower bound of kappa's interval (of percent agreement's
    Wilson interval where kappa is undefined) above the judge version's
    validation threshold, the bound the validation page uses. A kappa above
    the threshold on a small regrade is not enough (issue 24): its
    disagreements go to a lead as "judge disagrees with people"."""
    regrade = _regrade(judge_run)
    if regrade is None:
        return []
    figures, judge_version = regrade
    if figures.kappa is not None:
        lower = figures.kappa_low
    elif figures.n:
        lower = wilson_interval(figures.agreeing, figures.n)[0]
    else:
        return []
    if lower is not None and lower > judge_version.validation_threshold:
        return []
    return list(
        SampleItem.objects.filter(id__in=figures.differing_items)
        .select_related("sample", "answer")
        .order_by("sample_id", "position")
    )


def _regrade(judge_run: JudgeRun) -> tuple[LabelFigures, JudgeVersion] | None:
    if judge_run.regrade_sample_id is None:
        return None
    judge_version = next(
        (
            version
            for version in judge_run.judge_versions.order_by("id")
            if JudgeVersion.RUBRIC in (version.metrics or ())
        ),
        None,
    )
    if judge_version is None:
        return None
    items = list(judge_run.regrade_sample.items.filter(answer__isnull=False).order_by("position"))
    verdicts = _rubric_verdicts(
        ModelVerdict.objects.filter(judge_run=judge_run, judge_version=judge_version), items
    )
    compared, _ = _compared(items, verdicts)
    return _pass_label(compared), judge_version


# -- lining up people and judge ----------------------------------------------


@dataclass(frozen=True)
class _Pair:
    item_id: int
    people: Settled
    judge: dict


def _rubric_verdicts(verdicts, items: list[SampleItem]) -> dict[int, dict]:
    """The latest successful rubric verdict's labels per answer id."""
    latest = {}
    for answer_id, labels in (
        verdicts.filter(
            metric=JudgeVersion.RUBRIC, error="", answer_id__in={item.answer_id for item in items}
        )
        .order_by("created_at", "id")
        .values_list("answer_id", "labels")
    ):
        # A verdict whose labels lack a known grade did not grade anything.
        if isinstance(labels, dict) and labels.get("grade") in GRADES:
            latest[answer_id] = labels
    return latest


def _compared(items: list[SampleItem], verdicts: dict[int, dict]) -> tuple[list[_Pair], dict[str, int]]:
    settled = settled_outcomes(items)
    compared = []
    counts = {"unsettled": 0, "pending": 0, "without_verdict": 0}
    for item in items:
        people = settled.get(item.id)
        if people is None:
            counts["unsettled"] += 1
        elif people.grade == "pending":
            counts["pending"] += 1
        elif item.answer_id not in verdicts:
            counts["without_verdict"] += 1
        else:
            compared.append(_Pair(item.id, people, verdicts[item.answer_id]))
    return compared, counts


def _people_grade(settled: Settled) -> str:
    return counted_grade(settled.grade)


def _pass(grade: str) -> str:
    return "pass" if grade == "resolved" else "fail"


def _pass_label(compared: list[_Pair]) -> LabelFigures:
    return _figures(
        label="pass",
        title="Pass (resolved) or fail",
        categories=PASS_CATEGORIES,
        ratings=[
            (pair.item_id, _pass(_people_grade(pair.people)), _pass(pair.judge["grade"])) for pair in compared
        ],
        directions=(("passes what people fail", "pass", "fail"), ("fails what people pass", "fail", "pass")),
    )


def _all_labels(compared: list[_Pair], judge_version: JudgeVersion) -> tuple[LabelFigures, ...]:
    labels = [
        _pass_label(compared),
        _figures(
            label="grade",
            title="Grade",
            categories=GRADES,
            ratings=[(pair.item_id, _people_grade(pair.people), pair.judge["grade"]) for pair in compared],
        ),
    ]
    questions = {}
    if judge_version.rubric_version_id:
        questions = {question.key: question for question in judge_version.rubric_version.questions.all()}
    keys = list(questions)
    for pair in compared:
        judge_answers = pair.judge.get("answers") or {}
        for key in pair.people.rubric_answers:
            if key in judge_answers and key not in keys:
                keys.append(key)
    for key in keys:
        ratings = []
        for pair in compared:
            people_answer = pair.people.rubric_answers.get(key)
            judge_answer = (pair.judge.get("answers") or {}).get(key)
            if people_answer in ("yes", "no", "na") and judge_answer in ("yes", "no", "na"):
                ratings.append((pair.item_id, people_answer, judge_answer))
        question = questions.get(key)
        with_na = (question is not None and question.allows_na) or any(
            "na" in rating[1:] for rating in ratings
        )
        labels.append(
            _figures(
                label=f"{RUBRIC_PREFIX}{key}",
                title=f"Rubric: {question.text if question is not None else key.replace('_', ' ')}",
                categories=("yes", "no", "na") if with_na else ("yes", "no"),
                ratings=ratings,
                directions=(
                    ("says yes where people say no", "yes", "no"),
                    ("says no where people say yes", "no", "yes"),
                ),
            )
        )
    return tuple(labels)


# -- the figures -------------------------------------------------------------


def _figures(
    *,
    label: str,
    title: str,
    categories: tuple[str, ...],
    ratings: list[tuple[int, str, str]],
    directions: tuple[tuple[str, str, str], ...] = (),
) -> LabelFigures:
    """One label's figures from (item id, people's rating, judge's rating)."""
    index = {category: position for position, category in enumerate(categories)}
    matrix = [[0] * len(categories) for _ in categories]
    for _, people, judge in ratings:
        matrix[index[people]][index[judge]] += 1
    n = len(ratings)
    notes: dict[str, str] = {}
    errors = tuple(
        _directional(direction, ratings, judge_says=judge_says, people_say=people_say)
        for direction, judge_says, people_say in directions
    )
    differing = tuple(item_id for item_id, people, judge in ratings if people != judge)
    if not n:
        for name in ("percent", "kappa", "alpha"):
            notes[name] = "no item has both a settled human rating and the judge's"
        return LabelFigures(
            label, title, categories, matrix, 0, None, None, None, None, None, errors, notes, differing
        )
    percent = (n - len(differing)) / n
    kappa, kappa_low, kappa_upp = _kappa(matrix, notes)
    alpha = _alpha(ratings, notes)
    return LabelFigures(
        label,
        title,
        categories,
        matrix,
        n,
        percent,
        kappa,
        kappa_low,
        kappa_upp,
        alpha,
        errors,
        notes,
        differing,
    )


def _kappa(matrix: list[list[int]], notes: dict[str, str]) -> tuple[float | None, float | None, float | None]:
    """Cohen's kappa with its 95 % interval (KAPPA_INTERVAL_METHOD), None
    where either is not defined, with a note saying why."""
    kappa, low, upp = kappa_with_interval(matrix)
    if math.isnan(kappa):
        notes["kappa"] = "not defined when people and the judge give every item the same one category"
        return None, None, None
    if math.isnan(low) or math.isnan(upp):
        notes["kappa_interval"] = "the interval is not defined for these ratings"
        return kappa, None, None
    return kappa, low, upp


def _alpha(ratings: list[tuple[int, str, str]], notes: dict[str, str]) -> float | None:
    people = [rating[1] for rating in ratings]
    judge = [rating[2] for rating in ratings]
    alpha = krippendorff_alpha([people, judge], level="nominal")
    if math.isnan(alpha):
        notes["alpha"] = "not defined when every rating is the same category"
        return None
    return alpha


def _directional(
    title: str, ratings: list[tuple[int, str, str]], *, judge_says: str, people_say: str
) -> DirectionalError:
    said_by_people = [judge for _, people, judge in ratings if people == people_say]
    k = sum(judge == judge_says for judge in said_by_people)
    note = "" if said_by_people else f"people said {people_say} on no item"
    return DirectionalError(title=title, k=k, n=len(said_by_people), note=note)


def _with_validation(figures: LabelFigures, judge_version: JudgeVersion) -> LabelFigures:
    """The label validated, or the sentence saying which condition fails
    (scoring.stats.agreement.validation_missing)."""
    missing = validation_missing(
        categories=figures.categories,
        people=[sum(row) for row in figures.matrix],
        kappa_low=figures.kappa_low,
        threshold=judge_version.validation_threshold,
        min_items=judge_version.validation_min_items,
        undefined=figures.notes.get("kappa") or figures.notes.get("kappa_interval") or "no items",
    )
    return replace(figures, validated=not missing, missing="; ".join(missing))
