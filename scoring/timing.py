"""Time and tool calls of logged answers, measured as spec 004 defines them.

End-to-end (E2E) time is the receiver's: the complete final answer received
minus the question submitted, in seconds. Every other captured moment (startup,
first progress, first token, model text done, runner done) keeps its own name and is
never used in place of another, and a platform's own creation and send
receipts give a separate figure marked as a proxy. An answer without a final
answer (timeout, error, cancellation, quota refusal) is no latency sample: it
is counted as a failure with the time it waited until it stopped. A value that
was not logged is missing, never 0, and summaries say how many are missing.

P50 is the median (the mean of the middle two for an even count) and P90 the
nearest-rank percentile, the ⌈0.9·n⌉-th sorted value, so it is always a time
one answer really took.
"""

from __future__ import annotations

import json
import math
import sys
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from itertools import compress, filterfalse
from operator import and_, attrgetter, itemgetter

import msgspec

from scoring.stats.rates import ClusterSums, Rate, counted_rate

UNIT = "seconds"

STATUSES = ("ok", "error", "timeout", "cancelled", "refused_quota")
FAILURE_STATUSES = STATUSES[1:]

# Each named event's offset from submitted_at, and the field it is read from.
EVENTS = {
    "startup_s": "startup_at",
    "first_progress_s": "first_progress_at",
    "first_token_s": "first_token_at",
    "model_done_s": "model_done_at",
    "runner_done_s": "runner_done_at",
}
TIMESTAMP_FIELDS = (
    "submitted_at",
    "received_at",
    *EVENTS.values(),
    "platform_created_at",
    "platform_sent_at",
    "stopped_at",
)

E2E_SOURCES = ("timestamps", "latency_ms")

# Channel overhead (spec 004): work an agent set up for a chat channel still
# does when called directly. Each kind is logged as an event with its start
# and end, and E2E can exclude it by a recorded choice.
OVERHEAD_KINDS = ("card_assembly", "channel_detection", "link_resolution")
OVERHEAD_NAMES = {kind: f"{kind}_s" for kind in OVERHEAD_KINDS}
OVERHEAD_WORDS = ", ".join(kind.replace("_", " ") for kind in OVERHEAD_KINDS)
TOOL_CALL_SOURCES = ("unique ids",)

LABELS = {
    "e2e": "end-to-end time: complete final answer received − question submitted (receiver side)",
    "e2e:timestamps": "from the logged submitted_at and received_at",
    "e2e:latency_ms": "from the duration the runner logged (latency_ms)",
    "platform_e2e": "platform E2E (proxy): platform's final send − its creation; not receiver-side E2E",
    "startup_s": "startup (platform or agent initialised) − question submitted (not yet any progress)",
    "first_progress_s": "first progress message − question submitted (not the final answer)",
    "first_token_s": "first token − question submitted",
    "model_done_s": "model text finished − question submitted (not yet delivered)",
    "runner_done_s": "runner finished − question submitted (not yet confirmed delivered)",
    "wait_s": "waiting time of answers without a final answer: stopped − question submitted",
    "tool_calls": "tool calls per delivered answer",
    "tool_span_s": "span from first to last tool event",
    "e2e_without_overhead": "end-to-end time less the answer's channel overhead (never below 0)",
    "overhead_s": f"channel overhead of an answer ({OVERHEAD_WORDS}), overlapping events counted once",
    "card_assembly_s": "card assembly",
    "channel_detection_s": "channel detection",
    "link_resolution_s": "link resolution",
}

TOOL_CALL_COVERAGE = (
    "Tool calls are counted by unique call id among the events the platform exposes; calls made "
    "inside sub-agents whose events it does not expose are not counted. One shell call may run "
    "several commands. Tool calls describe the execution path; they are not model calls or tokens."
)
TOOL_SPAN_NOTE = (
    "The span from the first to the last tool event includes reasoning, waiting and calls running "
    "at the same time, so it is not the time spent in tools."
)


def _shown(value: object) -> str:
    """A value quoted for a message as JSON writes it, cut short."""
    if isinstance(value, str):
        return json.dumps(value[:60], ensure_ascii=False) + ("…" if len(value) > 60 else "")
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text[:60] + ("…" if len(text) > 60 else "")


def parse_timestamp(value: str) -> datetime:
    """The aware datetime an ISO 8601 timestamp names, such as
    2026-03-01T10:00:00Z or 2026-03-01T11:00:00.250+01:00.

    Refuses, with ValueError, a value that is not text, text that is not a
    timestamp, and a timestamp without a time zone (it could be any of 26
    hours, so no time can be measured from it)."""
    if not isinstance(value, str):
        raise ValueError(f"{_shown(value)} is not a timestamp: write it as text such as 2026-03-01T10:00:00Z")
    try:
        moment = _from_iso(value)
    except ValueError:
        raise ValueError(
            f"{_shown(value)} is not an ISO 8601 timestamp: write it as 2026-03-01T10:00:00Z or with +01:00"
        ) from None
    # fromisoformat gives a fixed offset whenever the text names one.
    if moment.tzinfo is None:
        raise ValueError(f"{_shown(value)} has no time zone: write it as 2026-03-01T10:00:00Z or with +01:00")
    return moment


