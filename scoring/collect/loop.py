"""The collection loop: every question asked R times, C at a time, and the
run log written as it goes, in set order, always as a valid prefix."""

from __future__ import annotations

import functools
import json
import queue
import signal
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from scoring.collect.replies import (
    _IN_FLIGHT,
    _NOT_SENT,
    _POLL_S,
    DEFAULT_TIMEOUT_S,
    MAX_CONCURRENCY,
    Assistant,
    AttemptFailed,
    CollectError,
    Reply,
)
from scoring.logfile import (
    MAX_REPETITIONS,
    MAX_TIMEOUT_S,
    PLANNED_REPETITIONS,
    answer_errors,
    holds_nul,
    label_problem,
)
from scoring.timing import STATUSES

# -- collecting ------------------------------------------------------------------


def _now() -> datetime:
    return datetime.now(UTC)


def _stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def clock_precision_ms() -> float:
    """The finest step this collector's timestamps tell apart, in ms: its
    clock's resolution (time.get_clock_info, the clock datetime.now reads),
    or the millisecond the stamps are written in when that is coarser."""
    return max(time.get_clock_info("time").resolution * 1000, 1.0)


def _line(
    question: Mapping,
    attempt: int,
    *,
    status: str,
    submitted: datetime | None,
    received: datetime | None = None,
    stopped: datetime | None = None,
    reason: str | None = None,
    reply: Reply | None = None,
) -> dict:
    line: dict = {
        "question_id": question["question_id"],
        "language": question["language"],
        "attempt": attempt,
        "status": status,
    }
    if reason is not None:
        line["status_reason"] = reason
    line["question"] = question["question"]
    if submitted is not None:
        line["submitted_at"] = _stamp(submitted)
    if received is not None:
        line["received_at"] = _stamp(received)
    if stopped is not None:
        line["stopped_at"] = _stamp(stopped)
    if reply is None:
        # No answer: it declined nothing, retrieved and cited nothing.
        line.update(answer=None, retrieved_ids=[], retrieved_values=[], cited_ids=[], declined=False)
        return line
    line.update(
        answer=reply.answer,
        retrieved_ids=reply.retrieved_ids,
        retrieved_values=reply.retrieved_values,
        cited_ids=reply.cited_ids,
        declined=reply.declined,
        **reply.extras,
    )
    return line


