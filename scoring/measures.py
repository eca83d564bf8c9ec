"""The automatic measures of spec 000, recipe 4.2, per answer and per slice.

Each answer is checked against its question (expected behaviour and values
come from the question set, never from the log). A check holds, for every
measure, k and n, so that slices are plain sums and runs scored in chunks
add up exactly.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import NamedTuple

# MEASURES, FAILURE_MEASURES, COUNT_COLUMNS and AnswerCheck are imported from
# here too (the app, the CLI): they live in scoring.counts, beside repeats.
from scoring.counts import COUNT_COLUMNS as COUNT_COLUMNS
from scoring.counts import FAILURE_MEASURES as FAILURE_MEASURES
from scoring.counts import MEASURES as MEASURES
from scoring.counts import AnswerCheck as AnswerCheck
from scoring.numbers import Number, extract_numbers, match_value
from scoring.repeats import repeat_figures, tally, with_question_clusters
from scoring.stats.rates import ClusterSums

MEASURE_LABELS = {
    "numeric_accuracy": "numeric accuracy",
    "citation_validity": "citation validity",
    "refusal_accuracy": "refusal accuracy",
    "answer_rate": "answer rate when expected",
    "unsupported_numbers": "unsupported numbers",
    "unsupported_answers": "answers with unsupported numbers",
}

# What each denominator counts, written next to the figure. Questions the run
# holds no answer for ("not run") count as failures where a question counts.
DENOMINATORS = {
    "numeric_accuracy": "questions expecting an answer with an expected number, not run included",
    "citation_validity": "citations, every occurrence",
    "refusal_accuracy": "questions expecting a refusal, not run included",
    "answer_rate": "questions expecting an answer, not run included",
    "unsupported_numbers": "numbers stated, every occurrence, years and ordinals left out",
    "unsupported_answers": "answers given, and declined answers that state a number",
}

# Why a measure with no denominator does not apply: shown as "n/a" with its
# reason, never as 0 (a run of a task without numbers has no numeric accuracy).
NOT_APPLICABLE = {
    "numeric_accuracy": "no question has an expected number",
    "citation_validity": "no answer cited anything",
    "refusal_accuracy": "no question expected a refusal",
    "answer_rate": "no question expected an answer",
    "unsupported_numbers": "no figures in the answers",
    "unsupported_answers": "every answer declined without stating a figure",
}

# The denominators that counting each distinct value once changes.
DISTINCT_DENOMINATORS = {
    "citation_validity": "distinct identifiers cited per answer",
    "unsupported_numbers": "distinct numbers stated per answer, years and ordinals left out",
}

FINDING_KINDS = ("numeric", "unsupported", "refusal", "declined", "citation", "not_run", "failed")

# A line whose status is not "ok" (spec 004: a delivery failure or timeout)
# has no answer to score.
FAILURE_STATUSES = ("error", "timeout", "cancelled", "refused_quota")

DEFAULT_SLICES = ("language",)

(
    NUMERIC_K, NUMERIC_N, CITATION_K, CITATION_N, REFUSAL_K, REFUSAL_N,
    ANSWER_K, ANSWER_N, UNSUPPORTED_K, UNSUPPORTED_N, UNSUPPORTED_ANSWERS_K, UNSUPPORTED_ANSWERS_N,
) = range(len(COUNT_COLUMNS))  # fmt: skip


@dataclass(frozen=True)
class Options:
    """Optional matching rules, off by default and recorded with the scores."""

    rounding: bool = False  # 7.6 matches 7.62: the value rounded to the number's precision
    scale_words: bool = False  # "1.2 million" also reads as 1,200,000
    # Count each distinct number and cited identifier once per answer. Off by
    # default: spec 000's reference script counts every occurrence, and a team
    # moving from it must see the same n.
    distinct: bool = False

    def as_dict(self) -> dict:
        return {name: value for name, value in asdict(self).items() if value}


DEFAULT_OPTIONS = Options()


def denominator(measure: str, options: Options = DEFAULT_OPTIONS) -> str:
    """What the measure's n counts under these options, to write under its heading."""
    if options.distinct and measure in DISTINCT_DENOMINATORS:
        return DISTINCT_DENOMINATORS[measure]
    return DENOMINATORS[measure]


def not_applicable(measures: Mapping[str, Mapping]) -> dict[str, str]:
    """The measures a slice's counts (slice_counts) leave out, n = 0, each
    with the reason it does not apply (NOT_APPLICABLE), in MEASURES order."""
    return {measure: NOT_APPLICABLE[measure] for measure in MEASURES if measure not in measures}