_from_iso = datetime.fromisoformat


@dataclass(frozen=True, slots=True)
class AnswerTiming:
    """What one answer line says about time and tool calls, in seconds.

    ``None`` means not logged (or, for the delivery figures of a failure, not
    a sample), never 0. ``e2e_source`` says where ``e2e_s`` came from
    ("timestamps" or "latency_ms"); ``tool_calls_source`` whether
    ``tool_calls`` counts unique ids or repeats a number the runner logged."""

    status: str = "ok"
    e2e_s: float | None = None
    e2e_source: str | None = None
    platform_e2e_s: float | None = None
    startup_s: float | None = None
    first_progress_s: float | None = None
    first_token_s: float | None = None
    model_done_s: float | None = None
    runner_done_s: float | None = None
    wait_s: float | None = None
    tool_calls: int | None = None
    tool_calls_source: str | None = None
    tool_span_s: float | None = None
    # Channel overhead: the merged length of the answer's overhead events,
    # each kind's, and E2E less the merged length (None: no overhead logged).
    overhead_s: float | None = None
    card_assembly_s: float | None = None
    channel_detection_s: float | None = None
    link_resolution_s: float | None = None
    e2e_without_overhead_s: float | None = None

    @property
    def delivered(self) -> bool:
        return self.status == "ok"


class TimingError(ValueError):
    """An answer line whose timing cannot be read; ``problems`` lists every
    (field, message) found."""

    def __init__(self, problems: list[tuple[str, str]]):
        self.problems = problems
        super().__init__("; ".join(f"{field}: {message}" for field, message in problems))


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# The fields of a tool call as runners usually log them.
_CALL_FIELDS = frozenset({"id", "name", "started_at", "ended_at"})


def _usual_call(call: object, moments: list[datetime]) -> bool:
    """True, with its moments kept, for a valid call of the usual fields;
    anything else is left to the full check, which names each problem."""
    if type(call) is not dict or not call.keys() <= _CALL_FIELDS:
        return False
    call_id, name = call.get("id"), call.get("name", "")
    if type(call_id) is not str or not call_id or call_id.isspace() or type(name) is not str:
        return False
    started, ended = call.get("started_at"), call.get("ended_at")
    try:
        started = None if started is None else _from_iso(started)
        ended = None if ended is None else _from_iso(ended)
    except (TypeError, ValueError):
        return False
    if (started is not None and started.tzinfo is None) or (ended is not None and ended.tzinfo is None):
        return False
    if started is not None and ended is not None and ended < started:
        return False
    moments.extend(moment for moment in (started, ended) if moment is not None)
    return True


def _tool_call_errors(calls: object, moments: list[datetime] | None = None) -> list[tuple[str, str]]:
    """The problems of a line's tool calls; ``moments``, when given, receives
    every call's parsed ``*_at`` timestamp."""
    if type(calls) is not list:
        return [("tool_calls", f"must be a list of tool calls, each with its id, not {_shown(calls)}")]
    problems = []
    if moments is None:
        moments = []
    for index, call in enumerate(calls):
        if _usual_call(call, moments):
            continue
        if type(call) is not dict:
            problems.append((f"tool_calls[{index}]", "must be an object with the call's id"))
            continue
        call_id = call.get("id")
        if type(call_id) is not str or not call_id or call_id.isspace():
            problems.append(
                (
                    f"tool_calls[{index}].id",
                    "missing or not a text id: repeated events of one call are told apart by it",
                )
            )
        if "name" in call and type(call["name"]) is not str:
            problems.append((f"tool_calls[{index}].name", "must be text"))
        started = ended = None
        for key, value in call.items():
            if value is None or not key.endswith("_at"):
                continue
            try:
                moment = parse_timestamp(value)
            except ValueError as error:
                problems.append((f"tool_calls[{index}].{key}", str(error)))
                continue
            moments.append(moment)
            if key == "started_at":
                started = moment
            elif key == "ended_at":
                ended = moment
        if started is not None and ended is not None and ended < started:
            problems.append(
                (f"tool_calls[{index}].ended_at", "is before started_at: check the clocks and time zones")
            )
    return problems


