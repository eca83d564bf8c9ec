"""The typed fast path (scoring.logfile.typed) against the full check of an
answer line: on every line, valid or not, check_answer_line must give the
same answer, errors and parsed timestamps with the fast path as without it."""

import json
import os
from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import synthetic, timing
from scoring.logfile import answers, followups, questions, typed
from scoring.logfile.attempts import AttemptBook


def full_check_only(monkeypatch):
    monkeypatch.setattr(answers, "usual_line", lambda record, repetitions: None)


def both_ways(monkeypatch, raw: bytes, **options):
    """(fast, full): check_answer_line's answer, errors and moments each way."""

    def checked():
        moments = {}
        record, errors = answers.check_answer_line(7, raw, **options, moments=moments)
        return record, errors, moments

    fast = checked()
    with monkeypatch.context() as patched:
        full_check_only(patched)
        full = checked()
    return fast, full


STAMPS = st.sampled_from(
    [
        "2026-03-02T20:08:34.131Z",
        "2026-03-02T20:08:37Z",
        "2026-03-02T21:08:35.5+01:00",
        "2026-03-02T20:08:33Z",  # before the usual submitted_at
        "2026-03-02T20:08:34",  # no time zone
        "2026-03-02 20:08:36Z",
        "2026-03-02T20:08:34.1234567Z",
        "yesterday",
        "",
        17,
        None,
    ]
)
ODD_VALUES = st.sampled_from(
    [
        None,
        True,
        False,
        0,
        1,
        -1,
        2,
        1.0,
        1.5,
        "",
        " ",
        "x",
        "ok",
        [],
        ["A"],
        [1],
        [1.5, "2"],
        {},
        {"id": "A"},
    ]
)
TEXT = st.text(alphabet="aZ09 _-.,\t\u00e9\u4e00\x1f", max_size=12)


def mostly(draw, usual, odd):
    """Usually a value of ``usual``, now and then one of ``odd``."""
    return draw(usual if draw(st.integers(0, 3)) else odd)


VALID_STAMPS = st.sampled_from(["2026-03-02T20:08:35Z", "2026-03-02T21:08:35.5+01:00"])


@st.composite
def tool_call(draw):
    call = {
        "id": mostly(draw, st.sampled_from(["call-1", "call-2"]), st.sampled_from(["", "  ", 3])),
        "name": "s",
    }
    for key in ("started_at", "ended_at"):
        if draw(st.booleans()):
            call[key] = mostly(draw, VALID_STAMPS, STAMPS)
    if draw(st.integers(0, 9)) == 0:
        call[draw(st.sampled_from(["name", "args", "id"]))] = draw(ODD_VALUES)
    return call


@st.composite
def record(draw):
    kept = {"id": "EDU_PRIM_COMPL", "values": [87.6], "caveats": [], "label": "rate", "unit": "percent"}
    if draw(st.integers(0, 5)) == 0:
        kept[draw(st.sampled_from(sorted(kept)))] = draw(ODD_VALUES)
    return kept


# Optional fields with values a valid line may hold (others are drawn too).
USUAL_VALUES = {
    "attempt": [1, 2, 3],
    "status": ["ok", None, "error", "timeout"],
    "status_reason": [None, "upstream 502"],
    "latency_ms": [0, 1234.5, 80],
    "repeats_attempt": [1, None],
    "first_token_at": ["2026-03-02T20:08:35Z", "2026-03-02T20:08:30Z"],
    "platform_created_at": ["2026-03-02T20:08:34.2Z"],
    "platform_sent_at": ["2026-03-02T20:08:36Z", "2026-03-02T20:08:34.1Z"],
    "stopped_at": ["2026-03-02T20:08:39Z"],
    "turns": [1, 2],
    "follow_ups": [[]],
    "overhead": [[]],
    "stratum": ["a"],
}


@st.composite
def answer_line(draw):
    line = {
        "question_id": mostly(draw, st.just("q000001"), TEXT),
        "language": mostly(
            draw, st.sampled_from(["en", "fr", "es-MX"]), st.sampled_from(["", "english", "e n"])
        ),
        "retrieved_ids": ["EDU_PRIM_COMPL"],
        "retrieved_values": [87.6, 87],
        "answer": "The primary completion rate was 87.6% in 2015 (EDU_PRIM_COMPL).",
        "cited_ids": ["EDU_PRIM_COMPL"],
        "declined": False,
    }
    if draw(st.booleans()):
        line["retrieved_records"] = draw(st.lists(record(), max_size=2))
    if draw(st.booleans()):
        line["submitted_at"] = "2026-03-02T20:08:34.131Z"
        line["received_at"] = mostly(draw, VALID_STAMPS, STAMPS)
    if draw(st.booleans()):
        line["tool_calls"] = draw(st.lists(tool_call(), max_size=3))
    for name in draw(st.lists(st.sampled_from(sorted(USUAL_VALUES)), max_size=3)):
        usual = st.sampled_from(USUAL_VALUES[name])
        line[name] = draw(usual if draw(st.integers(0, 2)) else st.one_of(ODD_VALUES, STAMPS))
    # Break one of the answer's own fields now and then.
    if draw(st.integers(0, 5)) == 0:
        name = draw(st.sampled_from(sorted(line)))
        if draw(st.booleans()):
            del line[name]
        else:
            line[name] = draw(ODD_VALUES)
    return line


