"""Scoring a QA dataset: each trial graded (by letter or by the judge), and
the accuracy and report of a task."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from scoring.llm import as_llm
from scoring.qa.answers import NOT_ANSWERED, OK, VERDICT_ERROR, LoggedAnswer
from scoring.qa.datasets import Question
from scoring.qa.prompts import (
    MIN_OPTIONS,
    PROMPT_HASH,
    PROMPT_VERSION,
    TASK_NAMES,
    choice_is_correct,
    judge_response,
    mc_prompt,
    option_letter,
)
from scoring.stats.rates import ClusterSums, rate

# --- Scoring -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Graded:
    """One trial: an attempt at a question, or a question not answered.

    ``status`` is "ok" for a graded response, "not_answered", the run log's
    status of an attempt that ended without an answer (counted incorrect),
    "error" for a system that failed, or "verdict_error" when the judge's
    verdict could not be read (``is_correct`` None: not counted)."""

    question_id: str
    attempt: int
    status: str
    is_correct: int | None
    stratum: str | None = None
    response: str | None = None
    reasoning: str | None = None
    error: str | None = None
    raw_verdict: str | None = None

    def as_dict(self) -> dict:
        shown = {
            "question_id": self.question_id,
            "attempt": self.attempt,
            "status": self.status,
            "is_correct": self.is_correct,
        }
        optional = {
            "stratum": self.stratum,
            "response": self.response,
            "reasoning": self.reasoning,
            "error": self.error,
            "raw_verdict": self.raw_verdict,
        }
        return shown | {name: value for name, value in optional.items() if value is not None}


@dataclass(frozen=True)
class Accuracy:
    """k correct of n counted trials with the Wilson 95 % interval, made on
    the effective n when questions were attempted more than once (None
    when nothing was counted), the trials not counted (verdict errors), and
    for multiple choice the random-guess baseline of the questions."""

    k: int
    n: int
    value: float | None
    low: float | None
    high: float | None
    errors: int = 0
    baseline: float | None = None
    # Set when a question's attempts are worth fewer independent trials.
    effective_n: float | None = None

    def as_dict(self) -> dict:
        shown = {"k": self.k, "n": self.n, "accuracy": self.value, "low": self.low, "high": self.high}
        shown["effective_n"] = self.effective_n
        shown["errors"] = self.errors
        if self.baseline is not None:
            shown["baseline"] = self.baseline
        return shown


@dataclass(frozen=True)
class QAReport:
    """A task's results: accuracy overall and per stratum, every trial, and
    for the open-ended task the judge's identity, prompts and usage."""

    task: str
    questions: int
    accuracy: Accuracy
    graded: tuple[Graded, ...]
    strata: dict[str, Accuracy] = field(default_factory=dict)
    stratum_column: str | None = None
    judge: dict | None = None

    @property
    def errors(self) -> list[Graded]:
        """Trials whose verdict could not be read: counted apart, not as correct or incorrect."""
        return [graded for graded in self.graded if graded.is_correct is None]

    @property
    def not_answered(self) -> list[Graded]:
        return [graded for graded in self.graded if graded.status == NOT_ANSWERED]

    @property
    def failed(self) -> list[Graded]:
        """Attempts that ended without an answer (a run log's status, a system error): counted incorrect."""
        return [graded for graded in self.graded if graded.status not in (OK, NOT_ANSWERED, VERDICT_ERROR)]

    def as_dict(self) -> dict:
        shown = {
            "task": self.task,
            "task_name": TASK_NAMES[self.task],
            "questions": self.questions,
            "trials": len(self.graded),
            "interval": {"method": "wilson", "confidence": 0.95},
            "accuracy": self.accuracy.as_dict(),
            "stratum_column": self.stratum_column,
            "strata": {name: accuracy.as_dict() for name, accuracy in self.strata.items()},
            "errors": {"total": len(self.errors), "items": [graded.as_dict() for graded in self.errors]},
            "not_answered": [graded.question_id for graded in self.not_answered],
            "failed": [graded.as_dict() for graded in self.failed],
            "results": [graded.as_dict() for graded in self.graded],
        }
        if self.judge is not None:
            shown["judge"] = self.judge
        return shown


