"""Time and tool calls of logged answers, measured as spec 004 defines them.

End-to-end (E2E) time is the receiver's: the complete final answer received
minus the question submitted, in seconds. Every other captured moment (first
progress, first token, model text done, runner done) keeps its own name and is
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
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime

import numpy as np

UNIT = "seconds"

STATUSES = ("ok", "error", "timeout", "cancelled", "refused_quota")
FAILURE_STATUSES = STATUSES[1:]

# Each named event's offset from submitted_at, and the field it is read from.
EVENTS = {
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
TOOL_CALL_SOURCES = ("unique ids",)

LABELS = {
    "e2e": "end-to-end time: complete final answer received − question submitted (receiver side)",
    "e2e:timestamps": "from the logged submitted_at and received_at",
    "e2e:latency_ms": "from the duration the runner logged (latency_ms)",
    "platform_e2e": "platform E2E (proxy): platform's final send − its creation; not receiver-side E2E",
    "first_progress_s": "first progress message − question submitted (not the final answer)",
    "first_token_s": "first token − question submitted",
    "model_done_s": "model text finished − question submitted (not yet delivered)",
    "runner_done_s": "runner finished − question submitted (not yet confirmed delivered)",
    "wait_s": "waiting time of answers without a final answer: stopped − question submitted",
    "tool_calls": "tool calls per delivered answer",
    "tool_span_s": "span from first to last tool event",
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
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(
            f"{_shown(value)} is not an ISO 8601 timestamp: write it as 2026-03-01T10:00:00Z or with +01:00"
        ) from None
    if moment.utcoffset() is None:
        raise ValueError(f"{_shown(value)} has no time zone: write it as 2026-03-01T10:00:00Z or with +01:00")
    return moment


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
    first_progress_s: float | None = None
    first_token_s: float | None = None
    model_done_s: float | None = None
    runner_done_s: float | None = None
    wait_s: float | None = None
    tool_calls: int | None = None
    tool_calls_source: str | None = None
    tool_span_s: float | None = None

    @property
    def delivered(self) -> bool:
        return self.status == "ok"


class TimingError(ValueError):
    """An answer line whose timing cannot be read; ``problems`` lists every
    (field, message) found."""

    def __init__(self, problems: list[tuple[str, str]]):
        self.problems = problems
        super().__init__("; ".join(f"{field}: {message}" for field, message in problems))


def _present(record: Mapping, field: str) -> bool:
    # JSON null is how many loggers write "not captured".
    return record.get(field) is not None


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _tool_call_errors(calls: object) -> list[tuple[str, str]]:
    if not isinstance(calls, list):
        return [("tool_calls", f"must be a list of tool calls, each with its id, not {_shown(calls)}")]
    problems = []
    for index, call in enumerate(calls):
        where = f"tool_calls[{index}]"
        if not isinstance(call, dict):
            problems.append((where, "must be an object with the call's id"))
            continue
        call_id = call.get("id")
        if not isinstance(call_id, str) or not call_id.strip():
            problems.append(
                (f"{where}.id", "missing or not a text id: repeated events of one call are told apart by it")
            )
        if "name" in call and not isinstance(call["name"], str):
            problems.append((f"{where}.name", "must be text"))
        moments = {}
        for key, value in call.items():
            if key.endswith("_at") and value is not None:
                try:
                    moments[key] = parse_timestamp(value)
                except ValueError as error:
                    problems.append((f"{where}.{key}", str(error)))
        if "started_at" in moments and "ended_at" in moments and moments["ended_at"] < moments["started_at"]:
            problems.append((f"{where}.ended_at", "is before started_at: check the clocks and time zones"))
    return problems


def timing_errors(record: Mapping) -> list[tuple[str, str]]:
    """Every problem with the timing fields of one answer line, as (field,
    message) pairs, without raising; empty when the line can be measured.

    It refuses timestamps that are not text, not ISO 8601 or have no time
    zone; received_at, a named event or stopped_at before submitted_at, and
    platform_sent_at before platform_created_at; a latency_ms that is not a
    finite number of at least 0; an unknown status; tool calls that are not a
    list of objects with text ids (or a count of at least 0), and a tool call
    that ends before it starts."""
    problems: list[tuple[str, str]] = []
    moments: dict[str, datetime] = {}
    for field in TIMESTAMP_FIELDS:
        if _present(record, field):
            try:
                moments[field] = parse_timestamp(record[field])
            except ValueError as error:
                problems.append((field, str(error)))
    submitted = moments.get("submitted_at")
    if submitted is not None:
        for field in ("received_at", *EVENTS.values(), "stopped_at"):
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
    if _present(record, "latency_ms"):
        latency = record["latency_ms"]
        if not _is_number(latency) or not math.isfinite(latency):
            problems.append(("latency_ms", f"must be a number of milliseconds, not {_shown(latency)}"))
        elif latency < 0:
            problems.append(("latency_ms", f"must not be negative, not {latency}"))
    if _present(record, "status") and record["status"] not in STATUSES:
        problems.append(("status", f"must be one of {', '.join(STATUSES)}, not {_shown(record['status'])}"))
    if _present(record, "tool_calls"):
        problems.extend(_tool_call_errors(record["tool_calls"]))
    return problems


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    return None if start is None or end is None else (end - start).total_seconds()


def _moment(record: Mapping, field: str) -> datetime | None:
    return parse_timestamp(record[field]) if _present(record, field) else None


def _tool_calls(calls: object) -> tuple[int | None, str | None, float | None]:
    if calls is None:
        return None, None, None
    ids = {call["id"] for call in calls}
    moments = [
        parse_timestamp(value)
        for call in calls
        for key, value in call.items()
        if key.endswith("_at") and value is not None
    ]
    span = (max(moments) - min(moments)).total_seconds() if len(moments) >= 2 else None
    return len(ids), "unique ids", span


def answer_timing(record: Mapping, *, validated: bool = False) -> AnswerTiming:
    """The timing of one answer line (see AnswerTiming). ``validated`` skips
    the checks for a line already checked (a stored run's).

    E2E comes from submitted_at and received_at when both were logged, else
    from latency_ms (the duration the runner measured), else it is missing.
    A line whose status is not "ok" gets no E2E or platform E2E (it delivered
    no final answer) but its waiting time, stopped_at − submitted_at, when
    both were logged. Refuses, with TimingError (a ValueError), any line
    timing_errors finds a problem with."""
    if not validated and (problems := timing_errors(record)):
        raise TimingError(problems)
    status = record.get("status") or "ok"
    submitted = _moment(record, "submitted_at")
    events = {name: _seconds(submitted, _moment(record, field)) for name, field in EVENTS.items()}
    tool_calls, tool_calls_source, tool_span = _tool_calls(record.get("tool_calls"))
    common = {
        "status": status,
        **events,
        "tool_calls": tool_calls,
        "tool_calls_source": tool_calls_source,
        "tool_span_s": tool_span,
    }
    if status != "ok":
        return AnswerTiming(**common, wait_s=_seconds(submitted, _moment(record, "stopped_at")))
    e2e, source = _seconds(submitted, _moment(record, "received_at")), "timestamps"
    if e2e is None and _present(record, "latency_ms"):
        e2e, source = record["latency_ms"] / 1000, "latency_ms"
    platform = _seconds(_moment(record, "platform_created_at"), _moment(record, "platform_sent_at"))
    return AnswerTiming(
        **common, e2e_s=e2e, e2e_source=source if e2e is not None else None, platform_e2e_s=platform
    )


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
    if any(value is None or not math.isfinite(value) for value in values):
        raise ValueError("a summary takes only measured values: count a missing one as missing instead")
    if len(values) == 0:
        return Summary(n=0)
    samples = np.asarray(values, dtype=float)
    return Summary(
        n=len(samples),
        mean=float(np.mean(samples)),
        p50=float(np.median(samples)),
        # inverted_cdf is the nearest-rank percentile: the ⌈0.9·n⌉-th sorted value.
        p90=float(np.percentile(samples, 90, method="inverted_cdf")),
        min=float(np.min(samples)),
        max=float(np.max(samples)),
    )


def _measure(values: list[float | None], label: str) -> dict:
    present = [value for value in values if value is not None]
    return {"label": label, **summarise(present).as_dict(), "missing": len(values) - len(present)}


def _per_question(pairs: list[tuple[str, float | None]], attempts: dict[str, int]) -> dict:
    samples: dict[str, list[float]] = {question_id: [] for question_id in attempts}
    for question_id, value in pairs:
        if value is not None:
            samples[question_id].append(value)
    per_question = {
        question_id: {
            "attempts": attempts[question_id],
            "samples": len(values),
            "median_s": float(np.median(values)) if values else None,
        }
        for question_id, values in samples.items()
    }
    medians = [entry["median_s"] for entry in per_question.values() if entry["median_s"] is not None]
    return {
        "per_question": per_question,
        "question_medians": summarise(medians).as_dict(),
        "questions_without_sample": len(per_question) - len(medians),
    }


def _by_source(
    values: list[float | None], sources: list[str | None], known: Sequence[str], labels: Mapping[str, str]
) -> dict[str, dict]:
    """One summary for each source the values came from: figures measured two
    ways are not the same definition, so they are never pooled."""
    return {
        source: {
            "label": labels[source],
            **summarise([value for value, of in zip(values, sources, strict=True) if of == source]).as_dict(),
        }
        for source in known
        if source in sources
    }


def _source_name(sources: list[str | None]) -> str | None:
    seen = {source for source in sources if source is not None}
    return None if not seen else seen.pop() if len(seen) == 1 else "mixed"


def timing_summary(timings: Sequence[AnswerTiming], *, question_ids: Sequence[str] | None = None) -> dict:
    """Time and tool-call figures of a run, as plain JSON-ready data in seconds.

    Latency figures (E2E, platform E2E, named events, tool calls and span) are
    over delivered answers (status "ok") only; each gives n and the count of
    delivered answers missing it. E2E is summarised for each source it came
    from ("timestamps", "latency_ms") and never pooled across them; ``source``
    is the one used, "mixed" or None. Failures are counted by status out of
    all ``attempts`` with the summary of their waiting times. With
    ``question_ids`` (one per timing, in order: repeats of a question share
    it), each E2E source also gives every question's median and a summary of
    those medians. Refuses (ValueError) question_ids of another length."""
    if question_ids is not None and len(question_ids) != len(timings):
        raise ValueError(f"{len(question_ids)} question ids for {len(timings)} answers: give one per answer")
    delivered = [timing for timing in timings if timing.delivered]
    failed = [timing for timing in timings if not timing.delivered]

    e2e_values = [timing.e2e_s for timing in delivered]
    e2e_sources = [timing.e2e_source for timing in delivered]
    e2e_labels = {source: LABELS[f"e2e:{source}"] for source in E2E_SOURCES}
    e2e = {
        "label": LABELS["e2e"],
        "source": _source_name(e2e_sources),
        "by_source": _by_source(e2e_values, e2e_sources, E2E_SOURCES, e2e_labels),
        "missing": e2e_values.count(None),
    }
    if question_ids is not None:
        attempts: dict[str, int] = {}
        for question_id in question_ids:
            attempts[question_id] = attempts.get(question_id, 0) + 1
        for source, block in e2e["by_source"].items():
            pairs = [
                (question_id, timing.e2e_s if timing.e2e_source == source else None)
                for question_id, timing in zip(question_ids, timings, strict=True)
            ]
            block.update(_per_question(pairs, attempts))

    counts = [timing.tool_calls for timing in delivered]
    count_sources = [timing.tool_calls_source for timing in delivered]
    count_labels = {"unique ids": "unique call ids per answer"}
    return {
        "unit": UNIT,
        "attempts": len(timings),
        "delivered": len(delivered),
        "e2e": e2e,
        "platform_e2e": {
            **_measure([t.platform_e2e_s for t in delivered], LABELS["platform_e2e"]),
            "proxy": True,
        },
        "events": {name: _measure([getattr(t, name) for t in delivered], LABELS[name]) for name in EVENTS},
        "failures": {
            "n": len(timings),
            "counts": {status: sum(t.status == status for t in failed) for status in FAILURE_STATUSES},
            "wait": _measure([t.wait_s for t in failed], LABELS["wait_s"]),
        },
        "tool_calls": {
            "label": LABELS["tool_calls"],
            "source": _source_name(count_sources),
            "by_source": _by_source(counts, count_sources, TOOL_CALL_SOURCES, count_labels),
            "missing": counts.count(None),
            "coverage": TOOL_CALL_COVERAGE,
            "span": {
                **_measure([t.tool_span_s for t in delivered], LABELS["tool_span_s"]),
                "note": TOOL_SPAN_NOTE,
            },
        },
    }


TIMING_NAMES = tuple(AnswerTiming.__dataclass_fields__)


def logged(timing: AnswerTiming) -> dict:
    """The figures a line logged (None left out), as plain data to store."""
    return {name: value for name in TIMING_NAMES if (value := getattr(timing, name)) is not None}
