"""The multi-turn protocol (spec 004, "Tool calls and channel overhead"):
when a question needs the user to supply more information, one protocol is
declared for every setup, and follow-ups outside it (ad hoc) and resumes are
labelled as such.

A question line may declare ``follow_up``: {"text": ..., "max_turns": n},
the follow-up every setup is sent when it asks for more, and how many turns
an attempt may take in all; a question set's header may declare one for
every question that declares none of its own. An answer line may record ``turns`` (how many
turns the attempt took; one more than its follow-ups unless stated) and
``follow_ups``: [{"text": ..., "kind": "protocol" | "ad_hoc" | "resume"}].
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from scoring.logfile.lines import iter_raw_lines

FOLLOW_UP_KINDS = ("protocol", "ad_hoc", "resume")
# How each kind is labelled wherever an attempt is shown.
FOLLOW_UP_LABELS = {"protocol": "by protocol", "ad_hoc": "ad hoc", "resume": "resumed"}
# More turns than this is a slip (a count of seconds or tokens), not a plan.
MAX_TURNS = 20
FOLLOW_UP_TEXT_MAX_LENGTH = 2000


def _shown(value) -> str:
    return json.dumps(value, ensure_ascii=False)[:60]


def _text_problem(value) -> str | None:
    if type(value) is not str:
        return f"must be a string, not {_shown(value)}"
    if not value.strip():
        return "empty"
    if len(value) > FOLLOW_UP_TEXT_MAX_LENGTH:
        return f"{len(value)} characters long, more than the {FOLLOW_UP_TEXT_MAX_LENGTH} allowed"
    return None


def follow_up_declaration_problems(value) -> list[tuple[str, str]]:
    """(field, message) for everything wrong with a question's declared
    ``follow_up`` (empty when it is valid, or absent as None): an object
    with a non-empty "text" and a whole-number "max_turns" from 2 to 20."""
    if value is None:
        return []
    if type(value) is not dict:
        return [("follow_up", f'must be an object {{"text": ..., "max_turns": ...}}, not {_shown(value)}')]
    problems = [
        (f"follow_up.{name}", 'is not a follow-up field: only "text" and "max_turns" are')
        for name in value
        if name not in ("text", "max_turns")
    ]
    if "text" not in value:
        problems.append(("follow_up.text", "missing"))
    elif problem := _text_problem(value["text"]):
        problems.append(("follow_up.text", problem))
    max_turns = value.get("max_turns")
    if "max_turns" not in value:
        problems.append(("follow_up.max_turns", "missing"))
    elif not (type(max_turns) is int and 2 <= max_turns <= MAX_TURNS):
        problems.append(
            (
                "follow_up.max_turns",
                f"must be a whole number from 2 to {MAX_TURNS}, the turns an attempt may take "
                f"with its follow-ups, not {_shown(max_turns)}",
            )
        )
    return problems


def follow_up_errors(record: dict) -> list[tuple[str, str]]:
    """(field, message) for everything wrong with an answer line's ``turns``
    and ``follow_ups`` (empty when both are valid or absent)."""
    problems = []
    follow_ups = record.get("follow_ups")
    if follow_ups is not None:
        if type(follow_ups) is not list:
            problems.append(("follow_ups", f"must be a list of follow-ups, not {_shown(follow_ups)}"))
            follow_ups = None
        else:
            for index, item in enumerate(follow_ups):
                where = f"follow_ups[{index}]"
                if type(item) is not dict:
                    problems.append((where, 'must be an object {"text": ..., "kind": ...}'))
                    continue
                if problem := _text_problem(item.get("text")):
                    problems.append((f"{where}.text", "missing" if "text" not in item else problem))
                if item.get("kind") not in FOLLOW_UP_KINDS:
                    problems.append(
                        (
                            f"{where}.kind",
                            f'must be "protocol", "ad_hoc" or "resume", not {_shown(item.get("kind"))}'
                            if "kind" in item
                            else 'missing: say "protocol", "ad_hoc" or "resume"',
                        )
                    )
    turns = record.get("turns")
    if turns is not None:
        if not (type(turns) is int and 1 <= turns <= MAX_TURNS):
            problems.append(("turns", f"must be a whole number from 1 to {MAX_TURNS}, not {_shown(turns)}"))
        elif follow_ups and turns < len(follow_ups) + 1:
            problems.append(
                (
                    "turns",
                    f"is {turns}, but the line gives {len(follow_ups)} follow-ups: "
                    f"an attempt with them takes at least {len(follow_ups) + 1} turns",
                )
            )
    return problems


def label_follow_ups(record: dict, declared: dict | None) -> tuple[int, list[dict], list[str]]:
    """(turns, follow-ups, warnings) of a valid answer line, against the
    follow-up its question declares (None when it declares none).

    A follow-up logged as "protocol" whose text is not the declared one (or
    whose question declares none) is not the protocol: it is labelled
    "ad_hoc", keeps ``logged_kind`` "protocol", and is warned of. More turns
    than the declared max_turns are warned of too; nothing is refused."""
    follow_ups = record.get("follow_ups") or []
    turns = record.get("turns") or len(follow_ups) + 1
    if declared is None and not follow_ups:
        return turns, [], []  # the usual line: nothing to label or warn of
    labelled, warnings = [], []
    for index, item in enumerate(follow_ups):
        follow_up = {"text": item["text"], "kind": item["kind"]}
        if item["kind"] == "protocol" and (declared is None or item["text"] != declared["text"]):
            follow_up = {**follow_up, "kind": "ad_hoc", "logged_kind": "protocol"}
            why = (
                "the set declares no follow-up for this question"
                if declared is None
                else ("its text is not the one the set declares")
            )
            warnings.append(f"follow_ups[{index}] is logged as protocol, but {why}: counted as ad hoc")
        labelled.append(follow_up)
    if declared is not None and turns > declared["max_turns"]:
        warnings.append(f"took {turns} turns, more than the {declared['max_turns']} the set declares")
    return turns, labelled, warnings


def follow_up_counts(follow_up_lists: Iterable[list[dict]]) -> dict[str, int]:
    """How many attempts took follow-ups ("attempts"), and of them how many
    took one by protocol, one ad hoc and one resume (an attempt may count in
    several), from each attempt's labelled follow-ups."""
    counts = {"attempts": 0, **dict.fromkeys(FOLLOW_UP_KINDS, 0)}
    for follow_ups in follow_up_lists:
        if not follow_ups:
            continue
        counts["attempts"] += 1
        for kind in {item["kind"] for item in follow_ups}:
            counts[kind] += 1
    return counts


def follow_up_summary(counts: dict[str, int]) -> str:
    """The line pages and the CLI show for ``follow_up_counts``."""
    attempts = counts["attempts"]
    return f"{attempts} attempt{'' if attempts == 1 else 's'} took follow-ups: " + ", ".join(
        f"{counts[kind]} {label}" for kind, label in FOLLOW_UP_LABELS.items()
    )


def declared_follow_ups(path: Path) -> dict[str, dict]:
    """The follow-up each question of a question-set file (or a log in the
    combined form) declares, by question id, and the set's own (its
    header's) under None; read after the file was found valid, so only the
    lines that name one are parsed."""
    declared = {}
    with open(path, "rb") as stream:
        for _, raw, _, _ in iter_raw_lines(stream):
            if b'"follow_up"' in raw:
                record = json.loads(raw)
                if type(record.get("follow_up")) is dict:
                    declared[record.get("question_id")] = record["follow_up"]
    return declared
