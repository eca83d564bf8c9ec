"""Turn another tool's file into this app's run log, or a QA dataset into a question set.

    python -m scoring.imports FILE [--format inspect|ragas|lm-eval|csv] [--columns field=column,...]
        [--assistant-version A] [--set-version S] [--language en] [--out RUN.jsonl] [--preview]
    python -m scoring.imports qa open|mc FILE [--columns question=q,reference=ref,...]
        [--language en] [--correct-from 0|1] [--format jsonl|csv] [--out SET.jsonl]

The first form writes a run log in spec 000's combined form, which
``python -m scoring RUN.jsonl`` scores as it is. The format is told from the
file when --format is not given. --columns maps run-log fields to the file's
columns (CSV) or keys (JSON Lines, Inspect metadata), for example
``--columns "question=Question,answer=Bot answer,reference=Gold answer"``;
it may be repeated, and a column name may hold a comma when what follows it
is not another field=. --preview prints the mapping in use and the first
rows converted, and writes nothing.

The second form writes spec 001's open-ended or multiple choice dataset as a
question set; --columns then takes scoring.qa's keys (question, reference,
options, correct, id, stratum; several option columns joined by "+").

Output goes to --out (written whole or not at all: a failed conversion leaves
no file and an existing one as it was), or to standard output. Each problem
is printed on its own line as "FILE: line N, field F: message"; the exit
status is then 2. --preview checks the whole file as the conversion does
(the versions aside, which it leaves to be confirmed) and exits 2 when the
conversion would refuse it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import orjson

from scoring import imports
from scoring.imports import sniff, tabular
from scoring.logfile import LogFileError, language_problem

_USAGE_ERROR = 2


class _Refused(Exception):
    """A problem that stops the command: its lines, each printed as it is."""

    def __init__(self, *lines: str):
        self.lines = lines


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        if argv[:1] == ["qa"]:
            return _qa(argv[1:])
        return _convert(argv)
    except _Refused as refused:
        for line in refused.lines:
            print(line, file=sys.stderr)
        return _USAGE_ERROR


def _convert(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scoring.imports",
        description="Turn an Inspect log, Ragas-style JSON Lines, lm-eval samples or a CSV file into this "
        "app's run log "
        "(python -m scoring.imports qa --help: a QA dataset into a question set).",
    )
    parser.add_argument("file", type=Path, help="the file to import")
    parser.add_argument(
        "--format", choices=imports.FORMATS, help="the file's format (default: told from the file)"
    )
    parser.add_argument(
        "--columns",
        action="append",
        default=[],
        metavar="FIELD=COLUMN,...",
        help=f"what each run-log field is read from; the fields: {', '.join(imports.TARGET_FIELDS)}",
    )
    parser.add_argument(
        "--assistant-version", default="", help="the assistant's version the answers are from"
    )
    parser.add_argument("--set-version", default="", help="the question set version they answer")
    parser.add_argument("--language", default="en", help="the language of rows that give none (default: en)")
    parser.add_argument("--out", type=Path, help="the run log to write (default: standard output)")
    parser.add_argument(
        "--preview", action="store_true", help="print the mapping and the first rows, write nothing"
    )
    parser.add_argument("--rows", type=int, default=5, help="rows shown by --preview (default: 5)")
    args = parser.parse_args(argv)

    path = args.file
    _check_input(path)
    _check_language(args.language)
    try:
        columns = imports.parse_mapping(args.columns)
    except ValueError as error:
        raise _Refused(f"--columns: {error}") from None
    file_format = args.format or _detected(path)
    if args.format and (problem := sniff.format_problem(path, path.name, args.format)):
        raise _Refused(f"{path}: {problem}")
    options = imports.ImportOptions(
        assistant_version=args.assistant_version,
        set_version=args.set_version,
        language=args.language,
        columns=columns,
    )
    if args.preview:
        return _preview(path, file_format, options, rows=args.rows)
    count = _write(
        args.out,
        lambda out: imports.convert(path, out, file_format, options),
        source=path,
    )
    note, not_run = _plan(path, file_format)
    if args.out:
        print(f"{path}: {_answers(count, not_run)} written to {args.out} ({file_format})", file=sys.stderr)
    if note:
        print(f"{path}: {note}", file=sys.stderr)
    return 0


def _plan(path: Path, file_format: str) -> tuple[str, int]:
    """(the note on an incomplete Inspect log, its attempts not run); ("", 0) for other formats."""
    return _inspect_log().log_plan(path) if file_format == "inspect" else ("", 0)


def _answers(count: int, not_run: int) -> str:
    """The ``count`` lines a conversion wrote, "N answers", with the attempts
    an incomplete log never ran said apart: they are lines too, but no
    answers, and the count of answers is the log's own."""
    if not not_run:
        return f"{count} answers"
    return f"{count - not_run} answers and {not_run} attempt{'' if not_run == 1 else 's'} not run"


def _inspect_log():
    # Imported for an Inspect log only: it imports Inspect AI, an optional extra.
    import scoring.imports.inspect_log as inspect_log

    return inspect_log


def _check_input(path: Path) -> None:
    if not path.is_file():
        raise _Refused(f"{path}: no such file")


def _check_language(language: str) -> None:
    if problem := language_problem(language):
        raise _Refused(f"--language: {problem}")


def _detected(path: Path) -> str:
    file_format = sniff.detect_format(path, path.name)
    if file_format is not None:
        return file_format
    seen = sniff.look(path, path.name)
    if seen.kind == "app":
        raise _Refused(
            f"{path}: this file is already {seen.detail} in this app's own format: it needs no import "
            f"(score a run log with python -m scoring {path})"
        )
    if seen.kind == "encoded":
        raise _Refused(f"{path}: {seen.detail}")
    raise _Refused(
        f"{path}: the format cannot be told from the file; give --format "
        f"{', '.join(imports.FORMATS[:-1])} or {imports.FORMATS[-1]}"
    )