def format_value(value: float) -> str:
    """41.0 as "41", 7.6 as "7.6": values as a person would write them."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


class Finding:
    __slots__ = ("detail", "kind", "question_id")

    def __init__(self, question_id: str, kind: str, detail: str):
        self.question_id = question_id
        self.kind = kind
        self.detail = detail

    def __eq__(self, other) -> bool:
        return isinstance(other, Finding) and self.as_dict() == other.as_dict()

    def __repr__(self) -> str:
        return f"Finding({self.question_id!r}, {self.kind!r}, {self.detail!r})"

    def as_dict(self) -> dict:
        return {"question_id": self.question_id, "kind": self.kind, "detail": self.detail}


class NumberCheck:
    """A number read from an answer, and what it was checked against."""

    __slots__ = ("counted", "matched", "number", "supported")

    def __init__(self, number: Number, counted: bool, supported: bool | None, matched):
        self.number = number
        # Years and ordinals (and, counting distinct values, repeats) are not counted.
        self.counted = counted
        self.supported = supported  # None for years and ordinals
        self.matched = matched  # the retrieved or expected value it matched

    @property
    def sign_differs(self) -> bool:
        """True when the value it matched has the other sign ("fell by 2.5" against −2.5)."""
        return bool(self.matched) and (self.matched < 0) != (self.number.value < 0)

    def as_dict(self) -> dict:
        return {
            "text": self.number.text,
            "value": self.number.value,
            "start": self.number.start,
            "end": self.number.end,
            "counted": self.counted,
            "ordinal": self.number.is_ordinal,
            "supported": self.supported,
            "matched": self.matched,
            "sign_differs": self.sign_differs,
        }


class NumberMatches(NamedTuple):
    """What ``match_numbers`` found in one answer's numbers."""

    checks: list[NumberCheck]  # every number read, years and ordinals included (empty unless kept)
    counted: int  # numbers counted: years and ordinals left out, and repeats with ``distinct``
    unsupported: list[Number]  # the counted numbers no value supports, in order


def match_numbers(
    numbers: Sequence[Number],
    *,
    retrieved_values: Collection[float],
    expected_values: Collection[float] = (),
    options: Options = DEFAULT_OPTIONS,
    keep_numbers: bool = True,
) -> NumberMatches:
    """Check each number read from an answer against the values it may rest on.

    The one test of spec 000's unsupported numbers, shared by the scorer
    (``check_answer``) and the number check at display time
    (``scoring.check.check_numbers``): a year or an ordinal ("the 21st
    century", "the 2nd time") is read but not counted; any
    other number is supported when a retrieved value, else an expected one,
    matches one of its readings (``match_value``, with ``options.rounding``).
    Every occurrence counts unless ``options.distinct``, which counts a
    repeated value once. ``keep_numbers`` keeps a NumberCheck per number.
    """
    # Every occurrence counts, as in spec 000's reference script; with
    # ``distinct`` a repeated figure is one claim.
    checks: list[NumberCheck] = []
    unsupported: list[Number] = []
    counted = 0
    seen: set[float] = set()
    distinct = options.distinct
    rounding = options.rounding
    for number in numbers:
        # The length first: most numbers are no year, and is_year is a call.
        if (len(number.text) == 4 and number.is_year) or number.is_ordinal:
            if keep_numbers:
                checks.append(NumberCheck(number, False, None, None))
            continue
        value = number.value
        # Most supported figures equal a value exactly: a fast C-level look first.
        if len(number.readings) == 1 and not number.signed and value in retrieved_values:
            matched = value
        else:
            matched = match_value(number, retrieved_values, rounding=rounding)
            if matched is None:
                matched = match_value(number, expected_values, rounding=rounding)
        repeated = distinct and value in seen
        seen.add(value)
        if keep_numbers:
            checks.append(NumberCheck(number, not repeated, matched is not None, matched))
        if repeated:
            continue
        counted += 1
        if matched is None:
            unsupported.append(number)
    return NumberMatches(checks, counted, unsupported)


