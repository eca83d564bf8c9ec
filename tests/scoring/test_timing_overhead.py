"""Channel overhead (spec 004): overhead events logged on an answer, shown
apart, and left out of E2E only by a recorded choice; figures worked by hand."""

import json

import pytest

from scoring.__main__ import main
from scoring.logfile import LogFileError, plan_from_header, read_answers
from scoring.timing import (
    answer_timing,
    e2e_shown,
    e2e_without_overhead,
    merged_seconds,
    overhead_statement,
    parse_timestamp,
    reply_policies_note,
    reply_policy_statement,
    timing_errors,
    timing_summary,
)
from tests.scoring.test_cli import timed_line


def at(seconds: float) -> str:
    return f"2026-03-01T10:00:{seconds:06.3f}Z"


def event(kind: str, start: float, end: float) -> dict:
    return {"kind": kind, "started_at": at(start), "ended_at": at(end)}


# A: E2E 10 s; channel detection 0-2 and card assembly 1-4 overlap, so they
# take 4 s together, and link resolution 6-7 one more: 5 s of overhead.
# B: E2E 4 s; two card assemblies 1-3 and 2-6 merge to 5 s, more than its
# E2E, so without overhead it is 0, never below.
# C: E2E 6 s, no overhead logged.
LINES = [
    {
        "submitted_at": at(0),
        "received_at": at(10),
        "overhead": [
            event("channel_detection", 0, 2),
            event("card_assembly", 1, 4),
            event("link_resolution", 6, 7),
        ],
    },
    {
        "submitted_at": at(0),
        "received_at": at(4),
        "overhead": [event("card_assembly", 1, 3), event("card_assembly", 2, 6)],
    },
    {"submitted_at": at(0), "received_at": at(6)},
]


def test_it_merges_overlapping_intervals_once():
    spans = [
        (parse_timestamp(at(a)), parse_timestamp(at(b))) for a, b in ((1, 4), (0, 2), (6, 7), (6.5, 6.75))
    ]
    assert merged_seconds(spans) == 5.0
    assert merged_seconds([]) == 0.0


def test_it_takes_the_overhead_off_e2e_never_below_0():
    assert e2e_without_overhead(10.0, 5.0) == 5.0
    assert e2e_without_overhead(4.0, 5.0) == 0.0
    assert e2e_without_overhead(6.0, None) == 6.0
    assert e2e_without_overhead(None, 2.0) is None


def test_it_reads_each_answers_overhead_by_kind_and_merged():
    first, second, third = (answer_timing(line) for line in LINES)
    assert (first.overhead_s, first.card_assembly_s, first.channel_detection_s, first.link_resolution_s) == (
        5.0,
        3.0,
        2.0,
        1.0,
    )
    assert (first.e2e_s, first.e2e_without_overhead_s) == (10.0, 5.0)
    assert (second.overhead_s, second.card_assembly_s, second.channel_detection_s) == (5.0, 5.0, None)
    assert (second.e2e_s, second.e2e_without_overhead_s) == (4.0, 0.0)
    assert (third.overhead_s, third.e2e_without_overhead_s) == (None, 6.0)


def test_it_summarises_e2e_with_and_without_the_overhead():
    summary = timing_summary([answer_timing(line) for line in LINES])
    included = e2e_shown(summary, exclude_overhead=False)["by_source"]["timestamps"]
    assert (included["n"], included["mean"], included["p50"], included["p90"]) == (3, 20 / 3, 6.0, 10.0)
    # Removed: 5 + 4 + 0 = 9 s of 20 s.
    assert included["overhead_share"] == 0.45
    excluded = e2e_shown(summary, exclude_overhead=True)["by_source"]["timestamps"]
    assert (excluded["n"], excluded["mean"], excluded["p50"], excluded["p90"]) == (3, 11 / 3, 5.0, 6.0)
    overhead = summary["overhead"]
    assert (overhead["n"], overhead["total"], overhead["p50"], overhead["missing"]) == (2, 10.0, 5.0, 1)
    kinds = {kind: (f["n"], f["total"], f["p50"]) for kind, f in overhead["by_kind"].items()}
    assert kinds == {
        "card_assembly": (2, 8.0, 4.0),
        "channel_detection": (1, 2.0, 2.0),
        "link_resolution": (1, 1.0, 1.0),
    }
    assert overhead_statement(summary, chosen_by=None) == (
        "E2E includes channel overhead (card assembly, channel detection, link resolution): "
        "45.0 % of the E2E time from timestamps."
    )
    assert overhead_statement(summary, chosen_by="lead", chosen_on="2026-12-02") == (
        "E2E excludes channel overhead (card assembly, channel detection, link resolution), "
        "chosen by lead on 2026-12-02."
    )


def test_a_run_without_overhead_has_one_e2e_and_no_statement():
    summary = timing_summary([answer_timing(LINES[2])])
    assert "overhead" not in summary
    assert e2e_shown(summary, exclude_overhead=True) is summary["e2e"]
    assert overhead_statement(summary, chosen_by="lead") is None


