"""Judge a run's answers with language models, from the command line.

    python -m scoring.judge RUN.jsonl --questions SET.jsonl --judge openai:MODEL \\
        [--judge anthropic:MODEL] [--metrics faithfulness,answer_relevance] [--cache FILE] [--json] [--yes]

Each answer of the run (every attempt that ended with one) is an item; its
question text and reference come from the set (or from the run itself in
the combined form), its evidence from the run line: ``retrieved_contexts``
(a list of texts) when the line has them, else the retrieved ids and values
as one context. Before any call the command prints what judging will cost
(calls and estimated prompt tokens) and asks to go on; ``--yes`` skips the
question. Keys come from the providers' environment variables only.

Exit status: 0 when every call gave a verdict, 1 when some failed (they are
counted and listed), 2 for bad input or a model that cannot be reached.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from scoring.judge.evaluate import (
    ANSWER_METRICS,
    DEFAULT_METRICS,
    AnswerEvaluation,
    estimate_cost,
    evaluate_answers,
    evidence_texts,
)
from scoring.llm import DEFAULT_RETRIES, CacheError, LLMError, SqliteCache, llm_from_spec
from scoring.logfile import (
    LogFileError,
    is_combined_form,
    questions_from_combined,
    read_answers,
    read_questions,
)

DEFAULT_MAX_TOKENS = 1024


def run_items(run: Path, questions: list[dict]) -> tuple[list[dict], list[str]]:
    """The run's answers as items to judge, and the problems that stop judging (empty when none).

    An attempt that ended without an answer (status other than ok) is left
    out; a question without text is a problem, since a judge needs the question.
    """
    by_id = {question["question_id"]: question for question in questions}
    items, problems = [], []
    repeated = False
    lines = list(read_answers(run, question_ids=set(by_id)))
    repeated = any(logged.record.get("attempt", 1) > 1 for logged in lines)
    for logged in lines:
        record = logged.record
        if record.get("status", "ok") != "ok":
            continue
        question = by_id[record["question_id"]]
        if not question.get("question"):
            problems.append(f"line {logged.line}: question {record['question_id']} has no text in the set")
            continue
        item_id = record["question_id"] + (f"#{record['attempt']}" if repeated else "")
        items.append(
            {
                "id": item_id,
                "question": question["question"],
                "reference": question.get("reference") or None,
                "contexts": evidence_texts(record),
                "answer": record.get("answer") or "",
            }
        )
    return items, problems


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m scoring.judge", description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="the run log (JSON Lines)")
    parser.add_argument("--questions", type=Path, help="the question set; left out for a combined-form run")
    parser.add_argument(
        "--judge",
        action="append",
        required=True,
        metavar="PROVIDER:MODEL[@URL]",
        help="a judge (openai, anthropic or gemini); repeat for a panel; @URL: an OpenAI-compatible server",
    )
    parser.add_argument("--metrics", default=",".join(DEFAULT_METRICS), help="comma-separated judge metrics")
    parser.add_argument("--criteria", help="the rubric for criteria_score")
    parser.add_argument("--cache", type=Path, help="a SQLite file reusing responses to identical requests")
    parser.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS)
    parser.add_argument("--retries", type=int, default=DEFAULT_RETRIES)
    parser.add_argument("--jobs", type=int, default=1, help="calls in flight at once")
    parser.add_argument(
        "--out",
        type=Path,
        help="write the whole report: .json, .jsonl (one row per item), .yaml/.yml or .toml",
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--yes", action="store_true", help="start without asking after the cost estimate")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _judge(args)
    except (LogFileError, ValueError, LLMError, CacheError, OSError) as error:
        print(f"error: {_sentence(error)}", file=sys.stderr)
        return 2


def _sentence(error: Exception) -> str:
    if isinstance(error, LogFileError):
        return "; ".join(str(line_error) for line_error in error.errors[:10])
    if isinstance(error, OSError) and error.filename:
        return f"{error.strerror}: {error.filename}"
    return str(error)


def _judge(args) -> int:
    metrics = [name.strip() for name in args.metrics.split(",") if name.strip()]
    unknown = [name for name in metrics if name not in ANSWER_METRICS]
    if unknown:
        raise ValueError(
            f"unknown metric {', '.join(unknown)}; the judge metrics are {', '.join(ANSWER_METRICS)}"
        )
    if args.questions:
        questions = read_questions(args.questions)
    elif is_combined_form(args.run):
        questions = questions_from_combined(args.run)
    else:
        raise ValueError("give the question set with --questions (the run is not in the combined form)")
    items, problems = run_items(args.run, questions)
    if problems:
        raise ValueError(
            "; ".join(problems[:10]) + (f" (and {len(problems) - 10} more)" if len(problems) > 10 else "")
        )

    cost = estimate_cost(items, metrics=metrics, judges=len(args.judge))
    print(
        f"Judging {cost['items']} answers with {len(args.judge)} judge(s) on {', '.join(metrics)}: "
        f"{cost['calls']} calls, about {cost['prompt_tokens']:,} prompt tokens (an estimate; "
        "cached responses cost nothing).",
        file=sys.stderr,
    )
    if not args.yes and not _confirmed():
        return 2

    cache = SqliteCache(args.cache) if args.cache else None
    judges = {
        spec.split("@")[0].replace("/", "_"): llm_from_spec(
            spec, cache=cache, max_tokens=args.max_tokens, retries=args.retries
        )
        for spec in args.judge
    }
    report = evaluate_answers(
        None,
        items,
        judges=judges,
        metrics=metrics,
        text_metrics=(),
        criteria=args.criteria,
        n_jobs=args.jobs,
        keep_verdicts=bool(args.out),
    )
    if args.out:
        report.write(args.out)
    if args.json:
        print(json.dumps(report.summary(), indent=2))
    else:
        print(_table(report))
    return 1 if report.errors else 0


def _confirmed() -> bool:
    if not sys.stdin.isatty():
        print("error: not started: pass --yes to judge without being asked", file=sys.stderr)
        return False
    answer = input("Go on? [y/N] ")
    return answer.strip().lower() in ("y", "yes")


def _table(report: AnswerEvaluation) -> str:
    coverage, errors = report.coverage, report.errors
    items = len(report.rows)
    lines = [f"{'metric':<40} {'mean':>7} {'scored':>11} {'errors':>7}"]
    for column, value in report.metrics.items():
        mean = "-" if math.isnan(value) else f"{value:.3f}"
        lines.append(f"{column:<40} {mean:>7} {coverage[column]:>5}/{items:<5} {errors.get(column, 0):>7}")
    for metric, figure in report.agreement.items():
        alpha = "not defined" if figure["alpha"] is None else f"{figure['alpha']:.3f}"
        lines.append(
            f"agreement between judges on {metric}: Krippendorff's alpha {alpha} ({figure['items']} items)"
        )
    lines.extend(f"warning: {warning}" for warning in report.warnings)
    for name, usage in report.usage.items():
        lines.append(
            f"{name}: {usage['responses']} responses ({usage['cached_responses']} cached), "
            f"{usage['prompt_tokens']:,} prompt and {usage['completion_tokens']:,} completion tokens"
        )
    for row in report.rows:
        for column, message in row.get("errors", {}).items():
            lines.append(f"failed: {row['id']} {column}: {message}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