@settings(max_examples=int(os.environ.get("HYPOTHESIS_EXAMPLES", "600")), deadline=None)
@given(line=answer_line(), repetitions=st.sampled_from([1, 3]), repeats=st.booleans())
def test_the_fast_path_and_the_full_check_agree_on_every_line(line, repetitions, repeats):
    raw = json.dumps(line, ensure_ascii=False).encode()
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast, full = both_ways(monkeypatch, raw, repetitions=repetitions, repeats_a_run=repeats)
    assert fast == full


def stored_both_ways(raw: bytes, *, repetitions: int = 1, repeats_a_run: bool = False):
    """(as stored, by the full check): the fields storing keeps of a line,
    with its follow-ups labelled, or the errors."""

    def kept(fields, errors):
        if errors:
            return None, errors
        record = fields.record if isinstance(fields, answers.StoredFields) else fields
        labels = followups.label_follow_ups(record or {}, None)
        if isinstance(fields, answers.StoredFields):
            return (*fields[:6], labels), []
        return (
            (record["question_id"], record["attempt"], record["status"], record["language"],
             record.get("declined") is True, record.get("repeats_attempt"), labels),
            [],
        )  # fmt: skip

    stored = kept(
        *answers.stored_fields(7, raw, AttemptBook(repetitions=repetitions), repeats_a_run=repeats_a_run)
    )
    full = kept(
        *answers.check_answer_line(7, raw, AttemptBook(repetitions=repetitions), repeats_a_run=repeats_a_run)
    )
    return stored, full


@settings(max_examples=int(os.environ.get("HYPOTHESIS_EXAMPLES", "600")), deadline=None)
@given(line=answer_line(), repetitions=st.sampled_from([1, 3]), repeats=st.booleans())
def test_storing_keeps_what_the_full_check_reads_on_every_line(line, repetitions, repeats):
    raw = json.dumps(line, ensure_ascii=False).encode()
    stored, full = stored_both_ways(raw, repetitions=repetitions, repeats_a_run=repeats)
    assert stored == full


def test_the_usual_line_is_stored_without_a_dict():
    raw = json.dumps(generated_lines()[0]).encode()
    fields, errors = answers.stored_fields(1, raw, AttemptBook(repetitions=1))
    assert errors == [] and fields.record is None


@pytest.mark.parametrize(
    "raw",
    [
        b'{"question_id": "q1", "language": "en", "retrieved_ids": [], "retrieved_values": [],'
        b' "answer": "a\\u0000b", "cited_ids": [], "declined": false}',
        b'\xef\xbb\xbf{"question_id": "q1"}',
        b'{"question_id": "q1", "language": "en", "retrieved_ids": [], "retrieved_values": [1e400],'
        b' "answer": "", "cited_ids": [], "declined": false}',
        b'{"question_id": "\\ud800", "language": "en", "retrieved_ids": [], "retrieved_values": [],'
        b' "answer": "", "cited_ids": [], "declined": false}',
        b"[1, 2]",
        b"not json",
        b'{"question_id": "q1", "question_id": 3}',
        b'{"question_id": 3, "question_id": "q1", "language": "en", "retrieved_ids": [],'
        b' "retrieved_values": [1e29, 100000000000000000000000000000], "answer": "\\ud83d\\ude00",'
        b' "cited_ids": [], "declined": false}',
        b'{"question_id": "q1", "language": "en", "retrieved_ids": [], "retrieved_values": [],'
        b' "answer": "\\ud800", "cited_ids": [], "declined": false}',
    ],
)
def test_lines_json_reads_oddly_get_the_full_checks_verdict(monkeypatch, raw):
    fast, full = both_ways(monkeypatch, raw)
    assert fast == full
    stored, full = stored_both_ways(raw)
    assert stored == full


@pytest.mark.parametrize("depth", [300, 1010, 1100])
def test_a_line_nested_past_msgspecs_depth_is_stored_as_the_full_check_reads_it(depth):
    # msgspec stops before orjson's limit (1024): the full check reads it with orjson.
    raw = (
        b'{"question_id": "q1", "language": "en", "retrieved_ids": [], "retrieved_values": [],'
        b' "answer": "", "cited_ids": [], "declined": false, "x": ' + b"[" * depth + b"]" * depth + b"}"
    )
    stored, full = stored_both_ways(raw)
    assert stored == full
    assert (stored[0] is None) == (depth > 1024)


def test_an_attempt_given_twice_is_found_on_the_fast_path_too(monkeypatch):
    raw = json.dumps(generated_lines()[0]).encode()
    book = AttemptBook(repetitions=1)
    assert answers.check_answer_line(1, raw, book)[1] == []
    record, errors = answers.check_answer_line(2, raw, book)
    assert record is None and [e.field for e in errors] == ["question_id"]


