"""Score a run file end to end: read, validate and check every answer, on one
core or on several, and add up the slices.

The file is cut into byte ranges of whole lines, each read from the file by
the process that scores it, so that no process holds the whole file. Each
range is parsed, validated and scored on its own (in a worker process when
asked) into counts, timing columns and its findings already written out;
the parent adds them up in file order and checks what only the whole file
can tell (an answer given twice, a gap in a question's attempts). The
header's plan (repetitions) is read first, since every line's attempt is
checked against it.

A log in the combined form needs no question set: each answer line carries
its question's expected behaviour and values, and is checked against them.
"""

from __future__ import annotations

import dataclasses
import gc
import multiprocessing
import os
import tempfile
from array import array
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import BinaryIO

import orjson

from scoring import logfile, repeats, timing
from scoring.logfile.lines import range_bytes
from scoring.measures import (
    DEFAULT_OPTIONS,
    DEFAULT_SLICES,
    Finding,
    Options,
    RunScores,
    answered,
    check_answer,
    merge_slice_counts,
    named_clusters,
    not_run_check,
    not_run_checks,
    slice_counts,
)

# About 8,000 answers of the usual size: small enough that both cores stay
# busy to the end, large enough that each costs the parent little.
CHUNK_BYTES = 8 << 20

# Fields that make a line worth a timing record.
TIMING_FIELDS = (*timing.TIMESTAMP_FIELDS, "latency_ms", "tool_calls", "overhead")
_TIMING_FIELDS = frozenset(TIMING_FIELDS)

# How findings are kept: as Finding objects, or written out as the lines
# of the CLI's JSON or its text.
FINDINGS_KEPT, FINDINGS_JSON, FINDINGS_TEXT = "kept", "json", "text"


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
    lines: int = 0  # lines read, to number the next chunk's
    answers: int = 0
    # Lines naming the attempt of the repeated run they repeat (repeats_attempt).
    reruns: int = 0
    slices: dict = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    # The findings written out (see FINDINGS_JSON, FINDINGS_TEXT), and how many.
    findings_written: bytes = b""
    finding_count: int = 0
    errors: list[logfile.LineError] = field(default_factory=list)
    error_total: int = 0
    # The question id of every valid line, in order, against a question set;
    # in the combined form, only their hashes, in a run made once: enough
    # to find an answer given twice, in 8 bytes an answer.
    question_ids: list[str] = field(default_factory=list)
    id_hashes: array = field(default_factory=lambda: array("q"))
    # With repetitions, (question id, attempt, line) of every valid line.
    question_lines: list[tuple[str, int, int]] = field(default_factory=list)
    # In the combined form with repetitions, each question as first stated
    # in the chunk, for the attempts the run did not make.
    questions: dict = field(default_factory=dict)
    # With repeated attempts, each question's attempts tallied (scoring.repeats).
    tallies: dict = field(default_factory=dict)
    # The timing of each line that logged any, and each one's value of each
    # slice field: a code into the chunk's list of that field's values.
    timings: timing.TimingColumns | None = None
    slice_values: list[list] = field(default_factory=list)
    slice_codes: list[array] = field(default_factory=list)
    # With repetitions, the question id of each timing row, for each
    # question's median time over its attempts.
    timing_question_ids: list[str] = field(default_factory=list)
    # The follow-ups of each attempt that took any, as (question id, line),
    # and, in the combined form, the follow-up each question declares.
    follow_ups: list[tuple[str, dict]] = field(default_factory=list)
    declared_follow_ups: dict = field(default_factory=dict)


# Set in the parent before worker processes fork, so that each worker has
# the questions without receiving them with every chunk; None for the
# combined form.
_QUESTIONS: Mapping[str, Mapping] | None = {}