def _overhead_errors(events: object, intervals: list) -> list[tuple[str, str]]:
    """The problems of a line's overhead events; ``intervals`` receives each
    valid event as (kind, started, ended)."""
    if type(events) is not list:
        return [
            (
                "overhead",
                f"must be a list of overhead events, each with its kind, started_at and ended_at, "
                f"not {_shown(events)}",
            )
        ]
    problems = []
    for index, event in enumerate(events):
        where = f"overhead[{index}]"
        if type(event) is not dict:
            problems.append((where, "must be an object with kind, started_at and ended_at"))
            continue
        kind = event.get("kind")
        if kind not in OVERHEAD_KINDS:
            problems.append(
                (f"{where}.kind", f"must be one of {', '.join(OVERHEAD_KINDS)}, not {_shown(kind)}")
            )
        moments = {}
        for key in ("started_at", "ended_at"):
            value = event.get(key)
            if value is None:
                problems.append((f"{where}.{key}", "missing: an overhead event needs its start and end"))
                continue
            try:
                moments[key] = parse_timestamp(value)
            except ValueError as error:
                problems.append((f"{where}.{key}", str(error)))
        if len(moments) < 2:
            continue
        if moments["ended_at"] < moments["started_at"]:
            problems.append((f"{where}.ended_at", "is before started_at: check the clocks and time zones"))
        elif kind in OVERHEAD_KINDS:
            intervals.append((kind, moments["started_at"], moments["ended_at"]))
    return problems


def merged_seconds(intervals: Iterable[tuple[datetime, datetime]]) -> float:
    """The length in seconds of the union of (start, end) intervals: time
    covered by two overlapping intervals is counted once."""
    total = 0.0
    current_start = current_end = None
    for start, end in sorted(intervals):
        if current_end is None or start > current_end:
            if current_end is not None:
                total += (current_end - current_start).total_seconds()
            current_start, current_end = start, end
        elif end > current_end:
            current_end = end
    if current_end is not None:
        total += (current_end - current_start).total_seconds()
    return total


def e2e_without_overhead(e2e_s: float | None, overhead_s: float | None) -> float | None:
    """E2E less an answer's channel overhead (its merged length), never below
    0; E2E itself when no overhead was logged, None without an E2E. The one
    definition of E2E with overhead excluded."""
    if e2e_s is None:
        return None
    return e2e_s if overhead_s is None else max(0.0, e2e_s - overhead_s)


def timing_errors(record: Mapping, moments: dict | None = None) -> list[tuple[str, str]]:
    """Every problem with the timing fields of one answer line, as (field,
    message) pairs, without raising; empty when the line can be measured.

    It refuses timestamps that are not text, not ISO 8601 or have no time
    zone; received_at, a named event or stopped_at before submitted_at, and
    platform_sent_at before platform_created_at; a latency_ms that is not a
    finite number of at least 0; an unknown status; tool calls that are not a
    list of objects with text ids (or a count of at least 0), and a tool call
    that ends before it starts; overhead that is not a list of events of a
    known kind (card_assembly, channel_detection, link_resolution) with both
    started_at and ended_at, and an event that ends before it starts.

    ``moments``, when given, receives each timestamp parsed (by field name,
    and the tool calls' under "tool_calls"), so that ``answer_timing`` need
    not parse them again."""
    problems: list[tuple[str, str]] = []
    if moments is None:
        moments = {}
    for field in TIMESTAMP_FIELDS:
        value = record.get(field)
        if value is not None:
            try:
                moments[field] = parse_timestamp(value)
            except ValueError as error:
                problems.append((field, str(error)))
    problems.extend(order_problems(moments))
    latency = record.get("latency_ms")
    if latency is not None:
        if not _is_number(latency) or not math.isfinite(latency):
            problems.append(("latency_ms", f"must be a number of milliseconds, not {_shown(latency)}"))
        elif latency < 0:
            problems.append(("latency_ms", f"must not be negative, not {latency}"))
    status = record.get("status")
    if status is not None and status not in STATUSES:
        problems.append(("status", f"must be one of {', '.join(STATUSES)}, not {_shown(status)}"))
    calls = record.get("tool_calls")
    if calls is not None:
        call_moments: list[datetime] = []
        problems.extend(_tool_call_errors(calls, call_moments))
        moments["tool_calls"] = call_moments
    overhead = record.get("overhead")
    if overhead is not None:
        intervals: list = []
        problems.extend(_overhead_errors(overhead, intervals))
        moments["overhead"] = intervals
    return problems


def checked_moments(record: Mapping) -> dict:
    """The moments timing_errors keeps (each timestamp parsed, by field, and
    the tool calls' under "tool_calls"), of a line that passed it already, a
    stored run's: parsed without the checks, which cost a scoring chunk as
    much again. The tool calls' come in the order written (timing_errors may
    put a call's start first): only their span is taken from them. A line
    with overhead events is left to timing_errors."""
    if record.get("overhead") is not None:
        moments: dict = {}
        timing_errors(record, moments)
        return moments
    moments = {field: _from_iso(record[field]) for field in TIMESTAMP_FIELDS if record.get(field) is not None}
    calls = record.get("tool_calls")
    if calls is not None:
        moments["tool_calls"] = [
            _from_iso(value)
            for call in calls
            for key, value in call.items()
            if value is not None and key.endswith("_at")
        ]
    return moments


_AFTER_SUBMITTED = ("received_at", *EVENTS.values(), "stopped_at")
_AFTER_SUBMITTED_SET = frozenset(_AFTER_SUBMITTED)