def check_answer(
    answer: Mapping,
    question: Mapping,
    *,
    slice_fields: Sequence[str] = DEFAULT_SLICES,
    options: Options = DEFAULT_OPTIONS,
    keep_numbers: bool = True,
) -> AnswerCheck:
    """Check one logged answer against its question.

    ``answer`` has the fields of recipe 4.1; ``question`` has
    ``expected_behaviour`` ("answer" or "decline") and ``expected_values``.
    Numeric accuracy counts a question expecting an answer only when it has
    expected values: for the rest (a reference that is code, a word, a date)
    it does not apply, and n stays 0. Spec 000's reference script counts
    such a question as a miss; its example has none, so its counts stand.
    ``keep_numbers`` keeps each number with what it matched (for showing the
    answer); scoring alone does without.

    A line whose ``status`` is not "ok" has no answer: it counts as a failure
    of every measure a question counts in (numeric accuracy and answer rate,
    or refusal accuracy) and is listed as a "failed" finding with its
    reason; it is never a knowledge error, so it states no number.
    """
    status = answer.get("status") or "ok"
    if status != "ok":
        return failed_check(answer, question, slice_fields=slice_fields)
    question_id = answer["question_id"]
    expected_values = question.get("expected_values") or ()
    retrieved_values = answer.get("retrieved_values") or ()
    declined = bool(answer["declined"])
    text = answer.get("answer") or ""
    counts = [0] * len(COUNT_COLUMNS)
    findings: list[Finding] = []

    numbers = extract_numbers(text, language=answer.get("language") or "", scale_words=options.scale_words)

    if question["expected_behaviour"] == "answer":
        counts[ANSWER_N] = 1
        counts[ANSWER_K] = int(not declined)
        # Numeric accuracy applies to a question with an expected number only:
        # one whose reference is code, a word or a date has nothing to match.
        hit = (
            bool(expected_values)
            and not declined
            and _any_supported(numbers, expected_values, options.rounding)
        )
        counts[NUMERIC_N] = int(bool(expected_values))
        counts[NUMERIC_K] = int(hit)
        if expected_values and not hit:
            expected = ", ".join(format_value(v) for v in expected_values)
            if declined:
                gave = "the answer declined"
            elif numbers:
                gave = "the answer gave " + ", ".join(n.text for n in numbers)
            else:
                gave = "the answer gave no number"
            findings.append(Finding(question_id, "numeric", f"expected {expected}; {gave}"))
        if declined:
            findings.append(Finding(question_id, "declined", "should have answered, but declined"))
    else:
        counts[REFUSAL_N] = 1
        counts[REFUSAL_K] = int(declined)
        if not declined:
            findings.append(Finding(question_id, "refusal", f"should have declined, but answered: {text!r}"))

    cited_ids = answer.get("cited_ids")
    if cited_ids:
        retrieved_ids = answer.get("retrieved_ids") or ()
        for cited in dict.fromkeys(cited_ids) if options.distinct else cited_ids:
            counts[CITATION_N] += 1
            if cited in retrieved_ids:
                counts[CITATION_K] += 1
            else:
                findings.append(Finding(question_id, "citation", f"cited {cited}, which was not retrieved"))

    number_checks, counts[UNSUPPORTED_N], unsupported = match_numbers(
        numbers,
        retrieved_values=retrieved_values,
        expected_values=expected_values,
        options=options,
        keep_numbers=keep_numbers,
    )
    counts[UNSUPPORTED_K] = len(unsupported)
    for number in unsupported:
        findings.append(
            Finding(question_id, "unsupported", f"{number.text} is neither a retrieved nor an expected value")
        )
    # The answer level rests on the same answers as the number level: every
    # answer given, and a declined answer that still states a figure.
    if not declined or counts[UNSUPPORTED_N]:
        counts[UNSUPPORTED_ANSWERS_N] = 1
        counts[UNSUPPORTED_ANSWERS_K] = int(counts[UNSUPPORTED_K] > 0)

    if slice_fields == DEFAULT_SLICES:
        fields = (answer.get("language"),)
    else:
        fields = tuple(answer[name] if name in answer else question.get(name) for name in slice_fields)
    return AnswerCheck(question_id, fields, counts, number_checks, findings)


def _any_supported(numbers: Sequence[Number], values: Collection[float], rounding: bool) -> bool:
    """True when one of ``numbers`` matches one of ``values`` (see match_value)."""
    for number in numbers:
        # An exact match, the usual one, is found in C.
        if number.value in values or match_value(number, values, rounding=rounding) is not None:
            return True
    return False


def _question_failure_counts(question: Mapping) -> list[int]:
    """Counts of an attempt with no answer: n = 1, k = 0 where a question
    counts (numeric accuracy only with an expected number)."""
    counts = [0] * len(COUNT_COLUMNS)
    if question["expected_behaviour"] == "answer":
        counts[ANSWER_N] = 1
        counts[NUMERIC_N] = int(bool(question.get("expected_values")))
    else:
        counts[REFUSAL_N] = 1
    return counts