def _line_problem(line: dict, *, repetitions: int) -> str | None:
    """Why the app's reader would refuse ``line`` (None when it would not)."""
    errors = answer_errors(1, line, repetitions=repetitions)
    if errors:
        return "; ".join(
            f"{error.field}: {error.message}" if error.field else error.message for error in errors
        )
    if holds_nul(line):
        return "the response holds the NUL character (\\u0000), which cannot be stored"
    try:
        json.dumps(line, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return "the response holds text that is not valid Unicode (a lone surrogate)"
    return None


@dataclass(frozen=True, slots=True)
class _Job:
    question: Mapping
    attempt: int


@dataclass(slots=True)
class _InFlight:
    submitted: datetime
    deadline: float
    cancelled: threading.Event


@dataclass(frozen=True, slots=True)
class CollectSummary:
    """What a collection wrote to ``path``: ``attempts`` lines, counted by status."""

    path: Path
    attempts: int
    counts: dict[str, int]
    interrupted: bool = False

    @property
    def all_ok(self) -> bool:
        return self.counts.get("ok", 0) == self.attempts

    def describe(self) -> str:
        tally = ", ".join(f"{count} {status}" for status, count in self.counts.items() if count)
        return f"wrote {self.attempts} attempts to {self.path}: {tally}"


ProgressCallback = Callable[[int, int], None]


def collect(
    *,
    questions: Sequence[Mapping],
    assistant: Assistant,
    out: Path,
    assistant_version: str,
    set_version: str | None,
    repetitions: int = PLANNED_REPETITIONS,
    concurrency: int = 1,
    timeout_s: int = DEFAULT_TIMEOUT_S,
    overwrite: bool = False,
    progress: ProgressCallback | None = None,
    stop: threading.Event | None = None,
) -> CollectSummary:
    """Ask ``assistant`` each question ``repetitions`` times (spec 004's
    three unless told), ``concurrency``
    at a time, each attempt given up after ``timeout_s`` seconds, and write
    the run log to ``out``; return what was written.

    ``questions`` are normalised question-set records (scoring.logfile
    read_questions), each with its text in "question". ``progress`` hears
    (attempts done, attempts planned). Setting ``stop``, or Ctrl-C when this
    runs in the main thread, ends the collection early: unfinished attempts
    are written as "cancelled" and the summary says ``interrupted``.

    Refuses, with CollectError and before anything is sent: repetitions
    outside 1 to 100, concurrency outside 1 to 256, a timeout that is not a
    whole number of seconds from 1 to 86400, a version that is not a label,
    a question without text, and an ``out`` that exists (unless
    ``overwrite``) or whose folder does not."""
    _check_plan(
        questions=questions,
        assistant_version=assistant_version,
        set_version=set_version,
        repetitions=repetitions,
        concurrency=concurrency,
        timeout_s=timeout_s,
    )
    header = {"assistant_version": assistant_version}
    if set_version is not None:
        header["set_version"] = set_version
    # Every time in the log is stamped by this collector's clock: there is
    # no other clock to state a skew from, only its precision.
    header.update(repetitions=repetitions, timeout_s=timeout_s, clock_precision_ms=clock_precision_ms())
    if not out.parent.is_dir():
        raise CollectError(f"{out}: the folder {out.parent} does not exist")
    try:
        stream = open(out, "w" if overwrite else "x", encoding="utf-8")  # noqa: SIM115 - closed below
    except FileExistsError:
        raise CollectError(f"{out} already exists: choose another file or give --overwrite") from None
    except OSError as error:
        raise CollectError(f"{out}: cannot write it ({error.strerror or error})") from None
    stop = stop or threading.Event()
    in_main_thread = threading.current_thread() is threading.main_thread()
    if in_main_thread:
        previous_handler = signal.getsignal(signal.SIGINT)
        # Ctrl-C only sets stop: an exception raised between any two
        # statements could cut a line in half or lose one, and the partial
        # log must stay valid.
        signal.signal(signal.SIGINT, lambda signum, frame: stop.set())
    try:
        with stream:
            stream.write(json.dumps(header, ensure_ascii=False) + "\n")
            stream.flush()
            run = _Collection(
                questions=questions,
                assistant=assistant,
                stream=stream,
                repetitions=repetitions,
                concurrency=concurrency,
                timeout_s=timeout_s,
                progress=progress,
                stop=stop,
            )
            return run.run(out)
    finally:
        assistant.close()
        if in_main_thread:
            # None: the handler was not set from Python; the default is the nearest.
            signal.signal(signal.SIGINT, previous_handler if previous_handler is not None else signal.SIG_DFL)


def _check_plan(
    *,
    questions: Sequence[Mapping],
    assistant_version: str,
    set_version: str | None,
    repetitions: int,
    concurrency: int,
    timeout_s: int,
) -> None:
    if type(repetitions) is not int or not 1 <= repetitions <= MAX_REPETITIONS:
        raise CollectError(
            f"repetitions must be a whole number from 1 to {MAX_REPETITIONS}, not {repetitions}"
        )
    if type(concurrency) is not int or not 1 <= concurrency <= MAX_CONCURRENCY:
        raise CollectError(
            f"concurrency must be a whole number from 1 to {MAX_CONCURRENCY}, not {concurrency}"
        )
    if type(timeout_s) is not int or not 1 <= timeout_s <= MAX_TIMEOUT_S:
        # The run log's header holds whole seconds (scoring.logfile.plan_from_header).
        raise CollectError(
            f"the timeout must be a whole number of seconds from 1 to {MAX_TIMEOUT_S}, not {timeout_s}"
        )
    if problem := label_problem(assistant_version):
        raise CollectError(f"the assistant version {problem}")
    if set_version is not None and (problem := label_problem(set_version)):
        raise CollectError(f"the set version {problem}")
    if not questions:
        raise CollectError("the question set holds no questions")
    without_text = [
        question["question_id"] for question in questions if not str(question.get("question") or "").strip()
    ]
    if without_text:
        shown = ", ".join(map(repr, without_text[:5])) + (" …" if len(without_text) > 5 else "")
        raise CollectError(f"{len(without_text)} questions have no text to ask (field question): {shown}")


class _Collection:
    """One run: dispatches attempts to threads, gives up on those past their
    deadline, and writes lines in set order as soon as each is next."""

    def __init__(
        self,
        *,
        questions: Sequence[Mapping],
        assistant: Assistant,
        stream,
        repetitions: int,
        concurrency: int,
        timeout_s: int,
        progress: ProgressCallback | None,
        stop: threading.Event,
    ):
        self.jobs = [
            _Job(question, attempt) for question in questions for attempt in range(1, repetitions + 1)
        ]
        self.assistant = assistant
        self.stream = stream
        self.repetitions = repetitions
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self.progress = progress
        self.stop = stop
        self.lines: list[dict | None] = [None] * len(self.jobs)
        self.in_flight: dict[int, _InFlight] = {}
        self.results: queue.SimpleQueue[tuple[int, dict]] = queue.SimpleQueue()
        self.dispatched = 0
        self.written = 0
        self.done = 0

    def run(self, out: Path) -> CollectSummary:
        total = len(self.jobs)
        while self.done < total and not self.stop.is_set():
            while len(self.in_flight) < self.concurrency and self.dispatched < total:
                self._dispatch(self.dispatched)
                self.dispatched += 1
            self._wait_for_one()
            self._give_up_late_ones()
            self._write_ready()
            if self.progress:
                self.progress(self.done, total)
        interrupted = self.done < total
        if interrupted:
            self._cancel_the_rest()
            self._write_ready()
        counts = dict.fromkeys(STATUSES, 0)
        for line in self.lines:
            counts[line["status"]] += 1
        return CollectSummary(path=out, attempts=total, counts=counts, interrupted=interrupted)

    def _dispatch(self, index: int) -> None:
        job = self.jobs[index]
        cancelled = threading.Event()
        submitted = _now()
        self.in_flight[index] = _InFlight(submitted, time.monotonic() + self.timeout_s, cancelled)
        # Daemon threads: a request that hangs past its deadline is abandoned,
        # never waited for at exit.
        threading.Thread(
            target=self._attempt,
            args=(index, job, submitted, cancelled),
            name=f"collect-{index}",
            daemon=True,
        ).start()

    def _attempt(self, index: int, job: _Job, submitted: datetime, cancelled: threading.Event) -> None:
        # No startup_at: neither an endpoint nor a command reports when it
        # initialised, and the worker's own start is the submission, not a
        # startup (spec 004 names each event by what was captured).
        logged = functools.partial(_line, job.question, job.attempt, submitted=submitted)
        try:
            reply = self.assistant.ask(
                job.question, attempt=job.attempt, timeout_s=self.timeout_s, cancelled=cancelled
            )
        except AttemptFailed as failure:
            line = logged(status=failure.status, stopped=max(_now(), submitted), reason=failure.reason)
        except Exception as error:  # one attempt's failure must not end the run
            line = logged(
                status="error", stopped=max(_now(), submitted), reason=f"{type(error).__name__}: {error}"
            )
        else:
            received = max(_now(), submitted)
            line = logged(status="ok", received=received, reply=reply)
            if problem := _line_problem(line, repetitions=self.repetitions):
                line = logged(
                    status="error", stopped=received, reason=f"the reply cannot be logged: {problem}"
                )
        self.results.put((index, line))

    def _wait_for_one(self) -> None:
        if not self.in_flight:
            return
        next_deadline = min(flight.deadline for flight in self.in_flight.values())
        wait = min(_POLL_S, max(0.0, next_deadline - time.monotonic()))
        try:
            index, line = self.results.get(timeout=wait)
        except queue.Empty:
            return
        self._record(index, line)
        # Take every other answer already waiting, without sleeping again.
        while True:
            try:
                index, line = self.results.get_nowait()
            except queue.Empty:
                return
            self._record(index, line)

    def _record(self, index: int, line: dict) -> None:
        # An answer that arrives after its attempt was given up on is not its result.
        if self.in_flight.pop(index, None) is not None:
            self.lines[index] = line
            self.done += 1

    def _give_up_late_ones(self) -> None:
        now = time.monotonic()
        for index, flight in list(self.in_flight.items()):
            if now >= flight.deadline:
                flight.cancelled.set()
                job = self.jobs[index]
                self.lines[index] = _line(
                    job.question,
                    job.attempt,
                    status="timeout",
                    submitted=flight.submitted,
                    stopped=max(_now(), flight.submitted),
                    reason=f"no answer within the timeout of {self.timeout_s} s",
                )
                del self.in_flight[index]
                self.done += 1

    def _cancel_the_rest(self) -> None:
        # Answers that arrived before the stop are kept as they are.
        while True:
            try:
                index, line = self.results.get_nowait()
            except queue.Empty:
                break
            self._record(index, line)
        stopped = _now()
        for index, job in enumerate(self.jobs):
            if self.lines[index] is not None:
                continue
            flight = self.in_flight.pop(index, None)
            if flight is not None:
                flight.cancelled.set()
                self.lines[index] = _line(
                    job.question,
                    job.attempt,
                    status="cancelled",
                    submitted=flight.submitted,
                    stopped=max(stopped, flight.submitted),
                    reason=_IN_FLIGHT,
                )
            else:
                self.lines[index] = _line(
                    job.question, job.attempt, status="cancelled", submitted=None, reason=_NOT_SENT
                )

    def _write_ready(self) -> None:
        wrote = False
        while self.written < len(self.lines) and self.lines[self.written] is not None:
            self.stream.write(json.dumps(self.lines[self.written], ensure_ascii=False) + "\n")
            self.written += 1
            wrote = True
        if wrote:
            self.stream.flush()