def _preview(path: Path, file_format: str, options: imports.ImportOptions, *, rows: int) -> int:
    try:
        shown = imports.preview(path, file_format, options, rows=rows)
    except LogFileError as error:
        _print_errors(path, error.errors, error.total)
        return _USAGE_ERROR
    except (ValueError, ImportError) as error:
        raise _Refused(f"{path}: {error}") from None
    print(f"{path}: {imports.FORMAT_LABELS[file_format]}")
    suggested = {
        name: getattr(shown, name)
        for name in ("assistant_version", "set_version", "set_name")
        if getattr(shown, name)
    }
    if suggested:
        print("suggested: " + ", ".join(f"{name}={value}" for name, value in suggested.items()))
    if shown.note:
        print(shown.note)
    for note in shown.notes:
        print(f"note: {note}")
    print("fields in the file: " + (", ".join(shown.fields) or "none"))
    print('mapping ("field <- column": read from that column or key; "field = ...": no column gives it):')
    width = max(map(len, imports.TARGET_FIELDS))
    for target in imports.TARGET_FIELDS:
        if target in shown.columns:
            print(f"  {target.ljust(width)} <- {shown.columns[target]}")
        elif file_format in tabular.TABULAR_FORMATS:
            derived = tabular.DERIVED[target]
            if target == "language":
                derived = f"{options.language}, {derived}"
            print(f"  {target.ljust(width)} = {derived}")
    read = len(shown.rows) or len(shown.lines)
    failed = f", {read - len(shown.lines)} with problems (below)" if read > len(shown.lines) else ""
    print(f"the first {read} row{'' if read == 1 else 's'} as run-log lines{failed}:")
    for line in shown.lines:
        print("  " + orjson.dumps(line).decode())
    try:
        whole = imports.check(path, file_format, options)
    except (ValueError, ImportError) as error:
        raise _Refused(f"{path}: {error}") from None
    count, errors = whole.lines, list(shown.errors)
    errors += [error for error in whole.errors if error not in shown.errors]
    total = whole.total + len(errors) - len(whole.errors)
    checked = "the whole file, checked as converting it checks"
    if total:
        print(f"{checked}: refused, {total} problem{'' if total == 1 else 's'} (below)")
        _print_errors(path, errors, total)
        return _USAGE_ERROR
    print(f"{checked}: {_answers(count, _plan(path, file_format)[1])}, no problems")
    return 0


def _qa(argv: list[str]) -> int:
    from scoring import qa

    parser = argparse.ArgumentParser(
        prog="python -m scoring.imports qa",
        description="Turn a QA dataset (spec 001: open-ended or multiple choice) into a question set.",
    )
    parser.add_argument("task", choices=qa.TASKS, help="open (open-ended) or mc (multiple choice)")
    parser.add_argument("file", type=Path, help="the dataset, JSON Lines or CSV")
    parser.add_argument(
        "--columns",
        default="",
        metavar="KEY=COLUMN,...",
        help="the dataset's columns: question=…,reference=…,options=a+b+c,correct=…,id=…,stratum=…",
    )
    parser.add_argument("--language", default="en", help="the questions' language (default: en)")
    parser.add_argument(
        "--correct-from", type=int, choices=(0, 1), default=0, help="option positions count from 0 or 1"
    )
    parser.add_argument("--format", choices=qa.FORMATS, help="the dataset's format (default: from its name)")
    parser.add_argument("--out", type=Path, help="the question set to write (default: standard output)")
    args = parser.parse_args(argv)

    _check_input(args.file)
    _check_language(args.language)
    try:
        columns = qa.parse_columns(args.columns)
    except ValueError as error:
        raise _Refused(f"--columns: {error}") from None
    count = _write(
        args.out,
        lambda out: tabular.qa_question_set(
            args.file,
            args.task,
            columns,
            language=args.language,
            out=out,
            correct_from=args.correct_from,
            file_format=args.format,
        ),
        source=args.file,
    )
    if args.out:
        print(f"{args.file}: {count} questions written to {args.out}", file=sys.stderr)
    return 0


def _write(target: Path | None, write: Callable[[BinaryIO], int], *, source: Path) -> int:
    """Run ``write`` into a temporary file, then rename it to ``target`` (or
    copy it to standard output) only when it succeeded."""
    try:
        if target is None:
            with tempfile.TemporaryFile() as spool:
                count = write(spool)
                spool.seek(0)
                sys.stdout.flush()
                shutil.copyfileobj(spool, sys.stdout.buffer)
                sys.stdout.buffer.flush()
            return count
        return _write_file(target, write)
    except LogFileError as error:
        _print_errors(source, error.errors, error.total)
        raise _Refused() from None
    except (ValueError, ImportError) as error:
        raise _Refused(f"{source}: {error}") from None


def _write_file(target: Path, write: Callable[[BinaryIO], int]) -> int:
    directory = target.parent
    if not directory.is_dir():
        raise _Refused(f"{target}: no such directory {directory}")
    descriptor, temporary = tempfile.mkstemp(dir=directory, prefix=f".{target.name}.", suffix=".part")
    try:
        with os.fdopen(descriptor, "wb") as out:
            count = write(out)
        # mkstemp makes the file readable by its owner only; the run log is
        # an ordinary file.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return count


def _print_errors(path: Path, errors, total: int) -> None:
    for error in errors:
        print(f"{path}: {error}", file=sys.stderr)
    if total > len(errors):
        print(f"{path}: … and {total - len(errors)} more", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
