"""A scoring's answers, with this app's checks, in formats other tools read.

- ``inspect_log``: an Inspect AI eval log (JSON, log format version 2) whose
  samples are the answers and whose scores are this app's measures, so that
  ``inspect view`` shows them; each finding is in its measure's explanation.
- ``ragas_lines``: JSON Lines with Ragas' SingleTurnSample fields
  (user_input, retrieved_contexts, response, reference) and this app's checks
  under "reviewapp".

Both stream: answers are read in batches and written as they come, so a run
of a million answers is never held whole. Answers to sealed questions are
left out until a lead opens the sealed part, as on every other page.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

import orjson
from django.utils import timezone

from reviewapp.models import Answer, AnswerCheck, Finding, Question, Scoring
from reviewapp.scorings.selectors import records_as_passages, scores_as_dict
from scoring.measures import FAILURE_MEASURES, MEASURE_LABELS, MEASURES

BATCH = 2000

# The measure each kind of finding belongs to; a failed attempt counts in
# every measure a question counts in.
FINDING_MEASURES = {
    "numeric": ("numeric_accuracy",),
    "declined": ("answer_rate",),
    "refusal": ("refusal_accuracy",),
    "citation": ("citation_validity",),
    "unsupported": ("unsupported_numbers", "unsupported_answers"),
    "not_run": ("numeric_accuracy", "answer_rate", "refusal_accuracy"),
    "failed": ("numeric_accuracy", "answer_rate", "refusal_accuracy"),
}

_CHECK_FIELDS = tuple(f"{measure}_{part}" for measure in MEASURES for part in ("k", "n"))


def _answers(scoring: Scoring) -> Iterator[dict]:
    """Each checked answer of the scoring, in log order, with its question
    and findings: {question_id, line, record, question, counts, findings}."""
    questions = {
        q["question_id"]: q
        for q in Question.objects.filter(set_version_id=scoring.set_version_id).values(
            "question_id", "question", "reference", "expected_behaviour", "expected_values"
        )
    }
    checks = AnswerCheck.objects.filter(scoring=scoring)
    if not scoring.sealed_open:
        checks = checks.filter(sealed=False)
    rows = checks.order_by("answer__line_number", "id").values_list(
        "id",
        "answer_id",
        "question_id",
        "answer__line_number",
        "answer__attempt",
        "answer__raw",
        *_CHECK_FIELDS,
    )
    batch: list[tuple] = []
    # Each question's attempts the run holds no answer for, handed out in
    # order to its "not run" checks, which may span batches.
    missing: dict[str, Iterator[int]] = {}
    for row in rows.iterator(chunk_size=BATCH):
        batch.append(row)
        if len(batch) == BATCH:
            yield from _with_findings(scoring, batch, questions, missing)
            batch = []
    if batch:
        yield from _with_findings(scoring, batch, questions, missing)


def _missing_attempts(scoring: Scoring, question_ids: set[str], missing: dict) -> None:
    given: dict[str, set[int]] = defaultdict(set)
    for question_id, attempt in Answer.objects.filter(
        run_id=scoring.run_id, question_id__in=question_ids
    ).values_list("question_id", "attempt"):
        given[question_id].add(attempt)
    repetitions = scoring.run.repetitions or 1
    for question_id in question_ids:
        missing[question_id] = iter([a for a in range(1, repetitions + 1) if a not in given[question_id]])


def _with_findings(scoring: Scoring, batch: list[tuple], questions: dict, missing: dict) -> Iterator[dict]:
    answer_ids = [row[1] for row in batch if row[1] is not None]
    findings: dict[int | None, list[tuple[str, str]]] = defaultdict(list)
    for answer_id, kind, detail in (
        Finding.objects.filter(scoring=scoring, answer_id__in=answer_ids)
        .order_by("id")
        .values_list("answer_id", "kind", "detail")
    ):
        findings[answer_id].append((kind, detail))
    not_run = {
        question_id: detail
        for question_id, detail in Finding.objects.filter(
            scoring=scoring, answer__isnull=True, question_id__in=[row[2] for row in batch if row[1] is None]
        ).values_list("question_id", "detail")
    }
    unseen = {row[2] for row in batch if row[1] is None and row[2] not in missing}
    if unseen:
        _missing_attempts(scoring, unseen, missing)
    for check_id, answer_id, question_id, line, attempt, raw, *counts in batch:
        record = orjson.loads(raw) if raw else {}
        if answer_id is None:
            attempt = next(missing[question_id], None)
        if answer_id is None:
            found = [("not_run", not_run.get(question_id, "not run"))]
        else:
            found = findings.get(answer_id, [])
        yield {
            "check": check_id,
            "question_id": question_id,
            "line": line,
            "attempt": attempt or 1,
            "record": record,
            "question": questions.get(question_id) or {},
            "counts": {
                measure: (counts[2 * index], counts[2 * index + 1]) for index, measure in enumerate(MEASURES)
            },
            "findings": found,
        }


def _reference(question: dict) -> str:
    if question.get("reference"):
        return question["reference"]
    if question.get("expected_behaviour") == "decline":
        return "(a refusal)"
    return ", ".join(_value(v) for v in question.get("expected_values") or [])


def _value(value) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _checks(answer: dict) -> dict:
    return {measure: {"k": k, "n": n} for measure, (k, n) in answer["counts"].items() if n}


# ---- Ragas-style JSON Lines ----


def ragas_lines(scoring: Scoring) -> Iterator[bytes]:
    """One JSON line per answer: Ragas' fields, then this app's checks."""
    for answer in _answers(scoring):
        record = answer["record"]
        yield (
            orjson.dumps(
                {
                    "user_input": answer["question"].get("question") or "",
                    "retrieved_contexts": records_as_passages(record),
                    "response": record.get("answer") or "",
                    "reference": _reference(answer["question"]),
                    "reviewapp": {
                        "question_id": answer["question_id"],
                        "attempt": answer["attempt"],
                        "language": record.get("language"),
                        "status": record.get("status") or ("ok" if record else "not_run"),
                        "declined": record.get("declined"),
                        "checks": _checks(answer),
                        "findings": [{"kind": kind, "detail": detail} for kind, detail in answer["findings"]],
                    },
                }
            )
            + b"\n"
        )


# ---- Inspect AI eval log ----


def _sample_scores(answer: dict) -> dict:
    """This app's measures as Inspect scores: "C"/"I" where the measure is
    one pass or fail per answer, the failing share for unsupported numbers
    and the passing share for citations, each with k/n as the answer and the
    findings as the explanation."""
    by_measure: dict[str, list[str]] = defaultdict(list)
    for kind, detail in answer["findings"]:
        for measure in FINDING_MEASURES.get(kind, ()):
            by_measure[measure].append(detail)
    scores = {}
    for measure, (k, n) in answer["counts"].items():
        if not n:
            continue
        one_verdict = n == 1 and measure not in FAILURE_MEASURES
        value = ("C" if k else "I") if one_verdict else k / n
        scores[measure] = {
            "value": value,
            "answer": f"{k}/{n}",
            "explanation": "; ".join(by_measure.get(measure, [])) or f"{MEASURE_LABELS[measure]}: no failure",
            "metadata": {"k": k, "n": n},
            "history": [],
        }
    return scores


def _sample(answer: dict, model: str) -> dict:
    record = answer["record"]
    question = answer["question"]
    text = record.get("answer") or ""
    status = record.get("status") or ("ok" if record else "not_run")
    sample = {
        "id": answer["question_id"],
        "epoch": answer["attempt"],
        "input": question.get("question") or answer["question_id"],
        "target": _reference(question),
        "messages": [
            {"role": "user", "content": question.get("question") or "", "source": "input"},
            {"role": "assistant", "content": text, "source": "generate", "model": model},
        ],
        "output": {
            "model": model,
            "choices": [
                {
                    "message": {"role": "assistant", "content": text, "source": "generate", "model": model},
                    "stop_reason": "stop",
                }
            ],
            "completion": text,
        },
        "scores": _sample_scores(answer),
        "metadata": {
            "language": record.get("language"),
            "retrieved_ids": record.get("retrieved_ids") or [],
            "retrieved_values": record.get("retrieved_values") or [],
            "retrieved_contexts": records_as_passages(record),
            "cited_ids": record.get("cited_ids") or [],
            "declined": record.get("declined"),
            "expected_behaviour": question.get("expected_behaviour"),
            "expected_values": question.get("expected_values") or [],
            "line": answer["line"],
            "status": status,
        },
        "store": {},
        "events": [],
        "model_usage": {},
        "attachments": {},
    }
    if status != "ok":
        reason = record.get("status_reason") or ("the run holds no answer" if status == "not_run" else status)
        sample["error"] = {"message": f"{status}: {reason}", "traceback": "", "traceback_ansi": ""}
    return sample


def _results(scoring: Scoring) -> dict:
    overall = scores_as_dict(scoring).get("all", {})
    checks = scoring.checks.all() if scoring.sealed_open else scoring.checks.filter(sealed=False)
    return {
        "total_samples": checks.count(),
        "completed_samples": checks.filter(answer__isnull=False).count(),
        "scores": [
            {
                "name": measure,
                "scorer": "reviewapp",
                "reducer": "sum of k over sum of n",
                "params": {},
                "metrics": {
                    name: {"name": name, "value": figure[name], "params": {}}
                    for name in ("rate", "k", "n", "low", "high", "effective_n")
                    if figure.get(name) is not None
                },
            }
            for measure in MEASURES
            if (figure := overall.get(measure)) and figure["n"]
        ],
    }


def inspect_log(scoring: Scoring) -> Iterator[bytes]:
    """The scoring as one Inspect eval log document, written piece by piece."""
    run = scoring.run
    model = run.assistant_version.label
    created = (scoring.finished_at or timezone.now()).isoformat()
    head = {
        "version": 2,
        "status": "success",
        "eval": {
            "eval_id": f"reviewapp-scoring-{scoring.id}",
            "run_id": f"reviewapp-run-{run.id}",
            "created": created,
            "task": scoring.set_version.question_set.name,
            "task_id": f"set-{scoring.set_version.version}",
            "task_version": 0,
            "task_attribs": {},
            "task_args": {},
            "dataset": {
                "name": scoring.set_version.question_set.name,
                "location": f"set version {scoring.set_version.version}",
            },
            "model": model,
            "model_generate_config": {},
            "model_args": {},
            "config": {"epochs": run.repetitions},
            "packages": {},
            "metadata": {
                "reviewapp": {
                    "run": run.id,
                    "scoring": scoring.id,
                    "assistant_version": model,
                    "set_version": scoring.set_version.version,
                    "options": scoring.options,
                }
            },
        },
        "plan": {"name": "plan", "steps": [], "config": {}},
        "results": _results(scoring),
        "stats": {"started_at": created, "completed_at": created, "model_usage": {}},
    }
    yield orjson.dumps(head)[:-1] + b',"samples":['
    first = True
    for answer in _answers(scoring):
        yield (b"" if first else b",") + orjson.dumps(_sample(answer, model))
        first = False
    yield b"]}"
