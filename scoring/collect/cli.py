"""python -m scoring.collect SET.jsonl (--endpoint URL | --command CMD) [--repetitions R] --out RUN.jsonl

Asks an assistant every question of a question set, R times each (3 unless
told, spec 004's default), C at a time, and writes the run log of spec 000
recipe 4.1 with the plan and timing of spec 004: a header line, then one
line per attempt, in set order and then attempt order whatever order the
answers arrive in.

The assistant is either an OpenAI-compatible chat endpoint (POST
URL/chat/completions with the question as the one user message; a key from
the environment variable --api-key-env, OPENAI_API_KEY by default, is sent
as a Bearer token when it is set) or a command, run once per attempt with the
question on its standard input (and REVIEWAPP_QUESTION_ID, REVIEWAPP_LANGUAGE
and REVIEWAPP_ATTEMPT in its environment). The command is split into words
as a shell would, but no shell runs it: wrap it in ``sh -c '...'`` for pipes.

What an answer carries (EVIDENCE_FIELD, "reviewapp"):

- from an endpoint, the answer is choices[0].message.content; the evidence
  is an optional top-level object beside "choices"::

      {"choices": [...], "reviewapp": {"retrieved_ids": ["X"], "retrieved_values": [7.6],
                                       "cited_ids": ["X"], "declined": false}}

  which may also give retrieved_records and tool_calls as the run log holds
  them (scoring.logfile, scoring.timing);
- from a command, standard output is the answer as plain text, or a JSON
  object with those fields at its top level and "answer" among them;
- without evidence, retrieved_ids, retrieved_values and cited_ids are empty
  and declined is false.

``--mapping MAP.json`` names where each field is in responses of another
shape, as dotted paths with list indices as numbers, for instance
{"answer": "output.text", "cited_ids": "output.citations"}. A mapped path
that a response lacks makes that attempt an error naming the path.

Each line records submitted_at and, for an answer, received_at (UTC, with the
time zone), and a status: "ok"; "timeout" when no answer came within
--timeout-s (the attempt's stopped_at is when it was given up); "error" for an
HTTP error, a response that is not JSON or lacks a field, a failing command;
"refused_quota" for HTTP 429; "cancelled" for attempts left unfinished by an
interruption. Attempts are never retried: a retry would be a new attempt.

Interrupting (Ctrl-C) stops sending at once and writes every unfinished
attempt as "cancelled" with status_reason "collection interrupted ...", so
the partial log is still a valid run log and says which attempts did not run.
The log is written as it goes, always as a valid prefix: even a run that is
killed leaves a file the app can read (its missing attempts simply not run).

Exit status: 0 when every attempt was answered, 1 when some failed or timed
out (the log is complete), 2 for bad usage or input (nothing sent), 130 when
interrupted (the partial log is written).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from scoring.collect.assistants import ChatEndpoint, CommandAssistant
from scoring.collect.loop import collect
from scoring.collect.replies import (
    _CONNECT_CHECK_S,
    DEFAULT_TIMEOUT_S,
    INTERRUPTED,
    MAX_CONCURRENCY,
    MAX_LISTED_ERRORS,
    Assistant,
    CollectError,
    load_mapping,
)
from scoring.logfile import (
    MAX_REPETITIONS,
    MAX_TIMEOUT_S,
    PLANNED_REPETITIONS,
    SET_FILE_NAME,
    ErrorCollector,
    LineError,
    encoding_problem,
    iter_lines,
    iter_questions,
    label_problem,
    parse_object,
    read_header,
)

# -- command line ----------------------------------------------------------------


class ProgressBar:
    """done/total, rate and time left on one line of ``stream``, redrawn at
    most ten times a second."""

    WIDTH = 30

    def __init__(self, stream, *, clock: Callable[[], float] = time.monotonic):
        self.stream = stream
        self.clock = clock
        self.started = clock()
        self.drawn_at: float | None = None
        self.last = ""

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if done < total and self.drawn_at is not None and now - self.drawn_at < 0.1:
            return
        self.drawn_at = now
        self.last = self.render(done, total, elapsed=now - self.started)
        self.stream.write("\r" + self.last)
        self.stream.flush()

    @classmethod
    def render(cls, done: int, total: int, *, elapsed: float) -> str:
        """The bar's text, such as ``[=======>      ]  12/40 attempts, 2.0/s, 14 s left``."""
        filled = cls.WIDTH * done // max(total, 1)
        bar = "=" * filled + (">" if filled < cls.WIDTH else "") + " " * (cls.WIDTH - filled - 1)
        text = f"[{bar}] {done:>{len(str(total))}}/{total} attempts"
        if done and elapsed > 0:
            rate = done / elapsed
            text += f", {rate:.1f}/s"
            if done < total:
                text += f", {_duration((total - done) / rate)} left"
        return text

    def finish(self) -> None:
        if self.drawn_at is not None:
            self.stream.write("\n")
            self.stream.flush()


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        # One sentence, not argparse's usage dump.
        self.exit(2, f"{self.prog}: {message} (see --help)\n")