System = Callable[[str], str]
Answers = Mapping[str, str | Sequence[LoggedAnswer]]


def score_multiple_choice(
    questions: Sequence[Question],
    *,
    system: System | None = None,
    answers: Answers | None = None,
    stratum_column: str | None = None,
) -> QAReport:
    """Accuracy on multiple choice ``questions`` (from read_dataset with task
    "mc"), beside the random-guess baseline.

    Give exactly one of ``system``, called with each question's mc_prompt and
    returning the response, or ``answers``, each question id's attempts
    (from read_run_answers; a plain text stands for one answered attempt).
    Refuses (ValueError) both or neither, and a question without options.
    """
    for question in questions:
        if len(question.options) < MIN_OPTIONS or question.correct is None:
            raise ValueError(f"question {question.id!r} has no options or no correct option: read it as mc")

    def grade(question: Question, answer: LoggedAnswer) -> Graded:
        is_correct = choice_is_correct(answer.answer, correct_letter=option_letter(question.correct))
        return _graded(question, answer, is_correct=is_correct)

    graded = _grade_all(questions, system=system, answers=answers, ask=_mc_text, grade=grade)
    return _report("mc", questions, graded, stratum_column=stratum_column)


def score_open_ended(
    questions: Sequence[Question],
    *,
    judge,
    system: System | None = None,
    answers: Answers | None = None,
    stratum_column: str | None = None,
) -> QAReport:
    """Accuracy on open-ended ``questions`` (from read_dataset with task
    "open"), each response graded by ``judge`` (anything scoring.llm.as_llm
    takes) against its reference. An empty response is incorrect without a
    judge call; a verdict that cannot be read is an error, not counted.

    Give exactly one of ``system`` (called with each question's text) or
    ``answers`` (as score_multiple_choice takes them). Refuses (ValueError)
    both or neither, and a question without a reference. Raises LLMError
    when the judge cannot be reached and CacheError when its cache fails.
    """
    for question in questions:
        if question.reference is None:
            raise ValueError(f"question {question.id!r} has no reference answer: read it as open")
    model = as_llm(judge)
    usage_before = model.usage.as_dict()

    def grade(question: Question, answer: LoggedAnswer) -> Graded:
        if not (answer.answer or "").strip():
            return _graded(question, answer, is_correct=0, reasoning="the response is empty")
        verdict = judge_response(
            question=question.text, reference=question.reference, response=answer.answer, judge=model
        )
        if verdict.is_correct is None:
            return _graded(
                question, answer, is_correct=None, status=VERDICT_ERROR, error=verdict.error, raw=verdict.raw
            )
        return _graded(question, answer, is_correct=verdict.is_correct, reasoning=verdict.reasoning)

    graded = _grade_all(
        questions, system=system, answers=answers, ask=lambda question: question.text, grade=grade
    )
    usage_after = model.usage.as_dict()
    judge_record = {
        **model.identity(),
        "prompt_version": PROMPT_VERSION,
        "prompt_hash": PROMPT_HASH,
        "usage": {name: usage_after[name] - usage_before[name] for name in usage_after},
    }
    return _report("open", questions, graded, stratum_column=stratum_column, judge=judge_record)


def _mc_text(question: Question) -> str:
    return mc_prompt(question.text, question.options)


def _graded(
    question: Question,
    answer: LoggedAnswer,
    *,
    is_correct: int | None,
    status: str = OK,
    reasoning: str | None = None,
    error: str | None = None,
    raw: str | None = None,
) -> Graded:
    return Graded(
        question_id=question.id,
        attempt=answer.attempt,
        status=status,
        is_correct=is_correct,
        stratum=question.stratum,
        response=answer.answer,
        reasoning=reasoning,
        error=error,
        raw_verdict=raw,
    )