def _any_before(moments: Mapping, submitted) -> bool:
    # A loop, not any() over a generator: half the time, on every line stored.
    for field in _AFTER_SUBMITTED_SET.intersection(moments):  # noqa: SIM110
        if moments[field] < submitted:
            return True
    return False


def order_problems(moments: Mapping) -> list[tuple[str, str]]:
    """The line's timestamps (parsed, by field) out of order: an event
    before the question was sent, or the platform's send before its
    creation."""
    problems = []
    submitted = moments.get("submitted_at")
    # Looked for among the moments there are first: most lines have a few, in order.
    if submitted is not None and _any_before(moments, submitted):
        for field in _AFTER_SUBMITTED:
            if field in moments and moments[field] < submitted:
                problems.append(
                    (
                        field,
                        "is before submitted_at: nothing can happen before the question is sent; "
                        "check the clocks and time zones",
                    )
                )
    created, sent = moments.get("platform_created_at"), moments.get("platform_sent_at")
    if created is not None and sent is not None and sent < created:
        problems.append(("platform_sent_at", "is before platform_created_at: check the platform's receipts"))
    return problems


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    return None if start is None or end is None else (end - start).total_seconds()


def _tool_calls(calls: list, moments: list[datetime]) -> tuple[int, str, float | None]:
    ids = {call["id"] for call in calls}
    span = (max(moments) - min(moments)).total_seconds() if len(moments) >= 2 else None
    return len(ids), "unique ids", span


def answer_timing(record: Mapping, *, validated: bool = False, moments: dict | None = None) -> AnswerTiming:
    """The timing of one answer line (see AnswerTiming). ``validated`` skips
    the checks for a line already checked (a stored run's); ``moments`` are
    the timestamps timing_errors parsed when it checked the line.

    E2E comes from submitted_at and received_at when both were logged, else
    from latency_ms (the duration the runner measured), else it is missing.
    A line whose status is not "ok" gets no E2E or platform E2E (it delivered
    no final answer) but its waiting time, stopped_at − submitted_at, when
    both were logged. Refuses, with TimingError (a ValueError), any line
    timing_errors finds a problem with."""
    if moments is None:
        moments = {}
        problems = timing_errors(record, moments)
        if problems and not validated:
            raise TimingError(problems)
    return AnswerTiming(*timing_row(record, moments))


def timing_row(record: Mapping, moments: dict) -> tuple:
    """The figures of answer_timing as a plain tuple in AnswerTiming's field
    order, from the timestamps timing_errors parsed (``moments``): the
    scorer keeps millions of these, and a tuple costs a fraction of the object."""
    status = record.get("status") or "ok"
    submitted = moments.get("submitted_at")
    if submitted is not None and len(moments) > 1:
        events = [
            None if (moment := moments.get(field)) is None else (moment - submitted).total_seconds()
            for field in _EVENT_FIELDS
        ]
    else:
        events = [None] * len(_EVENT_FIELDS)
    calls = record.get("tool_calls")
    if calls is None:
        tool_calls = tool_calls_source = tool_span = None
    else:
        tool_calls, tool_calls_source, tool_span = _tool_calls(calls, moments["tool_calls"])
    overhead = _overhead(moments["overhead"]) if record.get("overhead") is not None else _NO_OVERHEAD
    if status != "ok":
        wait = _seconds(submitted, moments.get("stopped_at"))
        return (
            status,
            None,
            None,
            None,
            *events,
            wait,
            tool_calls,
            tool_calls_source,
            tool_span,
            *overhead,
            None,
        )
    e2e, source = _seconds(submitted, moments.get("received_at")), "timestamps"
    if e2e is None:
        latency = record.get("latency_ms")
        e2e, source = (None, None) if latency is None else (latency / 1000, "latency_ms")
    platform = _seconds(moments.get("platform_created_at"), moments.get("platform_sent_at"))
    return (
        status,
        e2e,
        source,
        platform,
        *events,
        None,
        tool_calls,
        tool_calls_source,
        tool_span,
        *overhead,
        e2e_without_overhead(e2e, overhead[0]),
    )


_NO_OVERHEAD = (None,) * (1 + len(OVERHEAD_KINDS))


def _overhead(intervals: list) -> tuple:
    """The merged overhead of one answer and each kind's, in seconds (a kind
    the answer logged no event of is None)."""
    by_kind = [
        [(start, end) for logged, start, end in intervals if logged == kind] for kind in OVERHEAD_KINDS
    ]
    return (
        merged_seconds((start, end) for _, start, end in intervals),
        *(merged_seconds(spans) if spans else None for spans in by_kind),
    )


_EVENT_FIELDS = tuple(EVENTS.values())


@dataclass(frozen=True, slots=True)
class Summary:
    """n samples of one definition: their mean, P50 (median), P90 (nearest
    rank), min and max, all None when n is 0."""

    n: int
    mean: float | None = None
    p50: float | None = None
    p90: float | None = None
    min: float | None = None
    max: float | None = None

    def as_dict(self) -> dict:
        return asdict(self)