def _whole(low: int, high: int, what: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{what} must be a whole number from {low} to {high}, not {text!r}"
            ) from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"{what} must be a whole number from {low} to {high}, not {value}"
            )
        return value

    return parse


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m scoring.collect",
        description=__doc__.split("\n\n")[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("questions", type=Path, metavar="SET.jsonl", help="question set, JSON Lines")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--endpoint", metavar="URL", help="OpenAI-compatible base URL, such as http://host/v1"
    )
    source.add_argument("--command", metavar="CMD", help="command run per attempt, the question on stdin")
    parser.add_argument("--model", metavar="NAME", help="model name sent to the endpoint")
    parser.add_argument(
        "--api-key-env", default="OPENAI_API_KEY", metavar="VAR", help="environment variable holding the key"
    )
    parser.add_argument(
        "--repetitions",
        default=PLANNED_REPETITIONS,
        type=_whole(1, MAX_REPETITIONS, "--repetitions"),
        metavar="R",
        help=f"attempts per question (default {PLANNED_REPETITIONS}, spec 004's default; with 1 no "
        "stable-resolution rate can be shown)",
    )
    parser.add_argument(
        "--concurrency",
        default=1,
        type=_whole(1, MAX_CONCURRENCY, "--concurrency"),
        metavar="C",
        help="attempts running at once (default 1)",
    )
    parser.add_argument(
        "--timeout-s",
        default=DEFAULT_TIMEOUT_S,
        type=_whole(1, MAX_TIMEOUT_S, "--timeout-s"),
        metavar="S",
        help=f"seconds an attempt may take, whole (default {DEFAULT_TIMEOUT_S})",
    )
    parser.add_argument(
        "--out",
        required=True,
        type=Path,
        metavar="RUN.jsonl",
        help="run log to write; in a folder, named answers_run_<assistant>_set-<set>.jsonl",
    )
    parser.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    parser.add_argument(
        "--assistant-version", metavar="V", help="label the run is logged under (default: --model)"
    )
    parser.add_argument("--mapping", type=Path, metavar="MAP.json", help="dotted paths of fields in replies")
    parser.add_argument(
        "--progress", action="store_true", help="show progress even when stderr is no terminal"
    )
    return parser


