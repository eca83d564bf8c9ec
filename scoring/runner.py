"""Score a run file end to end: read, validate and check every answer, on one
core or on several, and add up the slices.

The file is read in chunks of lines; each chunk is parsed, validated and
scored on its own (in a worker process when asked), and the parent adds up
the counts and checks what only the whole file can tell (an id answered twice).
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from scoring import logfile
from scoring.measures import (
    DEFAULT_OPTIONS,
    DEFAULT_SLICES,
    Finding,
    Options,
    RunScores,
    check_answer,
    merge_slice_counts,
    not_run_check,
    slice_counts,
)

CHUNK_LINES = 20_000


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
    question_lines: list[tuple[str, int]] = field(default_factory=list)


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
) -> ChunkResult:
    """Parse, validate and score consecutive lines numbered from ``first_line``."""
    questions = _QUESTIONS if questions is None else questions
    result = ChunkResult()
    checks = []
    errors: list[logfile.LineError] = []
    for number, raw in enumerate(lines, start=first_line):
        if not raw or raw.isspace():
            continue
        record, line_errors = logfile.check_answer_line(number, raw)
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
        result.question_lines.append((record["question_id"], number))
        check = check_answer(
            record,
            questions[record["question_id"]],
            slice_fields=slice_fields,
            options=options,
            keep_numbers=False,
        )
        checks.append(check)
        result.findings.extend(check.findings)
    result.answers = len(checks)
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
    kwargs = {"slice_fields": slice_fields, "options": options, "max_errors": max_errors}
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
    return _combine(results, questions, max_errors=max_errors, options=options, slice_fields=slice_fields)


def _combine(
    results: list[ChunkResult],
    questions: Mapping[str, Mapping],
    *,
    max_errors: int,
    options: Options,
    slice_fields: Sequence[str],
) -> RunScores:
    errors = [error for result in results for error in result.errors]
    total = sum(result.error_total for result in results)
    first_seen: dict[str, int] = {}
    for result in results:
        for question_id, line in result.question_lines:
            if question_id in first_seen:
                total += 1
                errors.append(
                    logfile.LineError(
                        line,
                        "question_id",
                        f"{question_id!r} already answered on line {first_seen[question_id]}",
                    )
                )
            else:
                first_seen[question_id] = line
    answers = sum(result.answers for result in results)
    if not answers and not total:
        errors, total = [logfile.LineError(1, None, "the file holds no answers")], 1
    if total:
        errors.sort(key=lambda error: error.line)
        raise logfile.LogFileError(errors[:max_errors], total=total)
    # Questions the run never answered stay in N, as failures.
    not_run = [
        not_run_check(question, slice_fields=slice_fields)
        for question_id, question in questions.items()
        if question_id not in first_seen
    ]
    return RunScores(
        answers=answers,
        slices=merge_slice_counts(
            *(result.slices for result in results), slice_counts(not_run, slice_fields=slice_fields)
        ),
        findings=[finding for result in results for finding in result.findings]
        + [finding for check in not_run for finding in check.findings],
        options=options,
        not_run=len(not_run),
    )