def test_it_names_each_bad_overhead_event():
    line = {
        "submitted_at": at(0),
        "overhead": [
            {"kind": "typing", "started_at": at(1), "ended_at": at(2)},
            event("card_assembly", 3, 2),
            {"kind": "link_resolution", "started_at": "2026-03-01T10:00:01", "ended_at": at(2)},
            {"kind": "channel_detection", "started_at": at(1)},
            "card",
        ],
    }
    assert timing_errors(line) == [
        (
            "overhead[0].kind",
            'must be one of card_assembly, channel_detection, link_resolution, not "typing"',
        ),
        ("overhead[1].ended_at", "is before started_at: check the clocks and time zones"),
        (
            "overhead[2].started_at",
            '"2026-03-01T10:00:01" has no time zone: write it as 2026-03-01T10:00:00Z or with +01:00',
        ),
        ("overhead[3].ended_at", "missing: an overhead event needs its start and end"),
        ("overhead[4]", "must be an object with kind, started_at and ended_at"),
    ]
    assert timing_errors({"overhead": {"kind": "card_assembly"}}) == [
        (
            "overhead",
            "must be a list of overhead events, each with its kind, started_at and ended_at, "
            'not {"kind": "card_assembly"}',
        )
    ]


def test_the_reader_names_the_line_and_field_of_a_bad_overhead_event(tmp_path):
    path = tmp_path / "run.jsonl"
    lines = [timed_line("q1", **LINES[0]), timed_line("q2", overhead=[event("card_assembly", 3, 2)])]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    with pytest.raises(LogFileError) as caught:
        list(read_answers(path))
    assert [(e.line, e.field, e.message) for e in caught.value.errors] == [
        (2, "overhead[0].ended_at", "is before started_at: check the clocks and time zones")
    ]


def test_it_reads_the_reply_policy_and_the_choice_a_header_declares():
    plan, errors = plan_from_header({"reply_policy": "channel", "exclude_overhead": True})
    assert (plan.reply_policy, plan.exclude_overhead, errors) == ("channel", True, [])
    plan, errors = plan_from_header({"reply_policy": "direct"})
    assert (plan.reply_policy, plan.exclude_overhead, errors) == ("direct", False, [])
    plan, errors = plan_from_header({})
    assert (plan.reply_policy, plan.exclude_overhead) == (None, False)
    assert reply_policy_statement(None) == "reply policy: not declared"
    assert reply_policy_statement("channel") == "reply policy: channel"


def test_it_refuses_any_other_reply_policy_naming_line_1_and_the_field():
    for header, field, message in (
        ({"reply_policy": "Direct"}, "reply_policy", 'must be "direct" or "channel", not "Direct"'),
        ({"reply_policy": ""}, "reply_policy", 'must be "direct" or "channel", not ""'),
        ({"reply_policy": 1}, "reply_policy", 'must be "direct" or "channel", not 1'),
        ({"exclude_overhead": "yes"}, "exclude_overhead", 'must be true or false, not "yes"'),
    ):
        plan, errors = plan_from_header(header)
        assert [(e.line, e.field, e.message) for e in errors] == [(1, field, message)]
        assert (plan.reply_policy, plan.exclude_overhead) == (None, False)


def test_runs_called_with_different_reply_policies_get_a_note():
    assert reply_policies_note(["channel", "channel"]) is None
    assert reply_policies_note(["direct", "channel", None]) == (
        "The runs compared were called with different reply policies (direct, channel, not declared): "
        "an agent set up for a chat channel spends time on channel overhead that a direct call does not."
    )


@pytest.mark.parametrize("exclude", [False, True])
def test_the_cli_prints_e2e_as_chosen_and_the_overhead_apart(tmp_path, capsys, exclude):
    from scoring import synthetic

    run = tmp_path / "answers_run_x-1_set-demo-1.0.jsonl"
    header = {"reply_policy": "channel", **({"exclude_overhead": True} if exclude else {})}
    synthetic.write_jsonl(run, [timed_line(f"q{i}", **line) for i, line in enumerate(LINES)], header=header)
    assert main([str(run)]) == 0
    printed = capsys.readouterr().out
    assert "  reply policy: channel\n" in printed
    if exclude:
        assert "  E2E from timestamps: n=3, mean 3.67, P50 5.00, P90 6.00; missing 0\n" in printed
        assert (
            "  E2E excludes channel overhead (card assembly, channel detection, link resolution), "
            "chosen by the log's header.\n"
        ) in printed
    else:
        assert "  E2E from timestamps: n=3, mean 6.67, P50 6.00, P90 10.00; missing 0\n" in printed
        assert (
            "  E2E includes channel overhead (card assembly, channel detection, link resolution): "
            "45.0 % of the E2E time from timestamps.\n"
        ) in printed
    assert "  overhead, card assembly: 2 answers, total 8.00, median 4.00\n" in printed
