"""An LLM judge labels; a fixed formula scores (spec 003).

Each method asks the model for labels as strict JSON (scoring.judge.verdict) and
computes the score from them, so a judge can never return a number the
formula did not produce:

=================== ==========================================================
faithfulness        supported claims / claims the answer makes
answer_relevance    (rating - 1) / 4 for a 1-5 rating
context_precision   average precision of per-context relevance, in order
context_recall      reference statements attributable to contexts / statements
answer_correctness  TP / (TP + (FP + FN) / 2) over statements
criteria_score      (rating - 1) / (scale - 1)
preference          1, 0.5 or 0 for answer A, asked in both orders
=================== ==========================================================
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import scoring.judge.prompts as prompts
from scoring.judge.verdict import Boolean, Choice, ListOf, Rating, Text, VerdictError, parse_verdict
from scoring.llm import LLM, CacheError, Completion, LLMError, as_llm

NAN = float("nan")

SCHEMAS = {
    "faithfulness": {"claims": ListOf({"claim": Text(), "supported": Boolean()})},
    "answer_relevance": {"score": Rating(1, 5)},
    "context_precision": {"verdicts": ListOf({"relevant": Boolean()})},
    "context_recall": {"statements": ListOf({"statement": Text(), "attributed": Boolean()})},
    "answer_correctness": {
        "true_positives": ListOf(Text()),
        "false_positives": ListOf(Text()),
        "false_negatives": ListOf(Text()),
    },
    "preference": {"winner": Choice(("answer_a", "answer_b", "tie"))},
}

METRICS = tuple(prompts.TEMPLATES)
GRADES = ("resolved", "partially_resolved", "material_error", "unresolved")


@dataclass(frozen=True)
class RubricQuestion:
    key: str
    text: str
    allows_na: bool = False
    na_rule: str = ""


@dataclass
class JudgeResult:
    """One judged item: the score, or why there is none.

    ``error`` is set when the model or its verdict failed (the raw text is in
    ``completions``); ``undefined`` when a valid verdict has no score (an
    answer that makes no claim has no faithfulness).
    """

    metric: str
    score: float = NAN
    verdict: dict | list | None = None
    details: dict = field(default_factory=dict)
    completions: list[Completion] = field(default_factory=list)
    error: str | None = None
    undefined: str | None = None

    @property
    def defined(self) -> bool:
        return not math.isnan(self.score)

    def as_dict(self) -> dict:
        return {
            "metric": self.metric,
            "score": None if math.isnan(self.score) else self.score,
            "verdict": self.verdict,
            "details": self.details,
            "completions": [completion.as_dict() for completion in self.completions],
            "error": self.error,
            "undefined": self.undefined,
        }


def context_texts(contexts) -> list[str]:
    """The text of each context: a string, a search hit (hit.doc.text), a document (doc.text) or {"text": …}.

    Refuses (TypeError) a context that is none of these.
    """
    texts = []
    for context in contexts or ():
        if isinstance(context, str):
            texts.append(context)
        elif isinstance(context, dict) and isinstance(context.get("text"), str):
            texts.append(context["text"])
        elif isinstance(getattr(getattr(context, "doc", None), "text", None), str):
            texts.append(context.doc.text)
        elif isinstance(getattr(context, "text", None), str):
            texts.append(context.text)
        else:
            raise TypeError(
                f"a context is a string, a hit, a document or a mapping with text, not {context!r}"
            )
    return texts


class _Failed(Exception):
    """A call or verdict failed; the result already says how."""


class LLMJudge:
    """A judge: a model, a prompt version and what to do with a malformed verdict.

    ``on_error="raise"`` (the default) raises VerdictError, LLMError or
    IncompleteCompletionError; ``"record"`` returns a result with score NaN
    and the error, the raw completion kept. A broken cache always raises.
    """

    def __init__(self, model, *, name: str | None = None, on_error: str = "raise"):
        if on_error not in ("raise", "record"):
            raise ValueError('on_error is "raise" or "record"')
        self.llm: LLM = as_llm(model)
        self.name = name or self.llm.model
        self.on_error = on_error

    def identity(self) -> dict:
        """Provider, model, options (secrets redacted), base URL, prompt version and prompt hash."""
        return dict(
            self.llm.identity(),
            name=self.name,
            prompt_version=prompts.PROMPT_VERSION,
            prompt_hash=prompts.prompt_hash(),
        )

    @property
    def usage(self):
        return self.llm.usage

    # -- the seven methods -------------------------------------------------

    def faithfulness(self, question: str, answer: str, contexts) -> JudgeResult:
        result = JudgeResult("faithfulness")
        texts = context_texts(contexts)
        prompt = prompts.FAITHFULNESS.format(
            question=prompts.tagged("question", question),
            answer=prompts.tagged("answer", answer),
            contexts=prompts.tagged_contexts(texts),
        )
        verdict = self._ask(result, prompt)
        if verdict is None:
            return result
        claims = verdict["claims"]
        supported = sum(claim["supported"] for claim in claims)
        result.details = {"n_claims": len(claims), "n_supported": supported}
        return _scored(result, supported, len(claims), "the answer makes no claim")

    def answer_relevance(self, question: str, answer: str) -> JudgeResult:
        result = JudgeResult("answer_relevance")
        prompt = prompts.ANSWER_RELEVANCE.format(
            question=prompts.tagged("question", question), answer=prompts.tagged("answer", answer)
        )
        verdict = self._ask(result, prompt)
        if verdict is not None:
            result.details = {"rating": verdict["score"]}
            result.score = (verdict["score"] - 1) / 4
        return result

    def context_precision(self, question: str, contexts, reference: str) -> JudgeResult:
        result = JudgeResult("context_precision")
        texts = context_texts(contexts)
        if not texts:
            result.undefined = "there is no context"
            return result
        prompt = prompts.CONTEXT_PRECISION.format(
            question=prompts.tagged("question", question),
            reference=prompts.tagged("reference", reference),
            contexts=prompts.tagged_contexts(texts),
            count=len(texts),
        )
        verdict = self._ask(result, prompt)
        if verdict is None:
            return result
        relevant = [item["relevant"] for item in verdict["verdicts"]]
        if len(relevant) != len(texts):
            count_error = VerdictError(
                f"the verdict gives {len(relevant)} relevance labels for {len(texts)} contexts",
                result.completions[-1].text,
            )
            self._fail(result, count_error)
            return result
        result.details = {"relevant": relevant}
        result.score = average_precision(relevant)
        return result

    def context_recall(self, question: str, contexts, reference: str) -> JudgeResult:
        result = JudgeResult("context_recall")
        prompt = prompts.CONTEXT_RECALL.format(
            question=prompts.tagged("question", question),
            reference=prompts.tagged("reference", reference),
            contexts=prompts.tagged_contexts(context_texts(contexts)),
        )
        verdict = self._ask(result, prompt)
        if verdict is None:
            return result
        statements = verdict["statements"]
        attributed = sum(statement["attributed"] for statement in statements)
        result.details = {"n_statements": len(statements), "n_attributed": attributed}
        return _scored(result, attributed, len(statements), "the reference makes no statement")

    def answer_correctness(self, question: str, answer: str, reference: str) -> JudgeResult:
        result = JudgeResult("answer_correctness")
        prompt = prompts.ANSWER_CORRECTNESS.format(
            question=prompts.tagged("question", question),
            answer=prompts.tagged("answer", answer),
            reference=prompts.tagged("reference", reference),
        )
        verdict = self._ask(result, prompt)
        if verdict is None:
            return result
        tp, fp, fn = (len(verdict[key]) for key in ("true_positives", "false_positives", "false_negatives"))
        result.details = {"tp": tp, "fp": fp, "fn": fn}
        if tp + fp + fn == 0:
            result.undefined = "neither the answer nor the reference makes a statement"
        else:
            result.score = tp / (tp + (fp + fn) / 2)
        return result

    def criteria_score(
        self, question: str, answer: str, criteria: str, *, scale: int = 5, contexts=None
    ) -> JudgeResult:
        if isinstance(scale, bool) or not isinstance(scale, int) or scale < 2:
            raise ValueError(f"a criteria scale is an integer of at least 2, not {scale!r}")
        result = JudgeResult("criteria_score")
        texts = context_texts(contexts)
        prompt = prompts.CRITERIA.format(
            scale=scale,
            criteria=prompts.tagged("criteria", criteria),
            question=prompts.tagged("question", question),
            answer=prompts.tagged("answer", answer),
            contexts=prompts.tagged_contexts(texts) if texts else "",
        )
        verdict = self._ask(result, prompt, {"score": Rating(1, scale)})
        if verdict is not None:
            result.details = {"rating": verdict["score"], "scale": scale}
            result.score = (verdict["score"] - 1) / (scale - 1)
        return result

    def preference(
        self, question: str, answer_a: str, answer_b: str, *, reference: str | None = None, contexts=None
    ):
        """1 when answer A is better, 0 when B is, 0.5 for a tie, asked once in each order.

        A judge whose verdict changes with the order gives a tie, and
        ``details["consistent"]`` is False.
        """
        result = JudgeResult("preference")
        texts = context_texts(contexts)
        winners = []
        for first, second, swapped in ((answer_a, answer_b, False), (answer_b, answer_a, True)):
            prompt = prompts.PREFERENCE.format(
                question=prompts.tagged("question", question),
                reference=prompts.tagged("reference", reference) if reference else "",
                contexts=prompts.tagged_contexts(texts) if texts else "",
                answer_a=prompts.tagged("answer_a", first),
                answer_b=prompts.tagged("answer_b", second),
            )
            verdict = self._ask(result, prompt)
            if verdict is None:
                return result
            winners.append(_unswapped(verdict["winner"], swapped))
        result.verdict = winners
        consistent = winners[0] == winners[1]
        winner = winners[0] if consistent else "tie"
        result.details = {"winner": winner, "consistent": consistent}
        result.score = {"a": 1.0, "tie": 0.5, "b": 0.0}[winner]
        return result

    def rubric(
        self,
        question: str,
        answer: str,
        contexts,
        rubric_questions: Sequence[RubricQuestion],
        *,
        guidance: str = "",
    ) -> JudgeResult:
        """The review rubric's yes/no answers and a grade, as a reader gives them; 1 for resolved, else 0.

        Refuses (ValueError) a rubric without questions.
        """
        if not rubric_questions:
            raise ValueError("a rubric needs at least one question")
        result = JudgeResult("rubric")
        texts = context_texts(contexts)
        listed = "\n".join(
            f"- {item.key}: {item.text}" + (f" (na when: {item.na_rule})" if item.allows_na else "")
            for item in rubric_questions
        )
        prompt = prompts.RUBRIC.format(
            guidance=prompts.tagged("guidance", guidance) if guidance else "",
            question=prompts.tagged("question", question),
            answer=prompts.tagged("answer", answer),
            contexts=prompts.tagged_contexts(texts) if texts else "",
            rubric_questions=listed,
        )
        schema = {
            "answers": {
                item.key: Choice(("yes", "no", "na") if item.allows_na else ("yes", "no"))
                for item in rubric_questions
            },
            "grade": Choice(GRADES),
        }
        verdict = self._ask(result, prompt, schema)
        if verdict is not None:
            result.details = {"grade": verdict["grade"], "answers": verdict["answers"]}
            result.score = 1.0 if verdict["grade"] == "resolved" else 0.0
        return result

    # -- asking ------------------------------------------------------------

    def _ask(self, result: JudgeResult, prompt: str, schema: dict | None = None) -> dict | None:
        """The parsed verdict, or None with the result's error set (when recording errors)."""
        try:
            completion = self.llm.complete(prompt, system=prompts.SYSTEM)
        except CacheError:
            raise
        except LLMError as error:
            return self._fail(result, error)
        result.completions.append(completion)
        try:
            verdict = parse_verdict(completion.text, schema or SCHEMAS[result.metric])
        except VerdictError as error:
            return self._fail(result, error)
        if result.metric != "preference":
            result.verdict = verdict
        return verdict

    def _fail(self, result: JudgeResult, error: Exception) -> None:
        if self.on_error == "raise":
            raise error
        result.error = str(error)
        result.score = NAN
        return None


def _scored(result: JudgeResult, part: int, whole: int, why_undefined: str) -> JudgeResult:
    if whole == 0:
        result.undefined = why_undefined
    else:
        result.score = part / whole
    return result


def _unswapped(winner: str, swapped: bool) -> str:
    """The winner as "a", "b" or "tie" in the caller's order."""
    if winner == "tie":
        return "tie"
    first_won = winner == "answer_a"
    return "a" if first_won != swapped else "b"


def average_precision(relevant: Sequence[bool]) -> float:
    """Mean of precision@k over the ranks k holding a relevant context; 0 when none is relevant."""
    hits = 0
    total = 0.0
    for rank, is_relevant in enumerate(relevant, 1):
        if is_relevant:
            hits += 1
            total += hits / rank
    return total / hits if hits else 0.0