def failed_check(
    answer: Mapping, question: Mapping, *, slice_fields: Sequence[str] = DEFAULT_SLICES
) -> AnswerCheck:
    """The check of an attempt that ended without an answer (error, timeout,
    cancelled, refused by quota): unresolved wherever a question counts, with
    the platform's, tool's or cancellation's reason kept."""
    status = answer.get("status") or "error"
    reason = answer.get("status_reason") or "no reason given"
    fields = tuple(answer[name] if name in answer else question.get(name) for name in slice_fields)
    finding = Finding(
        answer["question_id"], "failed", f"{status}: {reason} (no answer; not a knowledge error)"
    )
    return AnswerCheck(answer["question_id"], fields, _question_failure_counts(question), [], [finding])


def not_run_check(question: Mapping, *, slice_fields: Sequence[str] = DEFAULT_SLICES) -> AnswerCheck:
    """The check of a question of the set that the run holds no answer for:
    a failure of numeric accuracy and answer rate, or of refusal accuracy,
    so that nothing leaves the denominator. Sliced by the question's fields."""
    question_id = question["question_id"]
    counts = _question_failure_counts(question)
    fields = tuple(question.get(name) for name in slice_fields)
    finding = Finding(question_id, "not_run", "the run holds no answer to this question")
    return AnswerCheck(question_id, fields, counts, [], [finding])


def not_run_checks(
    questions: Mapping[str, Mapping],
    attempts: Mapping[str, int],
    *,
    repetitions: int = 1,
    slice_fields: Sequence[str] = DEFAULT_SLICES,
) -> list[AnswerCheck]:
    """One not-run check for every attempt of every question that the run
    did not make: R minus the attempts it holds (``attempts`` counts them by
    question id)."""
    checks = []
    for question_id in questions:
        missing = repetitions - attempts.get(question_id, 0)
        if missing > 0:  # by id first: a question is made only when an attempt is missing
            question = questions[question_id]
            checks += [not_run_check(question, slice_fields=slice_fields) for _ in range(missing)]
    return checks


def answered(check: AnswerCheck) -> bool:
    """False for an attempt that has no answer: it failed or was not run."""
    return not any(finding.kind in ("failed", "not_run") for finding in check.findings)


def slice_counts(
    checks: Sequence[AnswerCheck], *, slice_fields: Sequence[str] = DEFAULT_SLICES
) -> dict[str, dict[str, dict]]:
    """Sum the checks into {slice: {measure: {"k", "n", "clusters"}}}.

    Slices are ``all`` and ``field=value`` for each slice field (answers
    without a value for a field belong to none of its slices). A measure with
    n = 0 in a slice is left out of it. "clusters" holds the cluster sums
    (scoring.stats.rates.ClusterSums, as a dict) with each answer its own
    cluster, since an answer's numbers and citations are not independent;
    with repeated attempts, scoring.repeats.with_question_clusters makes the
    question the cluster.
    """
    if not checks:
        return {}
    groups: list[dict] = [{} for _ in slice_fields]
    for check in checks:
        for position, value in enumerate(check.fields):
            if value is not None:
                groups[position].setdefault(value, []).append(check.counts)
    totals = {"all": _measure_counts([check.counts for check in checks])}
    for name, by_value in zip(slice_fields, groups, strict=True):
        for value in sorted(by_value, key=str):
            totals[f"{name}={value}"] = _measure_counts(by_value[value])
    return totals


def _measure_counts(rows: list[list[int]]) -> dict[str, dict]:
    columns = list(zip(*rows, strict=True))
    result = {}
    for index, measure in enumerate(MEASURES):
        k_column, n_column = columns[2 * index], columns[2 * index + 1]
        n = sum(n_column)
        if n:
            sums = ClusterSums.of(k_column, n_column)
            result[measure] = {"k": sum(k_column), "n": n, "clusters": sums.as_dict()}
    return result


def merge_slice_counts(*parts: dict) -> dict[str, dict[str, dict]]:
    """Add up slice counts of disjoint sets of answers (chunks of one run).
    Their cluster sums add up too, as long as no question's attempts are
    split between parts (scoring.repeats.with_question_clusters redoes them
    from whole questions); counts stored without them give none."""
    merged: dict[str, dict[str, dict]] = {}
    for part in parts:
        for slice_name, measures in part.items():
            target = merged.setdefault(slice_name, {})
            for measure, counts in measures.items():
                total = target.get(measure)
                if total is None:
                    total = target[measure] = {"k": 0, "n": 0, "clusters": dict(_NO_CLUSTERS)}
                total["k"] += counts["k"]
                total["n"] += counts["n"]
                if total["clusters"] is not None and counts.get("clusters") is not None:
                    total["clusters"] = (
                        ClusterSums(**total["clusters"]) + ClusterSums(**counts["clusters"])
                    ).as_dict()
                else:
                    total["clusters"] = None
    for measures in merged.values():
        for counts in measures.values():
            if counts["clusters"] is None:
                del counts["clusters"]
    return dict(sorted(merged.items(), key=lambda item: (item[0] != "all", item[0])))


