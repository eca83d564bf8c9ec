"""A dataset as a question set for python -m scoring.collect, and the
prompts written for it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from scoring.logfile import (
    LogFileError,
    label_problem,
    language_problem,
    question_errors,
)
from scoring.qa.datasets import Question, _check_task
from scoring.qa.score import _mc_text

# --- Question sets for collection --------------------------------------------------------------------


def question_set_lines(questions: Sequence[Question], *, task: str, language: str = "en") -> list[dict]:
    """The question-set lines (scoring.logfile's form) that ask ``questions``:
    question_id, language, expected_behaviour "answer", expected_values [],
    question (the text the system is sent: the mc_prompt for multiple
    choice) and the stratum when there is one.

    Refuses (ValueError) an unknown task or language, and raises LogFileError
    listing the questions a question set cannot hold (a stratum over 100
    characters, for one), each on its dataset line."""
    _check_task(task)
    if problem := language_problem(language):
        raise ValueError(f"the language {problem}")
    lines, errors = [], []
    for question in questions:
        line = {
            "question_id": question.id,
            "language": language,
            "expected_behaviour": "answer",
            "expected_values": [],
            "question": _mc_text(question) if task == "mc" else question.text,
        }
        if question.stratum is not None:
            line["stratum"] = question.stratum
        errors += question_errors(question.line, line)
        lines.append(line)
    if errors:
        raise LogFileError(errors)
    return lines


def write_prompts(
    questions: Sequence[Question],
    *,
    task: str,
    destination: str | Path | TextIO,
    language: str = "en",
    set_version: str | None = None,
) -> int:
    """Write the question set that asks ``questions`` (see question_set_lines)
    to ``destination`` (a path or a text stream), after a {"set_version": …}
    header when ``set_version`` is given; returns the number of questions.

    Refuses (ValueError) an unknown task or language and a set_version that
    is not a version label; raises LogFileError as question_set_lines does.
    Nothing is written when anything is refused."""
    if set_version is not None and (problem := label_problem(set_version)):
        raise ValueError(f"the set version {problem}")
    lines = question_set_lines(questions, task=task, language=language)
    if set_version is not None:
        lines.insert(0, {"set_version": set_version})
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    if isinstance(destination, str | Path):
        Path(destination).write_text(text, encoding="utf-8")
    else:
        destination.write(text)
    return len(questions)
