"""Stable resolution from grades (spec 004, "Denominators and statistics"):
a question counts toward the stable-resolution count only when every one of
its R attempts is graded fully resolved. A question with an attempt not yet
graded (pending, not read, not run) is not yet known: counted apart, never
as resolved or as not. The common subset is the questions every compared
setup fully resolved in every attempt, each setup's figure beside it on its
own denominator."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from scoring.repeats import one_attempt_sentence

RESOLVED = "resolved"
NOT_YET_KNOWN = "not yet known"


def stable_from_grades(grades: Mapping[str, Mapping[str, Sequence[str | None]]], *, repetitions: int) -> dict:
    """``grades`` is {setup: {question: [grade of each attempt]}}, None for an
    attempt not graded; a question with fewer than ``repetitions`` grades has
    the missing attempts not graded. Returns {"setups": {setup: {"k", "n",
    "not_yet_known", "stable"}}, "common": ...}: k the questions fully
    resolved in every attempt of the n questions, ``stable`` their ids.
    ``common`` (two or more setups, else None) holds "questions" every setup
    fully resolved in every attempt, "k" their count, "n" the questions every
    setup was asked, and each setup's own k of n. With one attempt there is
    no stable rate: {"note": the one-attempt sentence}. Refuses (ValueError)
    fewer than one repetition and a question graded more than R times."""
    if repetitions < 1:
        raise ValueError(f"stable resolution needs at least one attempt per question, not {repetitions}")
    if repetitions == 1:
        return {"note": one_attempt_sentence(figures="the grades")}
    setups = {}
    for setup, questions in grades.items():
        stable, unknown = set(), 0
        for question, attempts in questions.items():
            if len(attempts) > repetitions:
                raise ValueError(
                    f"{setup}, question {question}: {len(attempts)} grades for {repetitions} attempts"
                )
            graded = list(attempts) + [None] * (repetitions - len(attempts))
            if all(grade == RESOLVED for grade in graded):
                stable.add(question)
            elif None in graded and all(grade in (RESOLVED, None) for grade in graded):
                unknown += 1
        setups[setup] = {"k": len(stable), "n": len(questions), "not_yet_known": unknown, "stable": stable}
    common = None
    if len(setups) >= 2:
        asked = set.intersection(*(set(questions) for questions in grades.values()))
        both = set.intersection(*(figures["stable"] for figures in setups.values()))
        common = {
            "questions": sorted(both),
            "k": len(both),
            "n": len(asked),
            "setups": {setup: {"k": f["k"], "n": f["n"]} for setup, f in setups.items()},
        }
    return {"setups": setups, "common": common}
