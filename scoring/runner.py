"""Score a run file end to end: read, validate and check every answer, on one
core or on several, and add up the slices.

The file is read in chunks of lines; each chunk is parsed, validated and
scored on its own (in a worker process when asked), and the parent adds up
the counts and checks what only the whole file can tell (an attempt given
twice, a gap in a question's attempts). The header's plan (repetitions) is
read first, since every line's attempt is checked against it.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from scoring import logfile, repeats, timing
from scoring.measures import (
    DEFAULT_OPTIONS,
    DEFAULT_SLICES,
    Finding,
    Options,
    RunScores,
    answered,
    check_answer,
    merge_slice_counts,
    not_run_checks,
    slice_counts,
)

CHUNK_LINES = 20_000

# Fields that make a line worth a timing record.
TIMING_FIELDS = (*timing.TIMESTAMP_FIELDS, "latency_ms", "tool_calls")


@contextmanager
def gc_paused():
    """Scoring allocates millions of small objects and no reference cycles;
    without this the cyclic collector runs thousands of times for nothing and
    doubles the time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass
class ChunkResult:
    answers: int = 0
    slices: dict = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    errors: list[logfile.LineError] = field(default_factory=list)
    error_total: int = 0
    # (question id, attempt, line) of every valid line, for the whole-file checks.
    question_lines: list[tuple[str, int, int]] = field(default_factory=list)
    # With repeated attempts, each question's attempts tallied (scoring.repeats).
    tallies: dict = field(default_factory=dict)
    # (slice fields, timing) of each line that logged any timing.
    timings: list[tuple[tuple, timing.AnswerTiming]] = field(default_factory=list)


# Set in the parent before worker processes fork, so that each worker has
# the questions without receiving them with every chunk.
_QUESTIONS: Mapping[str, Mapping] = {}


def score_chunk(
    first_line: int,
    lines: Sequence[bytes],
    *,
    slice_fields: Sequence[str] = DEFAULT_SLICES,
    options: Options = DEFAULT_OPTIONS,
    max_errors: int = 200,
    header_allowed: bool = False,
    questions: Mapping[str, Mapping] | None = None,
    repetitions: int = logfile.DEFAULT_REPETITIONS,
) -> ChunkResult:
    """Parse, validate and score consecutive lines numbered from ``first_line``
    of a run whose header declares ``repetitions``."""
    questions = _QUESTIONS if questions is None else questions
    result = ChunkResult()
    checks = []
    errors: list[logfile.LineError] = []
    for number, raw in enumerate(lines, start=first_line):
        if not raw or raw.isspace():
            continue
        record, line_errors = logfile.check_answer_line(number, raw, repetitions=repetitions)
        if header_allowed:
            header_allowed = False
            if not line_errors or record is None:
                parsed = logfile.parse_object(number, logfile._decode(raw))[0]
                if parsed is not None and logfile.is_header(parsed):
                    continue
        if not line_errors and record["question_id"] not in questions:
            line_errors.append(
                logfile.LineError(
                    number, "question_id", f"{record['question_id']!r} is not in the question set"
                )
            )
        if line_errors:
            result.error_total += len(line_errors)
            errors.extend(line_errors[: max(0, max_errors - len(errors))])
            continue
        result.question_lines.append((record["question_id"], record["attempt"], number))
        check = check_answer(
            record,
            questions[record["question_id"]],
            slice_fields=slice_fields,
            options=options,
            keep_numbers=False,
        )
        checks.append(check)
        result.findings.extend(check.findings)
        if any(name in record for name in TIMING_FIELDS):
            # check_answer_line has checked the timing fields already.
            result.timings.append((check.fields, timing.answer_timing(record, validated=True)))
    result.answers = len(checks)
    if repetitions > 1:
        result.tallies = repeats.tally(checks, answered=answered)
    result.errors = errors
    if not result.error_total:
        result.slices = slice_counts(checks, slice_fields=slice_fields)
    return result


def _chunk_ranges(data: bytes, size: int) -> Iterator[tuple[int, int, int]]:
    """(first line number, start, end) of consecutive byte ranges of about
    ``size`` lines each, cut at line ends."""
    start, first_line = 0, 1
    while start < len(data):
        end = start
        for _ in range(size):
            end = data.find(b"\n", end) + 1
            if end == 0:
                end = len(data)
                break
        yield first_line, start, end
        first_line += data.count(b"\n", start, end)
        start = end


# The file's bytes, shared with forked workers without copying or pickling.
_DATA = b""