def _say(message: str) -> None:
    print(f"python -m scoring.collect: {message}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; the exit status (0 all answered, 1 some
    attempts failed, 2 bad usage or input, 130 interrupted)."""
    args = _parser().parse_args(argv)
    try:
        return _main(args)
    except CollectError as error:
        _say(str(error))
        return 2
    except KeyboardInterrupt:
        _say("interrupted before any question was sent; nothing was written")
        return 130


def _main(args: argparse.Namespace) -> int:
    questions, set_version = _read_set(args.questions)
    assistant_version = args.assistant_version or args.model
    if not assistant_version:
        raise CollectError("give --assistant-version, the label the run is logged under (or --model)")
    if problem := label_problem(assistant_version):
        flag = "--assistant-version" if args.assistant_version else "--model (give --assistant-version)"
        raise CollectError(f"{flag}: {problem}")
    mapping = load_mapping(args.mapping) if args.mapping else None
    out = args.out
    if out.is_dir():
        out = out / f"answers_run_{assistant_version}_set-{set_version or 'unknown'}.jsonl"
    if out.exists() and out.resolve() == args.questions.resolve():
        raise CollectError(f"{out} is the question set: write the run log to another file")
    if out.exists() and not args.overwrite:
        raise CollectError(f"{out} already exists: choose another file or give --overwrite")
    if args.endpoint:
        endpoint = ChatEndpoint(
            url=args.endpoint, model=args.model, api_key=os.environ.get(args.api_key_env), mapping=mapping
        )
        endpoint.check_reachable(timeout_s=min(args.timeout_s, _CONNECT_CHECK_S))
        assistant: Assistant = endpoint
    else:
        assistant = CommandAssistant(command=args.command, mapping=mapping)
    if set_version is None:
        _say(f"{args.questions} names no set_version: the run log's header leaves it out")
    bar = ProgressBar(sys.stderr) if args.progress or sys.stderr.isatty() else None
    try:
        summary = collect(
            questions=questions,
            assistant=assistant,
            out=out,
            assistant_version=assistant_version,
            set_version=set_version,
            repetitions=args.repetitions,
            concurrency=args.concurrency,
            timeout_s=args.timeout_s,
            overwrite=args.overwrite,
            progress=bar,
        )
    except OSError as error:
        raise CollectError(f"{out}: writing the run log failed ({error.strerror or error})") from None
    finally:
        if bar:
            bar.finish()
    if summary.interrupted:
        cancelled = summary.counts.get("cancelled", 0)
        _say(
            f"interrupted: {out} is a partial run log, its {cancelled} unfinished attempts written with "
            f'status "cancelled" ({INTERRUPTED})'
        )
        return 130
    print(summary.describe())
    return 0 if summary.all_ok else 1


def _read_set(path: Path) -> tuple[list[dict], str | None]:
    """The questions of a set file and its set_version (from its header, or
    else its file name); refuses, with CollectError, a file that cannot be
    read and one with bad lines or questions without text, naming each line."""
    if not path.is_file():
        raise CollectError(f"{path}: no such file")
    try:
        with open(path, "rb") as stream:
            head = stream.read(4096)
    except OSError as error:
        raise CollectError(f"{path}: cannot read it ({error.strerror or error})") from None
    if problem := encoding_problem(head):
        raise CollectError(f"{path}: {problem}")
    collector = ErrorCollector(MAX_LISTED_ERRORS)
    questions = list(iter_questions(path, collector))
    without_text = {question["question_id"] for question in questions if not question["question"].strip()}
    if without_text:
        # Normalised questions no longer know their lines; the file does.
        collector.add(
            LineError(number, "question", "no question text to ask: give the question in the field question")
            for number, question_id in _first_lines(path)
            if question_id in without_text
        )
    if collector.total:
        errors = sorted(collector.errors, key=lambda error: error.line)
        raise CollectError(_listed_errors(path, errors, collector.total))
    header = read_header(path)
    set_version = header.get("set_version")
    if not isinstance(set_version, str):
        named = SET_FILE_NAME.match(path.name)
        set_version = named["set_version"] if named else None
    if set_version is not None and (problem := label_problem(set_version)):
        raise CollectError(f"{path}: the set_version {problem}")
    return questions, set_version


def _first_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line, question id) of the first line giving each id."""
    seen = set()
    with open(path, "rb") as stream:
        for number, text, _, _ in iter_lines(stream):
            record, _ = parse_object(number, text)
            question_id = record.get("question_id") if record is not None else None
            if isinstance(question_id, str) and question_id not in seen:
                seen.add(question_id)
                yield number, question_id


def _listed_errors(path: Path, errors: list[LineError], total: int) -> str:
    lines = [f"{path} has {total} {'problem' if total == 1 else 'problems'}:"]
    lines += [f"  {error}" for error in errors]
    if total > len(errors):
        lines.append(f"  … and {total - len(errors)} more")
    return "\n".join(lines)
