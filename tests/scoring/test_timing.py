"""Timing and tool calls of answers (spec 004), against figures worked by hand."""

import json
import math
import struct
from array import array
from datetime import UTC, datetime, timedelta, timezone

import pytest

from scoring.stats.rates import ClusterSums, rate
from scoring.timing import (
    LABELS,
    NUMPY_SORT_FROM,
    TOOL_CALL_COVERAGE,
    AnswerTiming,
    Summary,
    TimingColumns,
    TimingError,
    answer_timing,
    clock_statement,
    clocks_note,
    failure_rate,
    parse_timestamp,
    slowest_questions,
    summarise,
    timing_errors,
    timing_summary,
)

SUBMITTED = "2026-03-01T10:00:00Z"


def at(seconds: float) -> str:
    """The timestamp ``seconds`` after SUBMITTED, written with a +01:00 zone
    so that every test also crosses zones."""
    moment = datetime(2026, 3, 1, 11, 0, tzinfo=timezone(timedelta(hours=1))) + timedelta(seconds=seconds)
    return moment.isoformat()


def delivered(e2e: float) -> AnswerTiming:
    return AnswerTiming(e2e_s=e2e, e2e_source="timestamps")


# Summaries: P50 is the median, P90 the ⌈0.9·n⌉-th sorted value.


def test_it_summarises_an_odd_count():
    # sorted 1 2 3 4 5: median the 3rd = 3; ⌈0.9·5⌉ = ⌈4.5⌉ = 5th = 5; mean 15/5 = 3.
    assert summarise([3, 1, 2, 5, 4]) == Summary(n=5, mean=3.0, p50=3.0, p90=5.0, min=1.0, max=5.0)


def test_it_summarises_an_even_count():
    # median (20 + 30)/2 = 25; ⌈0.9·4⌉ = ⌈3.6⌉ = 4th = 40; mean 100/4 = 25.
    assert summarise([40, 10, 30, 20]) == Summary(n=4, mean=25.0, p50=25.0, p90=40.0, min=10.0, max=40.0)


def test_it_summarises_a_single_value():
    # ⌈0.9·1⌉ = 1st = 7.5, which is also the median and the mean.
    assert summarise([7.5]) == Summary(n=1, mean=7.5, p50=7.5, p90=7.5, min=7.5, max=7.5)


def test_it_keeps_ties_as_samples():
    # sorted 2 2 2 2 9: median the 3rd = 2; ⌈4.5⌉ = 5th = 9; mean 17/5 = 3.4.
    assert summarise([2, 9, 2, 2, 2]) == Summary(n=5, mean=3.4, p50=2.0, p90=9.0, min=2.0, max=9.0)


def test_it_takes_the_ninth_of_ten_values_as_p90():
    # sorted 1..10: ⌈0.9·10⌉ = 9th = 9, not 9.1 as interpolation would give;
    # median (5 + 6)/2 = 5.5; mean 55/10 = 5.5.
    values = [10, 1, 9, 2, 8, 3, 7, 4, 6, 5]
    assert summarise(values) == Summary(n=10, mean=5.5, p50=5.5, p90=9.0, min=1.0, max=10.0)


def test_it_gives_no_figures_for_no_values():
    assert summarise([]) == Summary(n=0, mean=None, p50=None, p90=None, min=None, max=None)


def test_it_refuses_a_missing_value_in_a_summary():
    with pytest.raises(ValueError, match="count a missing one as missing instead"):
        summarise([1.0, None])