def _score_range(job) -> ChunkResult:
    first_line, start, end, kwargs = job
    return score_chunk(first_line, _DATA[start:end].split(b"\n"), **kwargs)


def score_file(
    path: Path,
    questions: Mapping[str, Mapping],
    *,
    slice_fields: Sequence[str] = DEFAULT_SLICES,
    options: Options = DEFAULT_OPTIONS,
    workers: int = 1,
    max_errors: int = 200,
    chunk_lines: int = CHUNK_LINES,
) -> RunScores:
    """Score a run log against ``questions``; raise LogFileError listing the
    bad lines (the first ``max_errors``) when any line is bad. ``workers``
    above 1 spreads chunks over that many processes; 0 uses every core."""
    global _QUESTIONS, _DATA
    workers = workers or os.cpu_count() or 1
    plan, header_errors = logfile.read_plan(Path(path))
    kwargs = {
        "slice_fields": slice_fields,
        "options": options,
        "max_errors": max_errors,
        "repetitions": plan.repetitions,
    }
    _DATA = Path(path).read_bytes()
    _QUESTIONS = questions
    jobs = [
        (first, start, end, {**kwargs, "header_allowed": first == 1})
        for first, start, end in _chunk_ranges(_DATA, chunk_lines)
    ]
    try:
        with gc_paused():
            if workers == 1:
                results = [_score_range(job) for job in jobs]
            else:
                context = multiprocessing.get_context("fork")
                with context.Pool(workers, initializer=gc.disable) as pool:
                    results = pool.map(_score_range, jobs, chunksize=1)
    finally:
        _QUESTIONS, _DATA = {}, b""
    # The header's errors go first, as the errors of a chunk before the others.
    results.insert(0, ChunkResult(errors=header_errors, error_total=len(header_errors)))
    return _combine(
        results,
        questions,
        max_errors=max_errors,
        options=options,
        slice_fields=slice_fields,
        repetitions=plan.repetitions,
    )


def _combine(
    results: list[ChunkResult],
    questions: Mapping[str, Mapping],
    *,
    max_errors: int,
    options: Options,
    slice_fields: Sequence[str],
    repetitions: int = logfile.DEFAULT_REPETITIONS,
) -> RunScores:
    errors = [error for result in results for error in result.errors]
    total = sum(result.error_total for result in results)
    # Chunks come in line order, so an attempt given twice is named on its later line.
    book = logfile.AttemptBook(repetitions=repetitions)
    for result in results:
        for question_id, attempt, line in result.question_lines:
            if error := book.add(line, question_id, attempt):
                total += 1
                errors.append(error)
    gaps = book.gap_errors()
    total += len(gaps)
    errors += gaps
    answers = sum(result.answers for result in results)
    if not answers and not total:
        errors, total = [logfile.LineError(1, None, "the file holds no answers")], 1
    if total:
        errors.sort(key=lambda error: error.line)
        raise logfile.LogFileError(errors[:max_errors], total=total)
    # Every attempt the run did not make stays in N, as a failure.
    not_run = not_run_checks(
        questions,
        {question_id: book.attempts(question_id) for question_id in questions},
        repetitions=repetitions,
        slice_fields=slice_fields,
    )
    stable = {}
    if repetitions > 1:
        tallies = repeats.merge_tallies(
            [*(result.tallies for result in results), repeats.tally(not_run, answered=answered)]
        )
        stable = repeats.repeat_figures(tallies, repetitions=repetitions, slice_fields=slice_fields)
    return RunScores(
        answers=answers,
        slices=merge_slice_counts(
            *(result.slices for result in results), slice_counts(not_run, slice_fields=slice_fields)
        ),
        findings=[finding for result in results for finding in result.findings]
        + [finding for check in not_run for finding in check.findings],
        options=options,
        not_run=len(not_run),
        repetitions=repetitions,
        stable=stable,
        timing=_timing_by_slice([entry for result in results for entry in result.timings], slice_fields),
    )


def _timing_by_slice(entries: list[tuple[tuple, timing.AnswerTiming]], slice_fields: Sequence[str]) -> dict:
    """Spec 004's timing summary for "all" and each slice; empty when the log
    holds no timing at all."""
    if not entries:
        return {}
    groups: dict[str, list[timing.AnswerTiming]] = {"all": [entry for _, entry in entries]}
    for position, name in enumerate(slice_fields):
        for fields, entry in entries:
            if fields[position] is not None:
                groups.setdefault(f"{name}={fields[position]}", []).append(entry)
    return {name: timing.timing_summary(group) for name, group in groups.items()}
