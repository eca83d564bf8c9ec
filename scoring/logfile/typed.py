"""The usual answer line checked in C: msgspec converts the decoded line into
typed structs, so that every field's type is checked as it goes, and what is
left (ranges, ids, timestamps in order) is a few steps on typed values.

This is a fast path, not a second set of rules: a line it does not accept
(a wrong type, an unusual field, a failure status, a follow-up, overhead
events...) goes to the full check (``answer_errors``), which names each
problem, and the two must agree on every line they both read
(tests/scoring/test_typed_lines.py). A line the fast path accepts is valid
by the full check's rules too.
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from scoring.logfile.fields import QUESTION_ID_MAX_LENGTH, _language_problem_cached
from scoring.timing import TIMESTAMP_FIELDS, order_problems

# A field the usual line does not have: its presence sends the line to the
# full check, which knows its rules.
_ABSENT = msgspec.UNSET
Absent = msgspec.UnsetType


class _Record(msgspec.Struct):
    id: str
    values: list[float] = []
    caveats: list[str] = []
    label: str | None = None
    period: str | None = None
    unit: str | None = None


class _ToolCall(msgspec.Struct, forbid_unknown_fields=True):
    id: str
    name: str = ""
    started_at: str | None = None
    ended_at: str | None = None


class _UsualLine(msgspec.Struct):
    question_id: str
    language: str
    retrieved_ids: list[str]
    retrieved_values: list[float]
    answer: str
    cited_ids: list[str]
    declined: bool
    retrieved_records: list[_Record] | Absent = _ABSENT
    attempt: int | Absent = _ABSENT
    status: str | None = None
    status_reason: str | None = None
    latency_ms: float | None = None
    tool_calls: list[_ToolCall] | None = None
    submitted_at: str | None = None
    received_at: str | None = None
    startup_at: str | None = None
    first_progress_at: str | None = None
    first_token_at: str | None = None
    model_done_at: str | None = None
    runner_done_at: str | None = None
    platform_created_at: str | None = None
    platform_sent_at: str | None = None
    stopped_at: str | None = None
    # Left to the full check whenever they are there.
    repeats_attempt: object = _ABSENT
    turns: object = _ABSENT
    follow_ups: object = _ABSENT
    overhead: object = _ABSENT


_from_iso = datetime.fromisoformat
_convert = msgspec.convert
_TIMESTAMP_NAMES = frozenset(TIMESTAMP_FIELDS)


def usual_line(record: dict, repetitions: int) -> dict | None:
    """The moments (timestamps parsed, as timing.timing_errors keeps them) of
    a valid usual answer line (``record``, as orjson decoded it: converting
    the dict costs less than decoding the bytes a second time) of a run
    declaring ``repetitions``, or None
    when the line is not a usual one, or not valid: the full check then
    decides, and names what is wrong."""
    try:
        line = _convert(record, _UsualLine)
    except msgspec.ValidationError:
        return None
    # Only the timestamp fields the line has: most log a few of the ten.
    return _moments(line, repetitions, _TIMESTAMP_NAMES.intersection(record))


def usual_struct(raw: bytes, repetitions: int) -> _UsualLine | None:
    """A valid usual answer line decoded from its bytes straight into its
    struct (in C: 3.7 µs a realistic line against 5.3 µs for orjson's dict
    converted), for a reader
    that needs its fields and not the dict: storing a run. None as for
    usual_line, and for a line holding an escaped NUL (which the full check
    refuses) or nested deeper than msgspec reads (about as deep as orjson's
    limit: msgspec stops first, and the full check reads it with orjson)."""
    if b"\\u0000" in raw:
        return None
    try:
        line = _decode_usual(raw)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        return None
    if _moments(line, repetitions, TIMESTAMP_FIELDS) is None:
        return None
    return line


def _moments(line: _UsualLine, repetitions: int, timestamp_fields) -> dict | None:
    """The moments of a converted line, or None when it is not a usual one or not valid."""
    if (
        (line.status is not None and line.status != "ok")
        or not (1 <= line.attempt <= repetitions if line.attempt is not _ABSENT else repetitions == 1)
        or line.repeats_attempt is not _ABSENT
        or line.turns is not _ABSENT
        or line.follow_ups is not _ABSENT
        or line.overhead is not _ABSENT
        or (line.latency_ms is not None and not 0 <= line.latency_ms < float("inf"))
    ):
        return None
    question_id = line.question_id
    if not (len(question_id) <= QUESTION_ID_MAX_LENGTH and question_id.isprintable() and question_id.strip()):
        return None
    if _language_problem_cached(line.language):
        return None
    moments: dict = {}
    try:
        for field in timestamp_fields:
            value = getattr(line, field)
            if value is not None:
                moment = moments[field] = _from_iso(value)
                if moment.tzinfo is None:
                    return None
        if line.tool_calls is not None:
            call_moments = moments["tool_calls"] = []
            for call in line.tool_calls:
                if not call.id or call.id.isspace():
                    return None
                started = None if call.started_at is None else _from_iso(call.started_at)
                ended = None if call.ended_at is None else _from_iso(call.ended_at)
                for moment in (started, ended):
                    if moment is not None:
                        if moment.tzinfo is None:
                            return None
                        call_moments.append(moment)
                if started is not None and ended is not None and ended < started:
                    return None
    except ValueError:
        return None
    if order_problems(moments):
        return None
    return moments


_decode_usual = msgspec.json.Decoder(_UsualLine).decode