def generated_lines():
    questions = synthetic.generate_question_set(questions=200, seed=11)
    return synthetic.generate_run(question_set=questions, answers=200, seed=12)


def test_the_usual_generated_line_takes_the_fast_path():
    """Without this the agreement above could hold with a fast path that
    never accepts a line."""
    lines = generated_lines()
    timed = [line for line in lines if "submitted_at" in line and line.get("status", "ok") == "ok"]
    assert timed and all("tool_calls" in line for line in timed[:20])
    taken = [typed.usual_line(json.loads(json.dumps(line)), 1) is not None for line in timed]
    assert all(taken)
    moments = typed.usual_line(json.loads(json.dumps(timed[0])), 1)
    assert moments["submitted_at"].tzinfo is not None and moments["tool_calls"]


QUESTION_VALUES = {
    "question": ["What was it?", None, 3],
    "reference": ["It was 5.", None],
    "expected_series": ["EDU_PRIM_COMPL", "x" * 201, ""],
    "expected_period": ["2015", "y" * 101],
    "expected_unit": ["percent"],
    "expected_caveats": [[], ["provisional"], [1], "provisional", None],
    "stratum": ["a", "a\x07", ""],
    "split": ["tuning", "sealed", "test", None],
    "cluster": ["doc-1", "doc\n1", None],
    "follow_up": [None, {"text": "Go on.", "max_turns": 2}, {"text": ""}],
    "notes": ["kept as it is"],
}


@st.composite
def question_line(draw):
    line = {
        "question_id": mostly(draw, st.just("q000001"), TEXT),
        "language": mostly(draw, st.sampled_from(["en", "fr", "es-MX"]), st.sampled_from(["", "e n"])),
        "expected_behaviour": mostly(
            draw, st.sampled_from(["answer", "decline"]), st.sampled_from(["no", 1])
        ),
        "expected_values": mostly(
            draw, st.sampled_from([[87.6], [], [1, 2.5]]), st.sampled_from([[True], ["1"], 1])
        ),
    }
    for name in draw(st.lists(st.sampled_from(sorted(QUESTION_VALUES)), max_size=4)):
        line[name] = draw(st.sampled_from(QUESTION_VALUES[name]))
    if draw(st.integers(0, 5)) == 0:
        del line[draw(st.sampled_from(sorted(line)))]
    return line


@settings(max_examples=int(os.environ.get("HYPOTHESIS_EXAMPLES", "600")), deadline=None)
@given(line=question_line())
def test_the_usual_question_check_and_every_rule_agree_on_every_question_line(line):
    fast = questions.question_errors(3, line)
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(questions, "_usual_question", lambda record: False)
        full = questions.question_errors(3, line)
    assert fast == full


def test_the_usual_generated_question_takes_the_short_check():
    generated = synthetic.generate_question_set(questions=200, seed=11)
    assert all(map(questions._usual_question, generated))


@st.composite
def valid_timed_line(draw):
    """A valid line with any of the timing fields, tool calls (with other
    ``*_at`` keys too, which the full check parses) and overhead events."""
    line = {
        "question_id": "q000001",
        "language": "en",
        "retrieved_ids": [],
        "retrieved_values": [],
        "answer": "",
        "cited_ids": [],
        "declined": False,
        "status": draw(st.sampled_from(["ok", None, "error", "timeout"])),
        "submitted_at": "2026-03-02T20:08:34.131Z",
    }
    for name in draw(st.lists(st.sampled_from(["received_at", "first_token_at", "stopped_at"]), unique=True)):
        line[name] = draw(VALID_STAMPS)
    calls = []
    for index in range(draw(st.integers(0, 3))):
        call = {"id": f"call-{index}"}
        for key in draw(st.lists(st.sampled_from(["started_at", "ended_at", "queued_at"]), unique=True)):
            call[key] = draw(VALID_STAMPS)
        if "started_at" in call and "ended_at" in call:
            call["ended_at"] = max(call["started_at"], call["ended_at"], key=datetime.fromisoformat)
        calls.append(call)
    if draw(st.booleans()):
        line["tool_calls"] = calls
    if draw(st.booleans()):
        line["overhead"] = [
            {
                "kind": "card_assembly",
                "started_at": "2026-03-02T20:08:35Z",
                "ended_at": "2026-03-02T20:08:36Z",
            }
        ]
    return line


@settings(max_examples=int(os.environ.get("HYPOTHESIS_EXAMPLES", "600")), deadline=None)
@given(line=valid_timed_line())
def test_a_checked_lines_moments_are_those_the_full_check_keeps(line):
    # What a scoring chunk parses of a stored line, without checking it again.
    raw = json.dumps(line, ensure_ascii=False).encode()
    moments = {}
    record, errors = answers.check_answer_line(7, raw, repetitions=1, moments=moments)
    assert errors == []
    checked = timing.checked_moments(record)
    # Only the calls' span is taken from theirs: their order is free.
    for kept in (checked, moments):
        if "tool_calls" in kept:
            kept["tool_calls"] = sorted(kept["tool_calls"])
    assert checked == moments