def plain_counts(slices: Mapping[str, Mapping[str, Mapping]]) -> dict[str, dict[str, dict[str, int]]]:
    """{slice: {measure: {k, n}}}: the counts without their cluster sums, as
    spec 000's reference script gives them."""
    return {
        name: {measure: {"k": c["k"], "n": c["n"]} for measure, c in measures.items()}
        for name, measures in slices.items()
    }


_NO_CLUSTERS = {"clusters": 0, "k2": 0, "kn": 0, "n2": 0}


@dataclass
class RunScores:
    answers: int
    slices: dict[str, dict[str, dict[str, int]]]
    findings: list[Finding]
    options: Options = DEFAULT_OPTIONS
    not_run: int = 0  # attempts of the set's questions that the run does not hold
    repetitions: int = 1
    stable: dict = field(default_factory=dict)  # per slice and measure, when R >= 2
    timing: dict = field(default_factory=dict)  # per slice, spec 004's timing summary
    # The clocks the header states (skew_ms, precision_ms; None: not stated).
    clock: dict = field(default_factory=lambda: {"skew_ms": None, "precision_ms": None})
    # How the assistant was called ("direct", "channel"; None: not declared)
    # and whether the header chose to leave channel overhead out of E2E.
    reply_policy: str | None = None
    exclude_overhead: bool = False
    # Of the answers, the lines that repeat an attempt of the run ``repeats``
    # names (repeats_attempt): that attempt keeps its own receipt there.
    reruns: int = 0
    repeats: int | str | None = None
    # How many findings there are: more than ``findings`` holds when they
    # were written out as they were found (scoring.runner.score_file).
    finding_count: int | None = None
    # The attempts that took follow-ups, by kind, with their summary line
    # (scoring.logfile.follow_up_counts; empty when not counted).
    follow_ups: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.finding_count is None:
            self.finding_count = len(self.findings)

    def as_dict(self) -> dict:
        result = {
            "answers": self.answers,
            "not_run": self.not_run,
            "repetitions": self.repetitions,
            "slices": self.slices,
            "findings": [finding.as_dict() for finding in self.findings],
        }
        if self.repeats is not None or self.reruns:
            result["repeats"], result["reruns"] = self.repeats, self.reruns
        if self.repetitions > 1:
            result["stable"] = self.stable
        if self.timing:
            result["timing"] = self.timing
            result["clock"] = self.clock
            result["reply_policy"] = self.reply_policy
            result["exclude_overhead"] = self.exclude_overhead
        return result


def named_clusters(questions: Mapping[str, Mapping]) -> dict[str, str]:
    """Question id to the cluster its question set names (questions sharing a
    passage or document: their answers are not independent draws), for the
    questions that name one."""
    if callable(clusters := getattr(questions, "clusters", None)):
        return clusters()  # a QuestionTable's column, without making every question
    return {
        question_id: question["cluster"]
        for question_id, question in questions.items()
        if question.get("cluster")
    }


def score_run(
    answers: Iterable[Mapping],
    questions: Mapping[str, Mapping],
    *,
    slice_fields: Sequence[str] = DEFAULT_SLICES,
    options: Options = DEFAULT_OPTIONS,
    repetitions: int = 1,
) -> RunScores:
    """Score a whole run: per-slice counts and findings, and with
    ``repetitions`` of 2 or more the stable resolution. Every answer's
    question must be in ``questions``; each of a question's R attempts that
    the run does not hold counts as not run."""
    checks = [
        check_answer(a, questions[a["question_id"]], slice_fields=slice_fields, options=options)
        for a in answers
    ]
    attempts = Counter(check.question_id for check in checks)
    not_run = not_run_checks(questions, attempts, repetitions=repetitions, slice_fields=slice_fields)
    checks += not_run
    stable = {}
    slices = merge_slice_counts(slice_counts(checks, slice_fields=slice_fields))
    clusters = named_clusters(questions)
    if repetitions > 1 or clusters:
        tallies = tally(checks, answered=answered)
        stable = repeat_figures(tallies, repetitions=repetitions, slice_fields=slice_fields)
        slices = with_question_clusters(slices, tallies, slice_fields=slice_fields, cluster_of=clusters)
    return RunScores(
        answers=len(checks) - len(not_run),
        slices=slices,
        findings=[finding for check in checks for finding in check.findings],
        options=options,
        not_run=len(not_run),
        repetitions=repetitions,
        stable=stable,
    )