def score_chunk(
    first_line: int,
    lines: Sequence[bytes],
    *,
    slice_fields: Sequence[str] = DEFAULT_SLICES,
    options: Options = DEFAULT_OPTIONS,
    max_errors: int = 200,
    header_allowed: bool = False,
    questions: Mapping[str, Mapping] | None = None,
    combined: bool = False,
    repetitions: int = logfile.DEFAULT_REPETITIONS,
    repeats_a_run: bool = False,
    findings_format: str = FINDINGS_KEPT,
    tally_questions: bool = False,
) -> ChunkResult:
    """Parse, validate and score consecutive lines numbered from ``first_line``
    of a run whose header declares ``repetitions``, against ``questions``
    or, with ``combined``, against the expected values each line carries.
    Questions are tallied when attempts repeat or ``tally_questions`` says
    so (the question set names clusters)."""
    questions = _QUESTIONS if questions is None else questions
    result = ChunkResult(lines=len(lines))
    checks = []
    errors: list[logfile.LineError] = []
    timing_rows: list[tuple] = []
    written: list[bytes] = []
    for number, raw in enumerate(lines, start=first_line):
        if not raw or raw.isspace():
            continue
        moments: dict = {}
        record, line_errors = logfile.check_answer_line(
            number, raw, repetitions=repetitions, repeats_a_run=repeats_a_run, moments=moments
        )
        if header_allowed:
            header_allowed = False
            if not line_errors or record is None:
                parsed = logfile.parse_object(number, logfile._decode(raw))[0]
                if parsed is not None and logfile.is_header(parsed):
                    continue
        if combined:
            if record is not None:
                line_errors = logfile.question_errors(number, record, answer_checked=True)
                question = record
        elif not line_errors:
            question = questions.get(record["question_id"])
            if question is None:
                line_errors.append(
                    logfile.LineError(
                        number, "question_id", f"{record['question_id']!r} is not in the question set"
                    )
                )
        if line_errors:
            result.error_total += len(line_errors)
            errors.extend(line_errors[: max(0, max_errors - len(errors))])
            continue
        question_id = record["question_id"]
        if repetitions > 1:
            result.question_lines.append((question_id, record["attempt"], number))
            if combined and question_id not in result.questions:
                result.questions[question_id] = _question_of(record, slice_fields)
        else:
            result.question_ids.append(question_id)
        if record.get("repeats_attempt") is not None:
            result.reruns += 1
        if "follow_ups" in record or "follow_up" in record:
            _keep_follow_ups(record, combined, result)
        check = check_answer(record, question, slice_fields=slice_fields, options=options, keep_numbers=False)
        checks.append(check)
        if check.findings:
            _keep_findings(check.findings, findings_format, result, written)
        if not _TIMING_FIELDS.isdisjoint(record):
            # check_answer_line has checked the timing fields, and parsed them.
            timing_rows.append((check.fields, timing.timing_row(record, moments)))
            if repetitions > 1:
                result.timing_question_ids.append(question_id)
    result.answers = len(checks)
    if repetitions > 1 or tally_questions:
        result.tallies = repeats.tally(checks, answered=answered)
    result.errors = errors
    result.findings_written = b"".join(written)
    if timing_rows:
        result.timings = timing.TimingColumns.from_rows([row for _, row in timing_rows])
        result.slice_values, result.slice_codes = _slice_codes([fields for fields, _ in timing_rows])
    if combined and repetitions == 1:
        result.id_hashes = array("q", map(hash, result.question_ids))
        result.question_ids = []
    if not result.error_total:
        result.slices = slice_counts(checks, slice_fields=slice_fields)
    return result


def _keep_follow_ups(record: Mapping, combined: bool, result: ChunkResult) -> None:
    question_id = record["question_id"]
    if record.get("follow_ups"):
        result.follow_ups.append(
            (question_id, {"turns": record.get("turns"), "follow_ups": record["follow_ups"]})
        )
    if combined and type(record.get("follow_up")) is dict:
        result.declared_follow_ups[question_id] = record["follow_up"]


def _question_of(record: Mapping, slice_fields: Sequence[str]) -> dict:
    """What an attempt not run needs of a combined-form line's question."""
    kept = ("question_id", "expected_behaviour", "expected_values", *slice_fields)
    return {name: record[name] for name in kept if name in record}


def _keep_findings(findings: list[Finding], findings_format: str, result: ChunkResult, written: list) -> None:
    result.finding_count += len(findings)
    if findings_format == FINDINGS_KEPT:
        result.findings.extend(findings)
    else:
        written.append(encode_findings(findings, findings_format))