@pytest.mark.parametrize("odd", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("count", [10, NUMPY_SORT_FROM + 1])
def test_it_refuses_nan_and_infinities_in_a_summary_of_any_size(odd, count):
    # A large array of doubles is looked at by numpy, a small one value by value.
    values = array("d", range(count))
    values[count // 2] = odd
    with pytest.raises(ValueError, match="count a missing one as missing instead"):
        summarise(values)
    values[count // 2] = 1.0
    assert summarise(values).n == count


# Timestamps.


def test_it_reads_timestamps_with_a_zone():
    assert parse_timestamp("2026-03-01T10:00:00Z") == datetime(2026, 3, 1, 10, tzinfo=UTC)
    assert parse_timestamp("2026-03-01T11:00:00.250+01:00") == datetime(
        2026, 3, 1, 10, 0, 0, 250_000, tzinfo=UTC
    )


def test_it_refuses_a_timestamp_without_a_zone():
    with pytest.raises(ValueError) as caught:
        parse_timestamp("2026-03-01T10:00:00")
    assert str(caught.value) == (
        '"2026-03-01T10:00:00" has no time zone: write it as 2026-03-01T10:00:00Z or with +01:00'
    )


def test_it_refuses_text_that_is_not_a_timestamp():
    with pytest.raises(ValueError) as caught:
        parse_timestamp("yesterday")
    assert str(caught.value) == (
        '"yesterday" is not an ISO 8601 timestamp: write it as 2026-03-01T10:00:00Z or with +01:00'
    )


# One answer.


def test_it_measures_e2e_from_timestamps_across_zones():
    # 10:00:00Z to 11:00:12.5+01:00 is 12.5 s.
    timing = answer_timing({"submitted_at": SUBMITTED, "received_at": at(12.5), "latency_ms": 99_000})
    assert (timing.e2e_s, timing.e2e_source) == (12.5, "timestamps")


def test_it_measures_e2e_from_a_logged_duration_and_says_so():
    timing = answer_timing({"latency_ms": 1500})
    assert (timing.e2e_s, timing.e2e_source) == (1.5, "latency_ms")


def test_it_leaves_a_missing_e2e_missing_not_0():
    timing = answer_timing({"submitted_at": SUBMITTED})
    assert (timing.e2e_s, timing.e2e_source) == (None, None)
    assert timing.tool_calls is None


def test_it_names_each_event_by_what_was_captured():
    timing = answer_timing(
        {
            "submitted_at": SUBMITTED,
            "first_progress_at": at(0.5),
            "model_done_at": at(8),
            "received_at": at(9),
        }
    )
    assert (timing.first_progress_s, timing.first_token_s, timing.model_done_s, timing.runner_done_s) == (
        0.5,
        None,
        8.0,
        None,
    )
    assert timing.e2e_s == 9.0


def test_it_names_startup_apart_from_first_progress():
    # Spec 004: startup is its own event, never taken for first progress.
    timing = answer_timing({"submitted_at": SUBMITTED, "startup_at": at(1.5), "received_at": at(9)})
    assert (timing.startup_s, timing.first_progress_s) == (1.5, None)
    summary = timing_summary([timing])
    assert list(summary["events"]) == [
        "startup_s",
        "first_progress_s",
        "first_token_s",
        "model_done_s",
        "runner_done_s",
    ]
    assert (summary["events"]["startup_s"]["n"], summary["events"]["first_progress_s"]["missing"]) == (1, 1)


def test_it_refuses_a_startup_before_submitted():
    with pytest.raises(TimingError) as caught:
        answer_timing({"submitted_at": SUBMITTED, "startup_at": at(-1)})
    assert [field for field, _ in caught.value.problems] == ["startup_at"]


def test_it_keeps_the_platform_proxy_out_of_e2e():
    # Only the platform's receipts: 4 s of proxy, no receiver-side E2E.
    timing = answer_timing({"platform_created_at": at(1), "platform_sent_at": at(5)})
    assert (timing.platform_e2e_s, timing.e2e_s) == (4.0, None)


def test_it_takes_no_latency_sample_from_a_timeout_but_keeps_its_wait():
    timing = answer_timing(
        {"status": "timeout", "submitted_at": SUBMITTED, "stopped_at": at(600.2), "latency_ms": 600_000}
    )
    assert (timing.e2e_s, timing.platform_e2e_s, timing.wait_s) == (None, None, 600.2)
    assert not timing.delivered


def test_it_refuses_received_before_submitted():
    with pytest.raises(TimingError) as caught:
        answer_timing({"submitted_at": SUBMITTED, "received_at": at(-3)})
    assert caught.value.problems == [
        (
            "received_at",
            "is before submitted_at: nothing can happen before the question is sent; "
            "check the clocks and time zones",
        )
    ]


def test_it_lists_every_problem_without_raising():
    record = {
        "submitted_at": "2026-03-01T10:00:00",
        "latency_ms": -5,
        "status": "lost",
        "tool_calls": [{"name": "search"}, {"id": "c1", "started_at": at(2), "ended_at": at(1)}],
    }
    assert timing_errors(record) == [
        (
            "submitted_at",
            '"2026-03-01T10:00:00" has no time zone: write it as 2026-03-01T10:00:00Z or with +01:00',
        ),
        ("latency_ms", "must not be negative, not -5"),
        ("status", 'must be one of ok, error, timeout, cancelled, refused_quota, not "lost"'),
        ("tool_calls[0].id", "missing or not a text id: repeated events of one call are told apart by it"),
        ("tool_calls[1].ended_at", "is before started_at: check the clocks and time zones"),
    ]


def test_it_refuses_a_latency_that_is_not_a_number():
    assert timing_errors({"latency_ms": "1500"}) == [
        ("latency_ms", 'must be a number of milliseconds, not "1500"')
    ]
    assert timing_errors({"latency_ms": True}) == [
        ("latency_ms", "must be a number of milliseconds, not true")
    ]


def test_it_finds_nothing_wrong_with_a_line_without_timing():
    assert timing_errors({"question_id": "q1"}) == []
    assert answer_timing({"question_id": "q1"}) == AnswerTiming()


def test_it_counts_tool_calls_by_unique_id_and_spans_their_events():
    # c1 logged twice (start, then end) counts once: 2 calls. Events at 2, 3,
    # 4 and 7.5 s: the span is 7.5 - 2 = 5.5 s.
    calls = [
        {"id": "c1", "name": "search", "started_at": at(2)},
        {"id": "c2", "name": "shell", "started_at": at(3), "ended_at": at(7.5)},
        {"id": "c1", "name": "search", "ended_at": at(4)},
    ]
    timing = answer_timing({"tool_calls": calls})
    assert (timing.tool_calls, timing.tool_calls_source, timing.tool_span_s) == (2, "unique ids", 5.5)


def test_it_gives_no_span_for_a_single_tool_event():
    timing = answer_timing({"tool_calls": [{"id": "c1", "started_at": at(2)}, {"id": "c2"}]})
    assert (timing.tool_calls, timing.tool_span_s) == (2, None)


def test_it_refuses_a_count_logged_without_ids():
    # Spec 004 counts tool calls by unique id; a bare count cannot be checked.
    assert timing_errors({"tool_calls": 3}) == [
        ("tool_calls", "must be a list of tool calls, each with its id, not 3")
    ]


def test_it_counts_an_empty_list_of_tool_calls_as_0():
    assert answer_timing({"tool_calls": []}).tool_calls == 0


# A run.


def test_it_summarises_a_run_with_failures_apart():
    timings = [
        delivered(2.0),
        delivered(4.0),
        delivered(9.0),
        AnswerTiming(status="timeout", wait_s=600.5),
        AnswerTiming(status="refused_quota", wait_s=0.5),
        AnswerTiming(status="error"),
    ]
    summary = timing_summary(timings)
    assert (summary["attempts"], summary["delivered"]) == (6, 3)
    assert summary["e2e"]["source"] == "timestamps"
    # Only the three delivered answers: median 4, ⌈2.7⌉ = 3rd = 9, mean 15/3 = 5.
    e2e = summary["e2e"]["by_source"]["timestamps"]
    assert (e2e["n"], e2e["mean"], e2e["p50"], e2e["p90"], e2e["max"]) == (3, 5.0, 4.0, 9.0, 9.0)
    assert summary["e2e"]["missing"] == 0
    assert summary["failures"]["n"] == 6
    assert summary["failures"]["counts"] == {"error": 1, "timeout": 1, "cancelled": 0, "refused_quota": 1}
    # Two failures logged a stop time: (0.5 + 600.5)/2 = 300.5; the error's is missing.
    wait = summary["failures"]["wait"]
    assert (wait["n"], wait["mean"], wait["p90"], wait["missing"]) == (2, 300.5, 600.5, 1)
    json.dumps(summary)


def test_it_counts_missing_values_instead_of_zeros():
    timings = [delivered(3.0), AnswerTiming(), AnswerTiming(first_token_s=0.75)]
    summary = timing_summary(timings)
    e2e = summary["e2e"]["by_source"]["timestamps"]
    assert (e2e["n"], e2e["mean"], e2e["min"], summary["e2e"]["missing"]) == (1, 3.0, 3.0, 2)
    first_token = summary["events"]["first_token_s"]
    assert (first_token["n"], first_token["mean"], first_token["missing"]) == (1, 0.75, 2)
    assert summary["tool_calls"]["missing"] == 3


def test_it_never_mixes_the_platform_proxy_into_e2e():
    timings = [delivered(10.0), AnswerTiming(platform_e2e_s=4.0)]
    summary = timing_summary(timings)
    e2e = summary["e2e"]["by_source"]["timestamps"]
    assert (e2e["n"], e2e["mean"], summary["e2e"]["missing"]) == (1, 10.0, 1)
    platform = summary["platform_e2e"]
    assert (platform["n"], platform["mean"], platform["missing"], platform["proxy"]) == (1, 4.0, 1, True)
    assert platform["label"] == LABELS["platform_e2e"]


def test_it_summarises_each_e2e_source_apart():
    timings = [delivered(2.0), delivered(4.0), AnswerTiming(e2e_s=30.0, e2e_source="latency_ms")]
    e2e = timing_summary(timings)["e2e"]
    assert e2e["source"] == "mixed"
    assert (e2e["by_source"]["timestamps"]["n"], e2e["by_source"]["timestamps"]["mean"]) == (2, 3.0)
    assert (e2e["by_source"]["latency_ms"]["n"], e2e["by_source"]["latency_ms"]["mean"]) == (1, 30.0)


def test_it_reports_each_questions_median_over_three_attempts():
    # q1: 1, 5, 3 → median 3. q2: 10, 2 and a timeout → median (2 + 10)/2 = 6.
    # q3: three timeouts → no sample. Medians 3 and 6: mean 4.5, P50 4.5,
    # ⌈0.9·2⌉ = 2nd = 6.
    timeout = AnswerTiming(status="timeout", wait_s=600.0)
    timings = [delivered(1.0), delivered(10.0), timeout, delivered(5.0), delivered(2.0), timeout]
    timings += [delivered(3.0), timeout, timeout]
    question_ids = ["q1", "q2", "q3", "q1", "q2", "q3", "q1", "q2", "q3"]
    e2e = timing_summary(timings, question_ids=question_ids)["e2e"]["by_source"]["timestamps"]
    assert e2e["per_question"] == {
        "q1": {"attempts": 3, "samples": 3, "median_s": 3.0},
        "q2": {"attempts": 3, "samples": 2, "median_s": 6.0},
        "q3": {"attempts": 3, "samples": 0, "median_s": None},
    }
    assert e2e["question_medians"] == {"n": 2, "mean": 4.5, "p50": 4.5, "p90": 6.0, "min": 3.0, "max": 6.0}
    assert e2e["questions_without_sample"] == 1


def test_it_lists_the_questions_slowest_median_first_with_the_unsampled_last():
    timeout = AnswerTiming(status="timeout", wait_s=600.0)
    timings = [delivered(1.0), delivered(10.0), timeout, delivered(5.0), delivered(2.0), timeout]
    timings += [delivered(3.0), timeout, timeout, delivered(6.0)]
    question_ids = ["q1", "q2", "q3", "q1", "q2", "q3", "q1", "q2", "q3", "q0"]
    e2e = timing_summary(timings, question_ids=question_ids)["e2e"]["by_source"]["timestamps"]
    # q2 and q0 share the median 6: told apart by id, so the order is the
    # same on every page and export. q3 timed out three times: no sample.
    assert slowest_questions(e2e["per_question"]) == [
        {"question_id": "q0", "median_s": 6.0, "samples": 1, "attempts": 1},
        {"question_id": "q2", "median_s": 6.0, "samples": 2, "attempts": 3},
        {"question_id": "q1", "median_s": 3.0, "samples": 3, "attempts": 3},
        {"question_id": "q3", "median_s": None, "samples": 0, "attempts": 3},
    ]


def test_it_refuses_question_ids_that_do_not_match_the_answers():
    with pytest.raises(ValueError, match="2 question ids for 1 answers: give one per answer"):
        timing_summary([delivered(1.0)], question_ids=["q1", "q1"])


def test_it_summarises_tool_calls_with_their_coverage_and_labelled_span():
    # Counts 0, 2, 2, 5: mean 9/4 = 2.25, median (2 + 2)/2 = 2, ⌈3.6⌉ = 4th = 5.
    timings = [
        AnswerTiming(tool_calls=count, tool_calls_source="unique ids", tool_span_s=span)
        for count, span in [(0, None), (2, 1.5), (2, 3.5), (5, 10.0)]
    ]
    tools = timing_summary(timings)["tool_calls"]
    assert tools["source"] == "unique ids"
    counts = tools["by_source"]["unique ids"]
    assert (counts["n"], counts["mean"], counts["p50"], counts["p90"]) == (4, 2.25, 2.0, 5.0)
    assert tools["coverage"] == TOOL_CALL_COVERAGE
    assert tools["span"]["label"] == "span from first to last tool event"
    assert tools["span"]["note"] == (
        "The span from the first to the last tool event includes reasoning, waiting and calls running "
        "at the same time, so it is not the time spent in tools."
    )
    # Spans 1.5, 3.5, 10: median 3.5, mean 15/3 = 5, ⌈0.9·3⌉ = 3rd = 10; the count-0 answer has none.
    span = tools["span"]
    assert (span["n"], span["mean"], span["p50"], span["p90"], span["missing"]) == (3, 5.0, 3.5, 10.0, 1)


def test_it_summarises_an_empty_run():
    summary = timing_summary([])
    assert summary["e2e"] == {"label": LABELS["e2e"], "source": None, "by_source": {}, "missing": 0}
    assert (summary["attempts"], summary["delivered"], summary["failures"]["n"]) == (0, 0, 0)
    assert summary["failures"]["counts"] == {"error": 0, "timeout": 0, "cancelled": 0, "refused_quota": 0}
    assert summary["failures"]["wait"]["n"] == 0
    assert summary["failures"]["wait"]["mean"] is None


def test_timeouts_of_a_questions_repeated_attempts_are_one_cluster():
    # Three questions asked twice; both attempts of q1 timed out, nothing else did.
    statuses = ["timeout", "timeout", "ok", "ok", "ok", "ok"]
    question_ids = ["q1", "q1", "q2", "q2", "q3", "q3"]
    timings = [AnswerTiming(status=status, e2e_s=None if status != "ok" else 1.0) for status in statuses]
    failures = timing_summary(timings, question_ids=question_ids)["failures"]
    # Σk² = 2², Σk·n = 2·2, Σn² = 3·2², over 3 questions.
    assert failures["clusters"]["timeout"] == {"clusters": 3, "k2": 4, "kn": 4, "n2": 12}
    timeouts = failure_rate(failures, status="timeout")
    assert (timeouts.k, timeouts.n) == (2, 6)
    assert timeouts == rate(2, 6, clusters=ClusterSums.of([2, 0, 0], [2, 2, 2]))
    # The same attempts counted as independent: the plain interval, narrower.
    alone = failure_rate(timing_summary(timings)["failures"], status="timeout")
    assert alone == rate(2, 6)
    assert timeouts.high - timeouts.low > alone.high - alone.low
    assert failure_rate(failures) == timeouts  # timeouts are the only failures here
    assert failure_rate({"n": 0, "counts": {}}) is None


# The clocks a run states (spec 004: across systems, skew and precision).


def test_it_states_the_clocks_and_never_shows_an_unstated_one_as_0():
    assert clock_statement(skew_ms=12, precision_ms=1) == "clocks: skew +12 ms, precision 1 ms"
    assert clock_statement(skew_ms=-3.5, precision_ms=None) == "clocks: skew -3.5 ms, precision not stated"
    assert clock_statement(skew_ms=0, precision_ms=0.001) == "clocks: skew 0 ms, precision 0.001 ms"
    assert clock_statement(skew_ms=None, precision_ms=None) == "clock skew and precision not stated"


def test_it_notes_runs_compared_whose_clocks_differ_or_are_not_stated():
    same = {"skew_ms": 12.0, "precision_ms": 1.0}
    assert clocks_note([same, dict(same)]) is None
    assert clocks_note([same, {"skew_ms": 40.0, "precision_ms": 1.0}]) == (
        "The runs compared came from different clocks (clocks: skew +12 ms, precision 1 ms; "
        "clocks: skew +40 ms, precision 1 ms): times stamped on another system than the "
        "tester's are not directly comparable between them."
    )
    assert clocks_note([same, {"skew_ms": None, "precision_ms": None}]) == (
        "Not every run compared states its clocks (clocks: skew +12 ms, precision 1 ms; "
        "clock skew and precision not stated): times stamped on another system than the "
        "tester's may not be directly comparable between them."
    )


def test_columns_read_back_from_their_bytes_give_the_same_summary():
    timings = [
        delivered(2.0),
        AnswerTiming(e2e_s=4.25, e2e_source="latency_ms", tool_calls=2, tool_calls_source="ids"),
        AnswerTiming(status="timeout", wait_s=600.5),
        AnswerTiming(first_token_s=0.75),
    ]
    columns = TimingColumns.of(timings)
    stored = columns.to_bytes()
    # Doubles are stored little-endian whatever the machine, for a worker on another to read.
    assert struct.pack("<d", 600.5) in stored
    again = TimingColumns.from_bytes(stored)
    assert (again.rows, again.status, again.e2e_source, again.counted_calls) == (
        columns.rows, columns.status, columns.e2e_source, columns.counted_calls,
    )  # fmt: skip
    assert (
        again.numbers.keys() == columns.numbers.keys() == {"e2e_s", "first_token_s", "tool_calls", "wait_s"}
    )
    ids = ["q1", "q2", "q1", "q2"]
    assert timing_summary(again, question_ids=ids) == timing_summary(timings, question_ids=ids)
    empty = TimingColumns.from_bytes(TimingColumns().to_bytes())
    assert timing_summary(empty) == timing_summary([])