def summarise(values: Sequence[float]) -> Summary:
    """The Summary of ``values``: P50 is the median (the mean of the middle
    two for an even count), P90 the ⌈0.9·n⌉-th sorted value; no values give
    n = 0 and None figures. Refuses (ValueError) None, NaN and infinities: a
    missing value is counted as missing, not summarised."""
    if not _all_finite(values):
        raise ValueError("a summary takes only measured values: count a missing one as missing instead")
    if len(values) == 0:
        return Summary(n=0)
    samples = _sorted(values)
    count = len(samples)
    return Summary(
        n=count,
        mean=math.fsum(samples) / count,
        p50=float(_median(samples)),
        # The nearest rank, the ⌈0.9·n⌉-th sorted value, in whole numbers.
        p90=float(samples[(9 * count + 9) // 10 - 1]),
        min=float(samples[0]),
        max=float(samples[-1]),
    )


# Above this many values, numpy sorts them in place of a list of a million
# float objects (8 bytes each instead of 32); both give the same order.
NUMPY_SORT_FROM = 50_000


def _median(samples: Sequence[float]) -> float:
    """The median of sorted ``samples`` (at least one): the middle one, or the
    mean of the middle two for an even count, as statistics.median."""
    middle = len(samples) // 2
    return samples[middle] if len(samples) % 2 else (samples[middle - 1] + samples[middle]) / 2


def _all_finite(values: Sequence[float]) -> bool:
    # A scoring's million timings are doubles: numpy looks at them at once
    # (half of adding up a 1M-answer scoring asked each in turn).
    if isinstance(values, array) and values.typecode == "d" and len(values) >= NUMPY_SORT_FROM:
        import numpy as np

        return bool(np.isfinite(np.frombuffer(values, dtype=np.float64)).all())
    return not any(value is None or not math.isfinite(value) for value in values)


def _sorted(values: Sequence[float]) -> Sequence[float]:
    if isinstance(values, array) and len(values) >= NUMPY_SORT_FROM:
        import numpy as np

        return np.sort(np.frombuffer(values, dtype=np.float64))
    return sorted(values)


def _per_question(pairs: Iterable[tuple[str, float | None]], attempts: dict[str, int]) -> dict:
    samples: dict[str, list[float]] = {question_id: [] for question_id in attempts}
    for question_id, value in pairs:
        if value is not None:
            samples[question_id].append(value)
    per_question = {
        question_id: {
            "attempts": attempts[question_id],
            "samples": len(values),
            "median_s": float(_median(sorted(values))) if values else None,
        }
        for question_id, values in samples.items()
    }
    medians = [entry["median_s"] for entry in per_question.values() if entry["median_s"] is not None]
    return {
        "per_question": per_question,
        "question_medians": summarise(medians).as_dict(),
        "questions_without_sample": len(per_question) - len(medians),
    }


def slowest_questions(per_question: Mapping[str, Mapping]) -> list[dict]:
    """The questions of a summary's ``per_question`` (one E2E source's) as
    rows of question_id, median_s, samples and attempts: slowest median
    first, equal medians by question id, and the questions with no sample
    (every attempt failed or logged no time) last, their median None. The
    one order the CLI, the run page and its export list questions in."""
    rows = [{"question_id": question_id, **entry} for question_id, entry in per_question.items()]
    rows.sort(key=itemgetter("question_id"))
    rows.sort(key=lambda row: -math.inf if row["median_s"] is None else row["median_s"], reverse=True)
    return [{key: row[key] for key in ("question_id", "median_s", "samples", "attempts")} for row in rows]


TIMING_NAMES = tuple(AnswerTiming.__dataclass_fields__)
_as_row = attrgetter(*TIMING_NAMES)
_STATUS_CODES = {status: code for code, status in enumerate(STATUSES)}
_E2E_SOURCE_CODES = {None: 0, **{source: code for code, source in enumerate(E2E_SOURCES, start=1)}}

# The figures of AnswerTiming that are numbers, kept as columns.
NUMBER_FIELDS = (
    "e2e_s",
    "platform_e2e_s",
    *EVENTS,
    "wait_s",
    "tool_calls",
    "tool_span_s",
    "overhead_s",
    *OVERHEAD_NAMES.values(),
    "e2e_without_overhead_s",
)
_NAN = float("nan")


def _selector(codes: Sequence[int]) -> bytes:
    """A bytes.translate table that maps each of ``codes`` to 1, the rest to 0."""
    return bytes(int(code in codes) for code in range(256))


class TimingColumns:
    """The timing of many answer lines, in line order, as columns: each
    number an array of doubles (NaN where it was not logged, and no array at
    all when no line logged it), status and sources as one byte each. A
    million lines cost tens of megabytes instead of the hundreds their
    AnswerTiming objects would."""

    def __init__(self):
        self.rows = 0
        self.status = bytearray()  # index into STATUSES
        self.e2e_source = bytearray()  # 0: none, else 1 + index into E2E_SOURCES
        self.counted_calls = bytearray()  # 1: a delivered answer whose tool calls were counted by id
        self.numbers: dict[str, array] = {}

    @classmethod
    def from_rows(cls, rows: Sequence[tuple]) -> TimingColumns:
        """Columns of timing rows (see timing_row), built a column at a time."""
        table = cls()
        if not rows:
            return table
        columns = dict(zip(TIMING_NAMES, zip(*rows, strict=True), strict=True))
        table.rows = len(rows)
        table.status = bytearray(map(_STATUS_CODES.__getitem__, columns["status"]))
        table.e2e_source = bytearray(map(_E2E_SOURCE_CODES.__getitem__, columns["e2e_source"]))
        table.counted_calls = bytearray(
            status == "ok" and source is not None
            for status, source in zip(columns["status"], columns["tool_calls_source"], strict=True)
        )
        for name in NUMBER_FIELDS:
            column = columns[name]
            if column.count(None) < len(column):
                table.numbers[name] = array("d", [_NAN if value is None else value for value in column])
        return table

    @classmethod
    def of(cls, timings: Iterable[AnswerTiming]) -> TimingColumns:
        return cls.from_rows([_as_row(timing) for timing in timings])

    def to_bytes(self) -> bytes:
        """The columns as one msgpack document (doubles little-endian), for
        a worker to store and another, on any machine, to read back with
        from_bytes: a chunk's timing, added up without reading every
        answer's figures back out of JSON."""
        return msgspec.msgpack.encode(
            {
                "rows": self.rows,
                "status": bytes(self.status),
                "e2e_source": bytes(self.e2e_source),
                "counted_calls": bytes(self.counted_calls),
                "numbers": {name: _little_endian(column).tobytes() for name, column in self.numbers.items()},
            }
        )

    @classmethod
    def from_bytes(cls, data: bytes) -> TimingColumns:
        stored = msgspec.msgpack.decode(data)
        table = cls()
        table.rows = stored["rows"]
        table.status = bytearray(stored["status"])
        table.e2e_source = bytearray(stored["e2e_source"])
        table.counted_calls = bytearray(stored["counted_calls"])
        for name, raw in stored["numbers"].items():
            column = array("d")
            column.frombytes(raw)
            table.numbers[name] = _little_endian(column)
        return table

    def extend(self, other: TimingColumns) -> None:
        """Add ``other``'s lines after these."""
        for name in self.numbers.keys() | other.numbers.keys():
            mine = self.numbers.setdefault(name, array("d", [_NAN]) * self.rows)
            mine.extend(other.numbers.get(name) or array("d", [_NAN]) * other.rows)
        self.status += other.status
        self.e2e_source += other.e2e_source
        self.counted_calls += other.counted_calls
        self.rows += other.rows

    def values(self, name: str, mask: bytes) -> array:
        """The logged values of ``name`` on the rows ``mask`` marks with 1."""
        column = self.numbers.get(name)
        if column is None:
            return array("d")
        return array("d", filterfalse(math.isnan, compress(column, mask)))

    def row_values(self, name: str, mask: bytes) -> list[float | None]:
        """``name`` on every row, None where it was not logged or ``mask`` has 0."""
        column = self.numbers.get(name) or array("d", [_NAN]) * self.rows
        return [
            value if selected and value == value else None
            for value, selected in zip(column, mask, strict=True)
        ]


def _little_endian(column: array) -> array:
    """``column`` in little-endian order, the stored one: itself on a
    little-endian machine, a swapped copy (either way) on a big-endian one."""
    if sys.byteorder == "little":
        return column
    swapped = array("d", column)
    swapped.byteswap()
    return swapped


def _source_name(sources: list[str]) -> str | None:
    return None if not sources else sources[0] if len(sources) == 1 else "mixed"


_DELIVERED = _selector((0,))
_FAILED = _selector(range(1, len(STATUSES)))


def timing_summary(
    timings: Sequence[AnswerTiming] | TimingColumns,
    *,
    question_ids: Sequence[str] | None = None,
    rows: bytes | None = None,
) -> dict:
    """Time and tool-call figures of a run, as plain JSON-ready data in seconds.

    Latency figures (E2E, platform E2E, named events, tool calls and span) are
    over delivered answers (status "ok") only; each gives n and the count of
    delivered answers missing it. E2E is summarised for each source it came
    from ("timestamps", "latency_ms") and never pooled across them; ``source``
    is the one used, "mixed" or None. Failures are counted by status out of
    all ``attempts`` with the summary of their waiting times. With
    ``question_ids`` (one per timing, in order: repeats of a question share
    it), each E2E source also gives every question's median and a summary of
    those medians. Refuses (ValueError) question_ids of another length.

    ``rows``, given with TimingColumns, marks with 1 the rows to summarise
    (a slice of the run's answers) without copying them."""
    table = timings if isinstance(timings, TimingColumns) else TimingColumns.of(timings)
    if question_ids is not None and len(question_ids) != table.rows:
        raise ValueError(f"{len(question_ids)} question ids for {table.rows} answers: give one per answer")

    def within(mask: bytes) -> bytes:
        return mask if rows is None else bytes(map(and_, mask, rows))

    total = table.rows if rows is None else rows.count(1)
    delivered_mask = within(table.status.translate(_DELIVERED))
    failed_mask = within(table.status.translate(_FAILED))
    delivered = delivered_mask.count(1)

    def measure(name: str, mask: bytes, n: int, label: str) -> dict:
        present = table.values(name, mask)
        return {"label": label, **summarise(present).as_dict(), "missing": n - len(present)}

    with_overhead = "overhead_s" in table.numbers

    def e2e_block(name: str, label: str) -> dict:
        by_source = {}
        for code, source in enumerate(E2E_SOURCES, start=1):
            mask = within(table.e2e_source.translate(_selector((code,))))
            if 1 in mask:
                figure = {"label": LABELS[f"e2e:{source}"], **summarise(table.values(name, mask)).as_dict()}
                if with_overhead and name == "e2e_s":
                    figure["overhead_share"] = _overhead_share(table, mask)
                by_source[source] = (mask, figure)
        block = {
            "label": label,
            "source": None if not by_source else "mixed" if len(by_source) > 1 else next(iter(by_source)),
            "by_source": {source: figure for source, (_, figure) in by_source.items()},
            "missing": delivered - sum(figure["n"] for _, figure in by_source.values()),
        }
        if question_ids is not None:
            attempts: dict[str, int] = {}
            for question_id in question_ids:
                attempts[question_id] = attempts.get(question_id, 0) + 1
            for mask, figure in by_source.values():
                values = table.row_values(name, mask)
                figure.update(_per_question(zip(question_ids, values, strict=True), attempts))
        return block

    e2e = e2e_block("e2e_s", LABELS["e2e"])

    failures = {
        "n": total,
        "counts": {
            status: within(table.status.translate(_selector((code,)))).count(1)
            for code, status in enumerate(STATUSES)
            if code
        },
        "wait": measure("wait_s", failed_mask, total - delivered, LABELS["wait_s"]),
    }
    if question_ids is not None:
        # A question's attempts time out together more often than apart: its
        # attempts are one cluster of the timeout and failure rates.
        timeouts = within(table.status.translate(_selector((STATUSES.index("timeout"),))))
        failures["clusters"] = {
            "timeout": _question_sums(question_ids, timeouts, within(b"\x01" * table.rows)),
            "failed": _question_sums(question_ids, failed_mask, within(b"\x01" * table.rows)),
        }

    counted = within(bytes(table.counted_calls))
    tool_calls = table.values("tool_calls", counted)
    by_source = (
        {"unique ids": {"label": "unique call ids per answer", **summarise(tool_calls).as_dict()}}
        if 1 in counted
        else {}
    )
    overhead = {}
    if with_overhead:
        overhead = {
            "e2e_without_overhead": e2e_block("e2e_without_overhead_s", LABELS["e2e_without_overhead"]),
            "overhead": {
                **measure("overhead_s", delivered_mask, delivered, LABELS["overhead_s"]),
                "total": math.fsum(table.values("overhead_s", delivered_mask)),
                "by_kind": {
                    kind: {
                        **measure(name, delivered_mask, delivered, LABELS[name]),
                        "total": math.fsum(table.values(name, delivered_mask)),
                    }
                    for kind, name in OVERHEAD_NAMES.items()
                },
            },
        }
    return {
        "unit": UNIT,
        "attempts": total,
        "delivered": delivered,
        "e2e": e2e,
        **overhead,
        "platform_e2e": {
            **measure("platform_e2e_s", delivered_mask, delivered, LABELS["platform_e2e"]),
            "proxy": True,
        },
        "events": {name: measure(name, delivered_mask, delivered, LABELS[name]) for name in EVENTS},
        "failures": failures,
        "tool_calls": {
            "label": LABELS["tool_calls"],
            "source": "unique ids" if by_source else None,
            "by_source": by_source,
            "missing": delivered - len(tool_calls) if by_source else delivered,
            "coverage": TOOL_CALL_COVERAGE,
            "span": {
                **measure("tool_span_s", delivered_mask, delivered, LABELS["tool_span_s"]),
                "note": TOOL_SPAN_NOTE,
            },
        },
    }


def _overhead_share(table: TimingColumns, mask: bytes) -> float | None:
    """The share of E2E time that was channel overhead, over the rows
    ``mask`` marks that have an E2E: the time excluding overhead would take
    off, over their E2E time; None when that time is 0."""
    with_e2e = table.row_values("e2e_s", mask)
    without = table.row_values("e2e_without_overhead_s", mask)
    total = math.fsum(value for value in with_e2e if value is not None)
    if not total:
        return None
    removed = math.fsum(e2e - net for e2e, net in zip(with_e2e, without, strict=True) if e2e is not None)
    return removed / total


def _question_sums(question_ids: Sequence[str], hits: bytes, rows: bytes) -> dict[str, int]:
    """The cluster sums (scoring.stats.rates.ClusterSums) of the rows marked
    in ``hits`` among those in ``rows``, by question."""
    k: dict[str, int] = {}
    n: dict[str, int] = {}
    for question_id, hit, counted in zip(question_ids, hits, rows, strict=True):
        if counted:
            n[question_id] = n.get(question_id, 0) + 1
            k[question_id] = k.get(question_id, 0) + hit
    return ClusterSums.of(list(k.values()), list(n.values())).as_dict()


def failure_rate(failures: Mapping, *, status: str | None = None) -> Rate | None:
    """The share of attempts that failed (with ``status``, that ended so, as
    "timeout") of a summary's ``failures``, with its interval clustered by
    question when attempts repeat; None without attempts. The one definition
    the run page, dashboards, exports and the gate use."""
    if not failures["n"]:
        return None
    k = failures["counts"][status] if status else sum(failures["counts"].values())
    sums = (failures.get("clusters") or {}).get(status or "failed")
    return counted_rate({"k": k, "n": failures["n"], "clusters": sums})


def logged(timing: AnswerTiming) -> dict:
    """The figures a line logged (None left out), as plain data to store."""
    return {name: value for name in TIMING_NAMES if (value := getattr(timing, name)) is not None}


def _milliseconds(value: float) -> str:
    return "0" if value == 0 else f"{value:+g}"


def clock_statement(*, skew_ms: float | None, precision_ms: float | None) -> str:
    """What a run states of its clocks (scoring.logfile.RunPlan), in words
    for the CLI and the run page: "clocks: skew +12 ms, precision 1 ms",
    each unstated part said so ("not stated"), never shown as 0."""
    if skew_ms is None and precision_ms is None:
        return "clock skew and precision not stated"
    skew = "not stated" if skew_ms is None else f"{_milliseconds(skew_ms)} ms"
    precision = "not stated" if precision_ms is None else f"{precision_ms:g} ms"
    return f"clocks: skew {skew}, precision {precision}"


def clocks_note(clocks: Sequence[Mapping]) -> str | None:
    """A note for runs compared side by side, each given as its
    {"skew_ms", "precision_ms"} (None where not stated): None when every run
    states the same skew and precision, else a sentence saying the runs came
    from different clocks, or that not every one states its clocks."""
    stated = [(clock.get("skew_ms"), clock.get("precision_ms")) for clock in clocks]
    complete = all(None not in pair for pair in stated)
    if complete and len(set(stated)) <= 1:
        return None
    shown = "; ".join(clock_statement(skew_ms=skew, precision_ms=precision) for skew, precision in stated)
    if complete:
        return (
            f"The runs compared came from different clocks ({shown}): times stamped on another "
            "system than the tester's are not directly comparable between them."
        )
    return (
        f"Not every run compared states its clocks ({shown}): times stamped on another system "
        "than the tester's may not be directly comparable between them."
    )


def e2e_shown(summary: Mapping, *, exclude_overhead: bool) -> dict:
    """The E2E block of a timing summary to show: with the overhead excluded
    when that was chosen and the summary has overhead logged, else E2E as
    received. The one choice the run page, CLI, API and compare page make."""
    if exclude_overhead and "e2e_without_overhead" in summary:
        return summary["e2e_without_overhead"]
    return summary["e2e"]


def overhead_statement(
    summary: Mapping, *, chosen_by: str | None, chosen_on: str | None = None
) -> str | None:
    """What the E2E shown does with channel overhead, in words; None when the
    summary logged no overhead. ``chosen_by`` names who chose to exclude it
    (None: not chosen), ``chosen_on`` the day, as the page shows it.

    Excluded: "E2E excludes channel overhead (card assembly, channel
    detection, link resolution), chosen by lead on 2026-12-02."; included:
    the share of E2E time it took, by E2E source."""
    if "overhead" not in summary:
        return None
    if chosen_by is not None:
        when = f" on {chosen_on}" if chosen_on else ""
        return f"E2E excludes channel overhead ({OVERHEAD_WORDS}), chosen by {chosen_by}{when}."
    shares = [
        f"{figure['overhead_share'] * 100:.1f} % of the E2E time from {source}"
        for source, figure in summary["e2e"]["by_source"].items()
        if figure.get("overhead_share") is not None
    ]
    share = f": {'; '.join(shares)}" if shares else ""
    return f"E2E includes channel overhead ({OVERHEAD_WORDS}){share}."


def reply_policy_statement(policy: str | None) -> str:
    """The reply policy a run was called with, in words: "reply policy:
    direct", "reply policy: channel" or "reply policy: not declared"."""
    return f"reply policy: {policy or 'not declared'}"


def reply_policies_note(policies: Sequence[str | None]) -> str | None:
    """A note for runs compared side by side when they were called with
    different reply policies (or not all declare one); None when alike."""
    if len(set(policies)) <= 1:
        return None
    shown = ", ".join(policy or "not declared" for policy in dict.fromkeys(policies))
    return (
        f"The runs compared were called with different reply policies ({shown}): an agent set up "
        "for a chat channel spends time on channel overhead that a direct call does not."
    )
