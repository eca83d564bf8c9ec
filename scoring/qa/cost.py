"""What a judge would cost before it is asked: the prompts not yet cached
and their tokens."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scoring.llm import LLM, CacheError, as_llm, estimate_tokens
from scoring.qa.answers import OK
from scoring.qa.datasets import Question
from scoring.qa.prompts import JUDGE_SYSTEM, judge_prompt
from scoring.qa.score import Answers, _trials

# --- Cost --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JudgeCost:
    """What grading will cost before any call: ``calls`` judge calls, of
    which ``cached_calls`` the cache already answers, and an estimate of the
    prompt tokens of the others (scoring.llm.estimate_tokens)."""

    calls: int
    cached_calls: int
    estimated_prompt_tokens: int


def estimate_judge_cost(questions: Sequence[Question], *, answers: Answers, judge=None) -> JudgeCost:
    """The judge calls score_open_ended would make on ``answers``: one for
    every answered attempt with a response that is not empty. With ``judge``,
    the calls its cache already holds are counted apart and cost nothing.
    Raises CacheError when the cache cannot be read."""
    model = as_llm(judge) if judge is not None else None
    calls = cached = tokens = 0
    for question, attempt in _trials(
        questions, system=None, answers=answers, ask=lambda question: question.text
    ):
        if attempt is None or attempt.status != OK or not (attempt.answer or "").strip():
            continue
        prompt = judge_prompt(
            question=question.text, reference=question.reference or "", response=attempt.answer
        )
        calls += 1
        if model is not None and model.cache is not None and _cached(model, prompt):
            cached += 1
        else:
            tokens += estimate_tokens(JUDGE_SYSTEM, prompt)
    return JudgeCost(calls=calls, cached_calls=cached, estimated_prompt_tokens=tokens)


def _cached(model: LLM, prompt: str) -> bool:
    try:
        return model.cache_key(prompt, JUDGE_SYSTEM) in model.cache
    except Exception as error:
        raise CacheError(f"the response cache could not be read: {error}") from error