def _grade_all(
    questions: Sequence[Question],
    *,
    system: System | None,
    answers: Answers | None,
    ask: Callable[[Question], str],
    grade: Callable[[Question, LoggedAnswer], Graded],
) -> list[Graded]:
    if (system is None) == (answers is None):
        raise ValueError("give either a system to ask or the answers of a run, not both or neither")
    graded = []
    for question, attempt in _trials(questions, system=system, answers=answers, ask=ask):
        if attempt is None:
            graded.append(
                Graded(
                    question.id,
                    1,
                    NOT_ANSWERED,
                    0,
                    stratum=question.stratum,
                    error="no answer to this question",
                )
            )
        elif attempt.status != OK:
            graded.append(
                Graded(
                    question.id,
                    attempt.attempt,
                    attempt.status,
                    0,
                    stratum=question.stratum,
                    response=attempt.answer,
                    error=attempt.reason,
                )
            )
        else:
            graded.append(grade(question, attempt))
    return graded


def _trials(
    questions: Sequence[Question],
    *,
    system: System | None,
    answers: Answers | None,
    ask: Callable[[Question], str],
) -> Iterator[tuple[Question, LoggedAnswer | None]]:
    """Each trial: (question, attempt), or (question, None) for a question not answered."""
    for question in questions:
        if system is not None:
            yield question, _ask(system, question, ask(question))
            continue
        given = answers.get(question.id)
        if given is None or (not isinstance(given, str) and not given):
            yield question, None
        elif isinstance(given, str):
            yield question, LoggedAnswer(question.id, answer=given)
        else:
            for attempt in given:
                yield question, attempt


def _ask(system: System, question: Question, text: str) -> LoggedAnswer:
    # A system that fails on one question is that question's failure, as a
    # run log's error status is, and the others are still asked.
    try:
        response = system(text)
    except Exception as error:
        return LoggedAnswer(question.id, status="error", reason=f"the system failed: {error}")
    if not isinstance(response, str):
        return LoggedAnswer(
            question.id, status="error", reason=f"the system returned {type(response).__name__}, not text"
        )
    return LoggedAnswer(question.id, answer=response)


def _report(
    task: str,
    questions: Sequence[Question],
    graded: list[Graded],
    *,
    stratum_column: str | None,
    judge: dict | None = None,
) -> QAReport:
    strata: dict[str, Accuracy] = {}
    names = list(dict.fromkeys(question.stratum for question in questions if question.stratum is not None))
    for name in names:
        strata[name] = _accuracy(
            task,
            [question for question in questions if question.stratum == name],
            [trial for trial in graded if trial.stratum == name],
        )
    return QAReport(
        task=task,
        questions=len(questions),
        accuracy=_accuracy(task, questions, graded),
        graded=tuple(graded),
        strata=strata,
        stratum_column=stratum_column if names else None,
        judge=judge,
    )


def _accuracy(task: str, questions: Sequence[Question], graded: Sequence[Graded]) -> Accuracy:
    counted = [trial for trial in graded if trial.is_correct is not None]
    k, n = sum(trial.is_correct for trial in counted), len(counted)
    # A question's attempts are one draw of the question, not R independent ones.
    by_question: dict[str, list[int]] = {}
    for trial in counted:
        by_question.setdefault(trial.question_id, []).append(trial.is_correct)
    clusters = ClusterSums.of([sum(v) for v in by_question.values()], [len(v) for v in by_question.values()])
    interval = rate(k, n, clusters=clusters) if n else None
    baseline = None
    if task == "mc" and questions:
        baseline = sum(1 / len(question.options) for question in questions) / len(questions)
    return Accuracy(
        k=k,
        n=n,
        value=interval.value if interval else None,
        low=interval.low if interval else None,
        high=interval.high if interval else None,
        effective_n=interval.effective_n if interval else None,
        errors=len(graded) - n,
        baseline=baseline,
    )