def encode_findings(findings: Sequence[Finding], findings_format: str) -> bytes:
    """Findings as lines of the CLI's output: in JSON, each object on its own
    line followed by a comma; in text, indented "id: kind: detail"."""
    if findings_format == FINDINGS_JSON:
        return b"".join(b"    " + orjson.dumps(finding.as_dict()) + b",\n" for finding in findings)
    return "".join(f"  {f.question_id}: {f.kind}: {f.detail}\n" for f in findings).encode()


def _slice_codes(rows: list[tuple]) -> tuple[list[list], list[array]]:
    """For each slice field, its values in the order first seen and each
    row's code: 0 for no value, else 1 + the value's position."""
    values: list[list] = []
    codes: list[array] = []
    for column in zip(*rows, strict=True):
        seen: dict = {}
        codes.append(array("H", [0 if v is None else seen.setdefault(v, len(seen) + 1) for v in column]))
        values.append(list(seen))
    return values, codes


def _chunk_ranges(path: Path, size: int) -> list[tuple[int, int]]:
    """Byte ranges of about ``size`` bytes covering the file; each range's
    reader takes the lines that start in it (see _read_range)."""
    total = path.stat().st_size
    return [(start, min(start + size, total)) for start in range(0, total, size)] or [(0, 0)]


def _read_range(stream: BinaryIO, start: int, end: int) -> list[bytes]:
    """The lines that start within [start, end) of the file, whole."""
    lines = range_bytes(stream, start, end).split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


# The path and the scoring options, shared with forked workers.
_JOB: dict = {}


def _score_range(job: tuple[int, int, bool]) -> ChunkResult:
    start, end, first = job
    with open(_JOB["path"], "rb") as stream:
        lines = _read_range(stream, start, end)
    # Lines are numbered from 1 in each chunk; the parent adds the lines before.
    return score_chunk(1, lines, header_allowed=first, **_JOB["kwargs"])


def score_file(
    path: Path,
    questions: Mapping[str, Mapping] | None,
    *,
    slice_fields: Sequence[str] = DEFAULT_SLICES,
    options: Options = DEFAULT_OPTIONS,
    workers: int = 1,
    max_errors: int = 200,
    chunk_bytes: int = CHUNK_BYTES,
    findings_to: BinaryIO | None = None,
    findings_format: str = FINDINGS_KEPT,
    declared_follow_ups: Mapping[str | None, dict] | None = None,
) -> RunScores:
    """Score a run log against ``questions`` (None: the log is in the
    combined form); raise LogFileError listing the bad lines (the first
    ``max_errors``) when any line is bad. ``workers`` above 1 spreads chunks
    over that many processes; 0 uses every core.

    Findings are kept in the result, unless ``findings_to`` is given: then
    they are written to it in ``findings_format`` (FINDINGS_JSON or
    FINDINGS_TEXT) in file order, the result's ``finding_count`` says how
    many, and memory stays flat however many there are.

    The result's ``follow_ups`` counts the attempts that took follow-ups,
    each labelled against the one its question declares: in
    ``declared_follow_ups`` (the question set's, by question id, and the
    set's own under None), or in the combined form on its lines and in the
    run's header."""
    global _QUESTIONS
    path = Path(path)
    workers = workers or os.cpu_count() or 1
    plan, header_errors = logfile.read_plan(path)
    combined = questions is None
    if findings_to is None:
        findings_format = FINDINGS_KEPT
    _JOB.update(
        path=path,
        kwargs={
            "slice_fields": slice_fields,
            "options": options,
            "max_errors": max_errors,
            "repetitions": plan.repetitions,
            "repeats_a_run": plan.repeats is not None,
            "combined": combined,
            "findings_format": findings_format,
            "tally_questions": bool(questions and named_clusters(questions)),
        },
    )
    _QUESTIONS = questions
    jobs = [(start, end, start == 0) for start, end in _chunk_ranges(path, chunk_bytes)]
    totals = _Totals(
        path,
        plan.repetitions,
        max_errors,
        header_errors,
        findings_to,
        findings_format,
        repeats_a_run=plan.repeats is not None,
    )
    if combined:
        totals.declared_follow_ups[None] = logfile.read_header(path).get("follow_up")
    else:
        totals.declared_follow_ups.update(declared_follow_ups or {})
    try:
        with gc_paused():
            if workers == 1 or len(jobs) == 1:
                for job in jobs:
                    totals.add(_score_range(job))
            else:
                context = multiprocessing.get_context("fork")
                processes = min(workers, len(jobs))
                with context.Pool(processes, initializer=gc.disable) as pool:
                    # A few chunks in flight, added up in file order: results
                    # never pile up when the parent falls behind.
                    pending: deque = deque()
                    for job in jobs:
                        pending.append(pool.apply_async(_score_range, (job,)))
                        if len(pending) > 2 * processes:
                            totals.add(pending.popleft().get())
                    while pending:
                        totals.add(pending.popleft().get())
        scores = totals.finish(questions, combined=combined, options=options, slice_fields=slice_fields)
        scores.repeats = plan.repeats
        scores.clock = {"skew_ms": plan.clock_skew_ms, "precision_ms": plan.clock_precision_ms}
        scores.reply_policy, scores.exclude_overhead = plan.reply_policy, plan.exclude_overhead
        scores.follow_ups = totals.follow_up_counts()
        return scores
    finally:
        _QUESTIONS = {}
        _JOB.clear()
        totals.timings.numbers.close()


