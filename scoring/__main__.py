"""python -m scoring RUN.jsonl [--questions SET.jsonl] [--json]

Scores a run log on the automatic measures and prints a table per slice and
the findings, or one JSON object with --json. Without --questions the log
must be in the combined form, carrying expected behaviour and values.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from scoring.logfile import (
    LogFileError,
    is_combined_form,
    questions_from_combined,
    read_answers,
    read_questions,
)
from scoring.measures import MEASURE_LABELS, MEASURES, RunScores, score_run


def format_table(scores: RunScores) -> str:
    """The scores as a text table, one row per slice, then the findings."""
    width = max([len("slice"), *(len(name) for name in scores.slices)]) + 2
    columns = [max(len(MEASURE_LABELS[m]), 12) + 2 for m in MEASURES]
    lines = [f"{scores.answers} answers", ""]
    header = "slice".ljust(width) + "".join(
        MEASURE_LABELS[m].rjust(w) for m, w in zip(MEASURES, columns, strict=True)
    )
    lines.append(header)
    for slice_name, measures in scores.slices.items():
        cells = []
        for measure, column in zip(MEASURES, columns, strict=True):
            counts = measures.get(measure)
            cell = f"{counts['k'] / counts['n']:.2f} (n={counts['n']})" if counts else "-"
            cells.append(cell.rjust(column))
        lines.append(slice_name.ljust(width) + "".join(cells))
    lines += ["", f"findings: {len(scores.findings)}"]
    lines += [f"  {f.question_id}: {f.kind}: {f.detail}" for f in scores.findings]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scoring", description=__doc__.split("\n\n")[1])
    parser.add_argument("run", type=Path, help="run log, JSON Lines")
    parser.add_argument("--questions", type=Path, help="question set, JSON Lines")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)

    for path in filter(None, (args.run, args.questions)):
        if not path.is_file():
            print(f"{path}: no such file", file=sys.stderr)
            return 2
    if not args.questions and not is_combined_form(args.run):
        print(
            f"{args.run}: the answers carry no expected values; "
            "give the question set with --questions SET.jsonl",
            file=sys.stderr,
        )
        return 2
    try:
        source = args.questions or args.run
        questions = (
            read_questions(args.questions) if args.questions else questions_from_combined(args.run)
        )
    except LogFileError as error:
        return _report(source, error)
    by_id = {q["question_id"]: q for q in questions}
    try:
        answers = [logged.record for logged in read_answers(args.run, question_ids=set(by_id))]
    except LogFileError as error:
        return _report(args.run, error)

    scores = score_run(answers, by_id)
    if args.json:
        print(json.dumps(scores.as_dict(), ensure_ascii=False, indent=2))
    else:
        print(format_table(scores))
    return 0


def _report(path: Path, error: LogFileError) -> int:
    for line_error in error.errors:
        print(f"{path}: {line_error}", file=sys.stderr)
    if error.total > len(error.errors):
        print(f"{path}: … and {error.total - len(error.errors)} more", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
