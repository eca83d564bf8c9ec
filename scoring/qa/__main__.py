"""python -m scoring.qa open|mc DATASET --answers RUN.jsonl [options]
python -m scoring.qa prompts open|mc DATASET [--out SET.jsonl] [options]

Scores a run's answers to a general QA dataset (spec 001): accuracy per task
with k/n and a 95 % Wilson interval, per stratum, beside the random-guess
baseline for multiple choice; open-ended answers are graded by a judge model
(--judge provider:model, or python:module:function for a local callable
fn(prompt, system) -> str). Before the first judge call it prints what the
calls will cost and asks to go on (--yes answers for you).

"prompts" writes the question set that asks the dataset (the multiple choice
prompt for mc), for python -m scoring.collect.

Exit status: 0 done; 1 the judge failed or the run was stopped at the
question; 2 bad input (a missing file, a bad line or column, a judge that
cannot be made, no --yes where nobody can be asked), with nothing sent.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

from scoring.llm import LLM, CacheError, CallableLLM, LLMError, SqliteCache, llm_from_spec
from scoring.logfile import LogFileError
from scoring.qa import (
    COLUMN_KEYS,
    FORMATS,
    PROMPT_VERSION,
    TASK_NAMES,
    TASKS,
    Accuracy,
    DatasetError,
    JudgeCost,
    QAReport,
    estimate_judge_cost,
    parse_columns,
    read_dataset,
    read_run_answers,
    score_multiple_choice,
    score_open_ended,
    write_prompts,
)

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


class BadInput(Exception):
    """Input the command cannot use: one sentence, or the lines of a LogFileError."""

    def __init__(self, message: str = "", *, path: Path | None = None, errors: LogFileError | None = None):
        super().__init__(message)
        self.path = path
        self.errors = errors


def make_judge(spec: str, *, cache_path: Path | None = None) -> LLM:
    """The judge a command line names: provider:model[@URL] (see
    scoring.llm.llm_from_spec) or python:module:function, a callable
    fn(prompt, system) -> str. Raises BadInput for a spec that names nothing
    usable, LLMError when the provider cannot be used and CacheError when the
    cache file cannot be opened."""
    cache = SqliteCache(cache_path) if cache_path else None
    kind, _, rest = spec.partition(":")
    if kind == "python":
        module_name, colon, function_name = rest.rpartition(":")
        if not colon or not module_name or not function_name:
            raise BadInput(f'a python judge is given as python:module:function, not "{spec}"')
        try:
            function = getattr(importlib.import_module(module_name), function_name)
        except ImportError as error:
            raise BadInput(f"the judge's module {module_name} cannot be imported ({error})") from None
        except AttributeError:
            raise BadInput(f"the module {module_name} has no {function_name}") from None
        if not callable(function):
            raise BadInput(f"{module_name}:{function_name} is not a function")
        return CallableLLM(function, model=f"{module_name}:{function_name}", cache=cache)
    try:
        return llm_from_spec(spec, cache=cache)
    except ValueError as error:
        raise BadInput(str(error)) from None
    except ImportError as error:
        # make_llm imports the provider's code only now; without it the
        # provider cannot be used at all.
        raise LLMError(f"its provider's code cannot be imported ({error})") from None


def format_report(report: QAReport) -> str:
    """The report as a table: one row for the task and one per stratum, then
    the trials not answered, not ok and in error, and the judge."""
    label = TASK_NAMES[report.task]
    rows = [(label, report.accuracy)]
    rows += [(f"  {report.stratum_column}={name}", accuracy) for name, accuracy in report.strata.items()]
    header = ["task", "k/n", "accuracy", "95 % Wilson interval"]
    if report.task == "mc":
        header.append("random guess")
    header.append("errors")
    cells = [header] + [_cells(name, accuracy, mc=report.task == "mc") for name, accuracy in rows]
    widths = [max(len(row[column]) for row in cells) for column in range(len(header))]
    lines = [f"{label} QA: {report.questions} questions, {len(report.graded)} trials", ""]
    for row in cells:
        lines.append(
            "  ".join(
                cell.ljust(width) if column == 0 else cell.rjust(width)
                for column, (cell, width) in enumerate(zip(row, widths, strict=True))
            ).rstrip()
        )
    lines.append("")
    if report.task == "open":
        lines.append("errors: trials whose verdict could not be read, counted neither correct nor incorrect")
    if report.not_answered:
        shown = ", ".join(graded.question_id for graded in report.not_answered)
        lines.append(f"not answered, counted incorrect ({len(report.not_answered)}): {shown}")
    if report.failed:
        lines.append(f"ended without an answer, counted incorrect ({len(report.failed)}):")
        lines += [
            f"  {graded.question_id} attempt {graded.attempt}: {graded.status}"
            + (f" ({graded.error})" if graded.error else "")
            for graded in report.failed
        ]
    if report.errors:
        lines.append(f"verdict errors, not counted ({len(report.errors)}):")
        lines += [
            f"  {graded.question_id} attempt {graded.attempt}: {graded.error}; raw verdict: "
            + json.dumps(graded.raw_verdict or "", ensure_ascii=False)[:200]
            for graded in report.errors
        ]
    if report.judge:
        judge, usage = report.judge, report.judge["usage"]
        lines.append(
            f"judge: {judge['provider']} {judge['model']}, prompts {judge['prompt_version']} "
            f"(hash {judge['prompt_hash'][:12]}); {usage['responses']} responses, "
            f"{usage['cached_responses']} from the cache, {usage['prompt_tokens']} prompt and "
            f"{usage['completion_tokens']} completion tokens reported"
        )
    return "\n".join(lines)


def _cells(name: str, accuracy: Accuracy, *, mc: bool) -> list[str]:
    if accuracy.value is None:
        cells = [name, f"{accuracy.k}/{accuracy.n}", "-", "-"]
    else:
        effective = f", eff. {accuracy.effective_n:.0f}" if accuracy.effective_n is not None else ""
        cells = [
            name,
            f"{accuracy.k}/{accuracy.n}{effective}",
            f"{accuracy.value:.2f}",
            f"[{accuracy.low:.2f}-{accuracy.high:.2f}]",
        ]
    if mc:
        cells.append(f"{accuracy.baseline:.2f}" if accuracy.baseline is not None else "-")
    cells.append(str(accuracy.errors))
    return cells


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m scoring.qa",
        description=__doc__.split("\n\n")[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)

    def dataset_options(command: argparse.ArgumentParser) -> None:
        command.add_argument("dataset", type=Path, help="the questions: JSON Lines, a JSON array or CSV")
        command.add_argument(
            "--columns",
            default="",
            help=f"the dataset's column names as key=column,... (keys: {', '.join(COLUMN_KEYS)}); "
            'several option columns joined by "+" or "," (options=A,B,C,D); a column may be a path '
            "(question=question.stem, options=question.choices); id= (empty) numbers questions by line; "
            "a CSV without a header is mapped by position, col1 the first",
        )
        command.add_argument(
            "--format", choices=FORMATS, help="the dataset's format (default: from its suffix)"
        )
        command.add_argument(
            "--correct-from",
            type=int,
            choices=(0, 1),
            default=0,
            help="the correct option's position counts from 0 (default) or from 1 (a letter or the "
            "option's text is read as it is)",
        )

    for task in TASKS:
        command = commands.add_parser(task, help=f"score {TASK_NAMES[task]} answers")
        dataset_options(command)
        command.add_argument("--answers", type=Path, required=True, help="the run log, JSON Lines")
        command.add_argument("--json", action="store_true", help="print one JSON object")
        if task == "open":
            command.add_argument(
                "--judge", required=True, help="provider:model[@URL], or python:module:function"
            )
            command.add_argument("--cache", type=Path, help="a SQLite file reusing the judge's responses")
            command.add_argument("--yes", action="store_true", help="make the judge calls without asking")
    prompts = commands.add_parser("prompts", help="write the question set that asks the dataset")
    prompts.add_argument("task", choices=TASKS)
    dataset_options(prompts)
    prompts.add_argument("--out", type=Path, help="the question set to write (default: standard output)")
    prompts.add_argument("--language", default="en", help="the questions' language (default: en)")
    prompts.add_argument("--set-version", help="a set_version for the header line")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except BadInput as error:
        if error.errors is not None:
            for line_error in error.errors.errors:
                print(f"{error.path}: {line_error}", file=sys.stderr)
            if error.errors.total > len(error.errors.errors):
                more = error.errors.total - len(error.errors.errors)
                print(f"{error.path}: … and {more} more", file=sys.stderr)
        else:
            print(str(error), file=sys.stderr)
        return EXIT_BAD_INPUT
    except (LLMError, CacheError) as error:
        print(f"the judge failed: {error}", file=sys.stderr)
        return EXIT_FAILED


def _run(args: argparse.Namespace) -> int:
    task = args.task if args.command == "prompts" else args.command
    try:
        columns = parse_columns(args.columns)
    except ValueError as error:
        raise BadInput(f"--columns: {error}") from None
    questions = _read(
        lambda: read_dataset(
            args.dataset, task=task, columns=columns, correct_from=args.correct_from, file_format=args.format
        ),
        args.dataset,
    )
    if args.command == "prompts":
        try:
            count = write_prompts(
                questions,
                task=task,
                destination=args.out or sys.stdout,
                language=args.language,
                set_version=args.set_version,
            )
        except LogFileError as error:
            raise BadInput(path=args.dataset, errors=error) from None
        except ValueError as error:
            raise BadInput(str(error)) from None
        except OSError as error:
            raise BadInput(f"{args.out}: cannot be written ({error.strerror or error})") from None
        if args.out:
            print(f"{args.out}: {count} {TASK_NAMES[task]} questions", file=sys.stderr)
        return EXIT_OK

    answers = _read(
        lambda: read_run_answers(args.answers, question_ids=[q.id for q in questions]), args.answers
    )
    if task == "mc":
        report = score_multiple_choice(questions, answers=answers, stratum_column=columns.stratum)
    else:
        try:
            judge = make_judge(args.judge, cache_path=args.cache)
        except (LLMError, CacheError) as error:
            # No call has been made: a missing SDK, key or cache file is the
            # command's input to fix, not a judge that failed.
            raise BadInput(f"the judge {args.judge} cannot be used: {error}") from None
        cost = estimate_judge_cost(questions, answers=answers, judge=judge)
        print(_cost_sentence(cost, judge=args.judge), file=sys.stderr)
        # Calls the cache answers cost nothing: there is nothing to agree to.
        if cost.calls > cost.cached_calls and not args.yes and not _confirmed():
            return EXIT_FAILED
        report = score_open_ended(questions, judge=judge, answers=answers, stratum_column=columns.stratum)
    if args.json:
        shown = {"dataset": str(args.dataset), "answers": str(args.answers), **report.as_dict()}
        print(json.dumps(shown, ensure_ascii=False, indent=2))
    else:
        print(format_report(report))
    return EXIT_OK


def _read(read, path: Path):
    try:
        return read()
    except LogFileError as error:
        raise BadInput(path=path, errors=error) from None
    except (DatasetError, ValueError) as error:
        raise BadInput(str(error)) from None


def _cost_sentence(cost: JudgeCost, *, judge: str) -> str:
    to_make = cost.calls - cost.cached_calls
    cached = f", {cost.cached_calls} of them already in the cache" if cost.cached_calls else ""
    return (
        f"cost estimate: {cost.calls} calls to the judge {judge}{cached}; about "
        f"{cost.estimated_prompt_tokens:,} prompt tokens for the {to_make} to make (an estimate at about "
        f"4 characters a token, with the completions on top; prompts {PROMPT_VERSION})"
    )


def _confirmed() -> bool:
    if not sys.stdin.isatty():
        raise BadInput(
            "stopped before any judge call: nobody is at a terminal to agree to the cost, "
            "so pass --yes to make the calls"
        )
    print("Continue? [y/N] ", end="", file=sys.stderr, flush=True)
    reply = sys.stdin.readline().strip().lower()
    if reply in ("y", "yes"):
        return True
    print("stopped before any judge call", file=sys.stderr)
    return False


if __name__ == "__main__":
    sys.exit(main())