# Values a spilled timing column is read back in at a time.
SPILL_BLOCK_VALUES = 1 << 16


class _SpilledNumbers:
    """The number columns of a run's timing (see timing.TimingColumns) in
    temporary files: exact percentiles need every value, and a million
    answers' would otherwise stay in memory to the end. A column is read
    back as it is gone through, a block at a time."""

    def __init__(self):
        self.files: dict[str, BinaryIO] = {}
        self.rows = 0

    def append(self, numbers: Mapping[str, array], rows: int) -> None:
        for name in numbers.keys() - self.files.keys():
            self.files[name] = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close())
            _write_missing(self.files[name], self.rows)
        for name, stream in self.files.items():
            if name in numbers:
                numbers[name].tofile(stream)
            else:
                _write_missing(stream, rows)
        self.rows += rows

    def get(self, name: str, default=None) -> Iterator[float] | None:
        stream = self.files.get(name)
        if stream is None:
            return default
        stream.flush()  # read below the buffer, by the descriptor
        return self._read(stream.fileno(), self.rows)

    @staticmethod
    def _read(descriptor: int, rows: int) -> Iterator[float]:
        """A column's values in order, read a block at a time at their own
        offsets (pread), so that several may be read at once and none is
        held whole."""
        block_bytes = SPILL_BLOCK_VALUES * 8
        for offset in range(0, rows * 8, block_bytes):
            block = array("d")
            block.frombytes(os.pread(descriptor, min(block_bytes, rows * 8 - offset), offset))
            yield from block

    def keys(self):
        return self.files.keys()

    def __contains__(self, name: str) -> bool:
        return name in self.files

    def close(self) -> None:
        for stream in self.files.values():
            stream.close()


def _write_missing(stream: BinaryIO, rows: int) -> None:
    block = 1 << 16
    for start in range(0, rows, block):
        (array("d", [float("nan")]) * min(block, rows - start)).tofile(stream)


