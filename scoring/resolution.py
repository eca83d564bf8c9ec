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


def stable_from_grades(
    grades: Mapping[str, Mapping[str, Sequence[str | None]]], *, repetitions: int | Mapping[str, int]
) -> dict:
    """``grades`` is {setup: {question: [grade of each attempt]}}, None for an
    attempt not graded; ``repetitions`` the attempts each question was
    planned, one number for all setups or {setup: R}. A question with fewer
    grades than its setup's R has the missing attempts not graded. Returns
    {"setups": {setup: {"k", "n", "not_yet_known", "stable", "repetitions"}},
    "common": ...}: k the questions fully resolved in every attempt of the n
    questions, ``stable`` their ids. A setup of one attempt has no stable
    rate: its k and not_yet_known are None and its "note" says why (its
    resolved questions still enter the common subset). ``common`` (two or
    more setups, else None) holds "questions" every setup fully resolved in
    every attempt it made, "k" their count, "n" the questions every setup was
    asked, and each setup's own k of n. With one attempt everywhere there is
    nothing but {"note": the one-attempt sentence}. Refuses (ValueError)
    fewer than one repetition and a question graded more than R times."""
    planned = {
        setup: repetitions[setup] if isinstance(repetitions, Mapping) else repetitions for setup in grades
    }
    for setup, r in planned.items():
        if r < 1:
            raise ValueError(f"stable resolution needs at least one attempt per question, not {r} ({setup})")
    if planned and all(r == 1 for r in planned.values()):
        return {"note": one_attempt_sentence(figures="the grades")}
    setups = {}
    for setup, questions in grades.items():
        r = planned[setup]
        stable, unknown = set(), 0
        for question, attempts in questions.items():
            if len(attempts) > r:
                raise ValueError(f"{setup}, question {question}: {len(attempts)} grades for {r} attempts")
            graded = list(attempts) + [None] * (r - len(attempts))
            if all(grade == RESOLVED for grade in graded):
                stable.add(question)
            elif None in graded and all(grade in (RESOLVED, None) for grade in graded):
                unknown += 1
        figure = {
            "k": len(stable),
            "n": len(questions),
            "not_yet_known": unknown,
            "stable": stable,
            "repetitions": r,
        }
        if r == 1:
            # Spec 004: with single runs, no stable-resolution rate.
            figure.update(
                k=None, not_yet_known=None, note=one_attempt_sentence(figures="its grades", who=setup)
            )
        setups[setup] = figure
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