class _Totals:
    """The chunks' results added up in file order, holding per answer only
    its question id (and, with repetitions, its attempt and line)."""

    def __init__(
        self,
        path: Path,
        repetitions: int,
        max_errors: int,
        header_errors: list[logfile.LineError],
        findings_to: BinaryIO | None,
        findings_format: str,
        *,
        repeats_a_run: bool = False,
    ):
        self.path = path
        self.findings_format = findings_format
        self.repetitions = repetitions
        self.max_errors = max_errors
        self.errors = list(header_errors)
        self.error_total = len(header_errors)
        self.lines = 0
        self.answers = 0
        self.reruns = 0
        # Whether the header names a run repeated: a line may then say which attempt.
        self.repeats_a_run = repeats_a_run
        self.slices: list[dict] = []
        self.findings: list[Finding] = []
        self.finding_count = 0
        self.findings_to = findings_to
        self.tallies: list[dict] = []
        self.timings = timing.TimingColumns()
        self.timings.numbers = _SpilledNumbers()
        # Each slice field's values, numbered from 1, and each timing row's number.
        self.slice_values: list[dict] = []
        self.slice_codes: list[array] = []
        # With repetitions, each timing row's question as a number into
        # timing_questions: 4 bytes a row, and each id held once.
        self.timing_question_codes = array("I")
        self.timing_question_numbers: dict[str, int] = {}
        self.timing_questions: list[str] = []
        self.questions: dict[str, dict] = {}
        self.answered: set[str] = set()
        self.id_hashes = array("q")
        self.twice: set[str] = set()  # ids answered twice in a run made once
        self.book = logfile.AttemptBook(repetitions=repetitions)
        self.follow_ups: list[tuple[str, dict]] = []
        self.declared_follow_ups: dict = {}

    def add(self, result: ChunkResult) -> None:
        offset = self.lines
        self.lines += result.lines
        self.error_total += result.error_total
        room = self.max_errors - len(self.errors)
        if result.errors and room > 0:
            self.errors += [dataclasses.replace(e, line=e.line + offset) for e in result.errors[:room]]
        self.answers += result.answers
        self.reruns += result.reruns
        self.follow_ups += result.follow_ups
        self.declared_follow_ups.update(result.declared_follow_ups)
        self.slices.append(result.slices)
        self.findings += result.findings
        self.finding_count += result.finding_count
        if result.findings_written:
            self.findings_to.write(result.findings_written)
        if result.tallies:
            self.tallies.append(result.tallies)
        if result.timings is not None:
            self._add_timing(result)
        self.id_hashes += result.id_hashes
        for question_id, question in result.questions.items():
            self.questions.setdefault(question_id, question)
        ids = result.question_ids
        if ids:
            chunk_ids = set(ids)
            if len(chunk_ids) < len(ids) or not self.answered.isdisjoint(chunk_ids):
                self.twice.update(self._repeated(ids))
            self.answered |= chunk_ids
        for question_id, attempt, line in result.question_lines:
            if error := self.book.add(line + offset, question_id, attempt):
                self._error(error)

    def _add_timing(self, result: ChunkResult) -> None:
        if not self.slice_values:
            self.slice_values = [{} for _ in result.slice_values]
            self.slice_codes = [array("H", [0]) * self.timings.rows for _ in result.slice_values]
        table, chunk = self.timings, result.timings
        table.numbers.append(chunk.numbers, chunk.rows)
        table.status += chunk.status
        table.e2e_source += chunk.e2e_source
        table.counted_calls += chunk.counted_calls
        table.rows += chunk.rows
        for known, codes, values, chunk_codes in zip(
            self.slice_values, self.slice_codes, result.slice_values, result.slice_codes, strict=True
        ):
            renumbered = [0, *(known.setdefault(value, len(known) + 1) for value in values)]
            codes.extend(map(renumbered.__getitem__, chunk_codes))
        numbers, names = self.timing_question_numbers, self.timing_questions
        for question_id in result.timing_question_ids:
            number = numbers.get(question_id)
            if number is None:
                number = numbers[question_id] = len(names)
                names.append(question_id)
            self.timing_question_codes.append(number)

    def _repeated(self, ids: list[str]) -> set[str]:
        seen = set(self.answered)
        repeated = set()
        for question_id in ids:
            if question_id in seen:
                repeated.add(question_id)
            seen.add(question_id)
        return repeated

    def _error(self, error: logfile.LineError) -> None:
        self.error_total += 1
        self.errors.append(error)

    def finish(
        self,
        questions: Mapping[str, Mapping] | None,
        *,
        combined: bool,
        options: Options,
        slice_fields: Sequence[str],
    ) -> RunScores:
        if self.id_hashes:
            self.twice = self._hashed_twice()
            self.id_hashes = array("q")  # 8 bytes an answer, not needed for the summaries
        if self.twice:
            for error in self._twice_errors(combined):
                self._error(error)
        for error in self.book.gap_errors():
            self._error(error)
        if not self.answers and not self.error_total:
            self.errors, self.error_total = [logfile.LineError(1, None, "the file holds no answers")], 1
        if self.error_total:
            self.errors.sort(key=lambda error: error.line)
            raise logfile.LogFileError(self.errors[: self.max_errors], total=self.error_total)
        if questions is None:
            questions = self.questions  # the combined form states its own
        # Every attempt the run did not make stays in N, as a failure.
        if self.repetitions > 1:
            attempts = {question_id: self.book.attempts(question_id) for question_id in questions}
            not_run = not_run_checks(
                questions, attempts, repetitions=self.repetitions, slice_fields=slice_fields
            )
        else:
            # By id first: a question is made only when it was not answered.
            not_run = [
                not_run_check(questions[question_id], slice_fields=slice_fields)
                for question_id in questions
                if question_id not in self.answered
            ]
        not_run_findings = [finding for check in not_run for finding in check.findings]
        if self.findings_to is not None:
            self.findings_to.write(encode_findings(not_run_findings, self.findings_format))
        stable = {}
        slices = merge_slice_counts(*self.slices, slice_counts(not_run, slice_fields=slice_fields))
        clusters = named_clusters(questions)
        if self.repetitions > 1 or clusters:
            tallies = repeats.merge_tallies([*self.tallies, repeats.tally(not_run, answered=answered)])
            stable = repeats.repeat_figures(tallies, repetitions=self.repetitions, slice_fields=slice_fields)
            slices = repeats.with_question_clusters(
                slices, tallies, slice_fields=slice_fields, cluster_of=clusters
            )
        return RunScores(
            answers=self.answers,
            reruns=self.reruns,
            slices=slices,
            findings=[] if self.findings_to is not None else self.findings + not_run_findings,
            finding_count=self.finding_count + len(not_run_findings),
            options=options,
            not_run=len(not_run),
            repetitions=self.repetitions,
            stable=stable,
            timing=self._timing_by_slice(slice_fields),
        )

    def follow_up_counts(self) -> dict:
        """follow_up_counts of the run, with the line shown for it as "summary"."""
        declared = self.declared_follow_ups
        lists = [
            logfile.label_follow_ups(line, declared.get(question_id, declared.get(None)))[1]
            for question_id, line in self.follow_ups
        ]
        counts = logfile.follow_up_counts(lists)
        return {**counts, "summary": logfile.follow_up_summary(counts)}

    def _hashed_twice(self) -> set:
        """The hashes given more than once: any answer given twice is among
        them (and, rarely, two ids of one hash, which _twice_errors tells apart)."""
        hashes = self.id_hashes
        if len(hashes) >= timing.NUMPY_SORT_FROM:
            import numpy as np

            ordered = np.sort(np.frombuffer(hashes, dtype=np.int64))
            return set(ordered[1:][ordered[1:] == ordered[:-1]].tolist())
        ordered = sorted(hashes)
        return {a for a, b in pairwise(ordered) if a == b}

    def _timing_by_slice(self, slice_fields: Sequence[str]) -> dict:
        """Spec 004's timing summary for "all" and each slice; empty when
        the log holds no timing at all. With repeated attempts, "all" also
        gives each question's median E2E (spec 004: "with repeats, also
        report each question's median")."""
        if not self.timings.rows:
            return {}
        question_ids = None
        if self.repetitions > 1:
            question_ids = list(map(self.timing_questions.__getitem__, self.timing_question_codes))
        summaries = {"all": timing.timing_summary(self.timings, question_ids=question_ids)}
        for name, known, codes in zip(slice_fields, self.slice_values, self.slice_codes, strict=True):
            for value, code in sorted(known.items(), key=lambda item: str(item[0])):
                mask = bytes(row == code for row in codes)
                summaries[f"{name}={value}"] = timing.timing_summary(self.timings, rows=mask)
        return summaries

    def _twice_errors(self, combined: bool) -> Iterator[logfile.LineError]:
        """The error of each later line of a question answered twice, naming
        its first: the file is read again for these few questions (a run
        with such an error is refused, so its speed matters little)."""
        first: dict[str, int] = {}
        with open(self.path, "rb") as stream:
            for number, raw in enumerate(stream, start=1):
                try:
                    parsed = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    continue
                question_id = parsed.get("question_id") if type(parsed) is dict else None
                if type(question_id) is not str or (
                    question_id not in self.twice and hash(question_id) not in self.twice
                ):
                    continue
                record, problems = logfile.check_answer_line(
                    number, raw.removesuffix(b"\n"), repeats_a_run=self.repeats_a_run
                )
                if problems or (combined and logfile.question_errors(number, record, answer_checked=True)):
                    continue
                if question_id in first:
                    message = f"{question_id!r} already answered on line {first[question_id]}"
                    yield logfile.LineError(number, "question_id", message)
                else:
                    first[question_id] = number
