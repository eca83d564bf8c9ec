import io
import json

import pytest

from scoring.logfile import (
    LineError,
    LogFileError,
    RunPlan,
    check_answer_line,
    encoding_problem,
    iter_raw_lines,
    label_problem,
    language_problem,
    plan_from_header,
    question_id_problem,
    read_answers,
    read_header,
    read_plan,
    read_questions,
    set_name_problem,
)
from scoring.runner import score_file
from scoring.timing import timing_errors

GOOD = {
    "question_id": "a01",
    "language": "en",
    "retrieved_ids": ["X_SERIES"],
    "retrieved_values": [1.5],
    "answer": "It was 1.5.",
    "cited_ids": ["X_SERIES"],
    "declined": False,
}


def write(tmp_path, *lines, name="run.jsonl"):
    path = tmp_path / name
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    return path


def errors_of(path, **kwargs) -> list[LineError]:
    with pytest.raises(LogFileError) as caught:
        list(read_answers(path, **kwargs))
    return caught.value.errors


def test_it_reads_a_header_and_the_answers_after_it(tmp_path):
    path = write(
        tmp_path,
        {"assistant_version": "a-1", "set_version": "1.2"},
        GOOD,
        {**GOOD, "question_id": "a02"},
    )
    assert read_header(path) == {"assistant_version": "a-1", "set_version": "1.2"}
    assert [(a.line, a.record["question_id"]) for a in read_answers(path)] == [
        (2, "a01"),
        (3, "a02"),
    ]


def test_it_keeps_each_line_as_written(tmp_path):
    line = '{"question_id":"a01", "language":"en","retrieved_ids":[],"retrieved_values":[],"answer":"x","cited_ids":[],"declined":true,"latency_ms":12}'
    path = write(tmp_path, line)
    (logged,) = read_answers(path)
    assert logged.text == line


def test_it_names_every_bad_line_with_its_reason(tmp_path):
    path = write(
        tmp_path,
        GOOD,
        "{not json",
        "[1, 2]",
        {k: v for k, v in GOOD.items() if k != "declined"} | {"question_id": "a03"},
        GOOD | {"question_id": "a04", "declined": "no"},
        GOOD | {"question_id": "zz"},
        GOOD,
        GOOD | {"question_id": "a05", "retrieved_values": ["7"]},
    )
    errors = errors_of(path, question_ids={"a01", "a03", "a04", "a05"})
    assert [(e.line, e.field) for e in errors] == [
        (2, None),
        (3, None),
        (4, "declined"),
        (5, "declined"),
        (6, "question_id"),
        (7, "question_id"),
        (8, "retrieved_values"),
    ]
    assert errors[0].message.startswith("not JSON")
    assert errors[1].message == "not a JSON object but list"
    assert errors[2].message == "missing"
    assert errors[3].message == 'declined must be true or false, not "no"'
    assert errors[4].message == "'zz' is not in the question set"
    assert errors[5].message == "'a01' already answered on line 1"
    assert str(errors[6]) == "line 8, field retrieved_values: must be a list of numbers"


def test_it_yields_nothing_from_a_file_that_is_bad_further_down(tmp_path):
    path = write(tmp_path, GOOD, "oops")
    answers = read_answers(path)
    with pytest.raises(LogFileError):
        next(answers)


def test_it_checks_retrieved_records(tmp_path):
    path = write(
        tmp_path,
        GOOD | {"retrieved_records": [{"id": "X", "values": [1], "caveats": "provisional"}, "x"]},
    )
    assert [str(e) for e in errors_of(path)] == [
        "line 1, field retrieved_records[0].caveats: must be a list of strings",
        "line 1, field retrieved_records[1]: must be an object",
    ]


def test_it_refuses_an_empty_file_and_bad_utf8(tmp_path):
    assert [str(e) for e in errors_of(write(tmp_path, ""))] == ["line 1: the file holds no answers"]
    path = tmp_path / "latin.jsonl"
    path.write_bytes(b'{"answer": "caf\xe9"}\n')
    assert [str(e) for e in errors_of(path)] == ["line 1: not UTF-8 text"]


def test_it_lists_the_first_errors_and_counts_them_all(tmp_path):
    path = write(tmp_path, *["nope"] * 250)
    with pytest.raises(LogFileError) as caught:
        list(read_answers(path, max_errors=200))
    assert (len(caught.value.errors), caught.value.total) == (200, 250)


def test_it_reads_the_example_question_set(example_dir):
    questions = read_questions(example_dir / "questions_set-1.2.jsonl")
    assert [q["question_id"] for q in questions] == [f"a0{i}" for i in range(1, 9)]
    assert questions[3]["expected_caveats"] == ["provisional"]
    assert questions[5]["expected_behaviour"] == "decline"
    assert questions[0]["split"] == "tuning"


def test_it_names_bad_questions(tmp_path):
    path = write(
        tmp_path,
        {"set_version": "9"},
        {
            "question_id": "q1",
            "language": "en",
            "expected_behaviour": "maybe",
            "expected_values": [],
        },
        {
            "question_id": "q2",
            "language": "en",
            "expected_behaviour": "answer",
            "expected_values": [1],
            "split": "secret",
        },
    )
    with pytest.raises(LogFileError) as caught:
        read_questions(path)
    assert [str(e) for e in caught.value.errors] == [
        'line 2, field expected_behaviour: must be "answer" or "decline"',
        'line 3, field split: must be "tuning" or "sealed"',
    ]


def test_it_takes_labels_of_letters_digits_and_a_few_marks():
    for label in ("assistant-1.3", "1.2", "bot_2+build.7", "A" * 100):
        assert label_problem(label) is None
    assert label_problem("") == "empty"
    assert label_problem("a" * 101) == "101 characters long, more than the 100 allowed"
    assert label_problem("slash/probe-1") == (
        "\"slash/probe-1\" holds '/'; a label holds only ASCII letters, digits, '.', '_', '-' and '+', "
        "starting with a letter or a digit"
    )
    assert label_problem(".hidden") == "\".hidden\" starts with '.'; a label starts with a letter or a digit"
    assert label_problem("v\x00") == (
        '"v\\u0000" holds the NUL character (\\u0000); a label holds only ASCII letters, digits, '
        "'.', '_', '-' and '+', starting with a letter or a digit"
    )
    assert set_name_problem("national statistics 2") is None
    assert set_name_problem("trailing ") is not None
    assert set_name_problem("a/b") is not None


def test_it_takes_printable_ids_and_short_language_codes():
    assert question_id_problem("Q 17 (revised)") is None
    assert question_id_problem("  ") == "empty"
    assert (
        question_id_problem("a\nb")
        == '"a\\nb" holds the control character U+000A; an id holds only printable characters'
    )
    for code in ("en", "fra", "pt-BR", "zh_Hant_TW", "sr-Latn-RS"):
        assert language_problem(code) is None
    for code in ("e", "english", "en-", "e" * 21, "en\x00"):
        assert language_problem(code) is not None


def test_it_refuses_a_nul_anywhere_in_an_answer_line():
    good = json.dumps(GOOD).encode()
    assert check_answer_line(1, good) == (GOOD | {"attempt": 1, "status": "ok"}, [])
    for changed, field in (
        (GOOD | {"answer": "a\x00"}, "answer"),
        (GOOD | {"retrieved_records": [{"id": "X", "caveats": ["c\x00"]}]}, "retrieved_records"),
        (GOOD | {"extra\x00": 1}, None),
    ):
        record, errors = check_answer_line(3, json.dumps(changed).encode())
        assert record is None
        assert [(e.line, e.field, e.message) for e in errors] == [
            (3, field, "holds the NUL character (\\u0000), which cannot be stored: remove it")
        ]
    # An escaped backslash before u0000 is text, not NUL.
    assert check_answer_line(1, json.dumps(GOOD | {"answer": "\\u0000"}).encode())[1] == []
    _, errors = check_answer_line(2, b'{"answer": "a\x00b"}')
    assert [str(e) for e in errors] == ["line 2: holds a NUL byte, which cannot be stored: remove it"]


def test_it_reads_an_overlong_line_without_holding_it():
    stream = io.BytesIO(b"short\n" + b"x" * 5000 + b"\r\n" + b"y" * 10 + b"\nlast")
    lines = list(iter_raw_lines(stream, max_line_bytes=10))
    assert [(number, raw, position, oversize) for number, raw, position, oversize in lines] == [
        (1, b"short\n", 6, 0),
        (2, b"x" * 13, 5008, 5000),
        (3, b"y" * 10 + b"\n", 5019, 0),
        (4, b"last", 5023, 0),
    ]
    unbounded = list(iter_raw_lines(io.BytesIO(b"a\nbb\n")))
    assert unbounded == [(1, b"a\n", 2, 0), (2, b"bb\n", 5, 0)]


def test_it_names_the_lines_over_the_limit(tmp_path):
    path = write(tmp_path, GOOD, GOOD | {"question_id": "a02", "answer": "x" * 3000})
    assert [str(e) for e in errors_of(path, max_line_bytes=2048)] == [
        "line 2: the line is 3.1 KB, longer than the limit of 2.0 KB a line (REVIEWAPP_MAX_ANSWER_KB)"
    ]
    assert len(list(read_answers(path))) == 2


def test_it_names_files_that_are_not_utf8_text():
    text = '{"set_version": "1"}\n'
    assert encoding_problem(text.encode()) is None
    assert encoding_problem(text.encode("utf-16")) == "this file is UTF-16: save it as UTF-8"
    assert encoding_problem(text.encode("utf-16-be")) == "this file is UTF-16: save it as UTF-8"
    assert encoding_problem(text.encode("utf-32")) == "this file is UTF-32: save it as UTF-8"
    assert encoding_problem(b"\x1f\x8b\x08\x00") == (
        "this file is gzip-compressed: decompress it (gunzip) and upload the .jsonl inside"
    )
    # One stray NUL is left for the line error that names its line.
    assert encoding_problem(text.encode() * 50 + b"\x00") is None


# Repeated attempts and attempts without an answer (spec 004).

QUESTIONS = {
    question_id: {
        "question_id": question_id,
        "language": "en",
        "expected_behaviour": "answer",
        "expected_values": [1.5],
    }
    for question_id in ("q1", "q2")
}


def attempt(question_id: str, number, **changes) -> dict:
    """A good answer line for ``number`` (left out when None) of ``question_id``."""
    line = GOOD | {"question_id": question_id} | changes
    return line if number is None else line | {"attempt": number}


def three_times(**changes) -> dict:
    return {"assistant_version": "a-1", "set_version": "1", "repetitions": 3} | changes


def timeout_line(question_id: str, number: int) -> dict:
    """An attempt stopped by the timeout, carrying none of an answer's fields."""
    return {
        "question_id": question_id,
        "language": "en",
        "attempt": number,
        "status": "timeout",
        "status_reason": "no final answer within 600 s",
        "submitted_at": "2026-03-01T10:00:00Z",
        "stopped_at": "2026-03-01T10:10:00Z",
    }


def timing_problem(record: dict, field: str) -> str:
    """What scoring.timing says about ``field`` of ``record``."""
    return dict(timing_errors(record))[field]


# Each bad input: the header, the answer lines after it, and the errors
# expected, as (line, field, message). Shared with tests/test_runs_repeats.py,
# which sends the same files through the app.
BAD_REPEATS = {
    "attempt out of range": (
        three_times(),
        [attempt("q1", 1), attempt("q1", 2), attempt("q1", 4)],
        [(4, "attempt", "must be a whole number from 1 to 3, the header's repetitions, not 4")],
    ),
    "attempt 0": (
        three_times(),
        [attempt("q1", 0)],
        [(2, "attempt", "must be a whole number from 1 to 3, the header's repetitions, not 0")],
    ),
    'attempt "2"': (
        three_times(),
        [attempt("q1", 1), attempt("q1", "2")],
        [(3, "attempt", 'must be a whole number from 1 to 3, the header\'s repetitions, not "2"')],
    ),
    "attempt given twice": (
        three_times(),
        [attempt("q1", 1), attempt("q1", 2), attempt("q2", 1), attempt("q1", 2)],
        [(5, "attempt", "attempt 2 of 'q1' already given on line 3")],
    ),
    "a gap": (
        three_times(),
        [attempt("q1", 1), attempt("q1", 3), attempt("q2", 1), attempt("q2", 2)],
        [
            (
                3,
                "attempt",
                "'q1' has no attempt 2 (attempt 1 on line 2, attempt 3 on line 3): "
                "a question's attempts are numbered from 1 without gaps",
            )
        ],
    ),
    "no attempt with two repetitions": (
        three_times(repetitions=2),
        [attempt("q1", 1), attempt("q1", None)],
        [
            (
                3,
                "attempt",
                "missing: the header declares 2 repetitions, so every line says which attempt it is, from 1 to 2",
            )
        ],
    ),
    "a status outside the list": (
        three_times(),
        [attempt("q1", 1), timeout_line("q1", 2) | {"status": "crashed"}],
        [(3, "status", timing_problem({"status": "crashed"}, "status"))],
    ),
    "a timestamp without a zone": (
        three_times(),
        [attempt("q1", 1, submitted_at="2026-03-01T10:00:00")],
        [(2, "submitted_at", timing_problem({"submitted_at": "2026-03-01T10:00:00"}, "submitted_at"))],
    ),
    "received before submitted": (
        three_times(),
        [attempt("q1", 1, submitted_at="2026-03-01T10:00:05Z", received_at="2026-03-01T10:00:00Z")],
        [
            (
                2,
                "received_at",
                timing_problem(
                    {"submitted_at": "2026-03-01T10:00:05Z", "received_at": "2026-03-01T10:00:00Z"},
                    "received_at",
                ),
            )
        ],
    ),
    "negative latency": (
        three_times(),
        [attempt("q1", 1, latency_ms=-5)],
        [(2, "latency_ms", timing_problem({"latency_ms": -5}, "latency_ms"))],
    ),
    "latency that is not a number": (
        three_times(),
        [attempt("q1", 1, latency_ms="1200")],
        [(2, "latency_ms", timing_problem({"latency_ms": "1200"}, "latency_ms"))],
    ),
    "tool calls without ids": (
        three_times(),
        [attempt("q1", 1, tool_calls=[{"id": "call-1", "name": "search"}, {"name": "search"}])],
        [
            (
                2,
                "tool_calls[1].id",
                timing_problem({"tool_calls": [{"id": "c"}, {"name": "s"}]}, "tool_calls[1].id"),
            )
        ],
    ),
}


def errors_when_scored(path) -> list[tuple]:
    with pytest.raises(LogFileError) as caught:
        score_file(path, QUESTIONS)
    return [(e.line, e.field, e.message) for e in caught.value.errors]


@pytest.mark.parametrize("case", BAD_REPEATS)
def test_it_names_the_line_and_field_of_each_bad_attempt_and_timing(tmp_path, case):
    header, lines, expected = BAD_REPEATS[case]
    path = write(tmp_path, header, *lines)
    assert [(e.line, e.field, e.message) for e in errors_of(path, question_ids=set(QUESTIONS))] == expected
    assert errors_when_scored(path) == expected


def test_it_reads_a_header_that_only_gives_the_plan(tmp_path):
    path = write(tmp_path, {"repetitions": 2}, attempt("q1", 1), attempt("q1", 2))
    assert read_header(path) == {"repetitions": 2}
    assert read_plan(path) == (RunPlan(repetitions=2, timeout_s=600, repeats=None), [])


def test_it_reads_the_plan_with_its_defaults():
    assert plan_from_header({}) == (RunPlan(repetitions=1, timeout_s=600, repeats=None), [])
    assert plan_from_header({"repetitions": 3, "timeout_s": 900.0, "repeats": 17}) == (
        RunPlan(repetitions=3, timeout_s=900, repeats=17),
        [],
    )
    assert plan_from_header({"repeats": "run 2026-03-01"})[0].repeats == "run 2026-03-01"
    assert plan_from_header({"repetitions": None, "timeout_s": None}) == (RunPlan(), [])


def test_it_names_a_bad_plan_and_checks_the_file_against_the_defaults():
    plan, errors = plan_from_header({"repetitions": "3", "timeout_s": 1.5, "repeats": ["run-1"]}, line=2)
    assert plan == RunPlan(repetitions=1, timeout_s=600, repeats=None)
    assert [str(e) for e in errors] == [
        'line 2, field repetitions: must be a whole number from 1 to 100, not "3"',
        "line 2, field timeout_s: must be a whole number of seconds from 1 to 86400, not 1.5",
        'line 2, field repeats: must be the id of the run repeated, a number or a text, not ["run-1"]',
    ]
    for header, field, message in (
        ({"repetitions": 0}, "repetitions", "must be a whole number from 1 to 100, not 0"),
        ({"repetitions": True}, "repetitions", "must be a whole number from 1 to 100, not true"),
        ({"repetitions": 101}, "repetitions", "must be a whole number from 1 to 100, not 101"),
        ({"timeout_s": 0}, "timeout_s", "must be a whole number of seconds from 1 to 86400, not 0"),
        ({"timeout_s": "600"}, "timeout_s", 'must be a whole number of seconds from 1 to 86400, not "600"'),
        ({"repeats": 0}, "repeats", "a run id is a positive whole number or a text, not 0"),
        ({"repeats": 2**63}, "repeats", f"a run id is a positive whole number or a text, not {2**63}"),
        ({"repeats": " "}, "repeats", "empty"),
        ({"repeats": False}, "repeats", "must be the id of the run repeated, a number or a text, not false"),
    ):
        assert [(e.line, e.field, e.message) for e in plan_from_header(header)[1]] == [(1, field, message)]


def test_it_reads_the_clocks_a_header_states(tmp_path):
    # Spec 004: skew and precision are stated across systems; left out they
    # are not stated, never 0.
    assert (RunPlan().clock_skew_ms, RunPlan().clock_precision_ms) == (None, None)
    plan, errors = plan_from_header({"clock_skew_ms": -12.5, "clock_precision_ms": 1})
    assert (plan.clock_skew_ms, plan.clock_precision_ms, errors) == (-12.5, 1.0, [])
    assert plan_from_header({"clock_skew_ms": 0})[0].clock_skew_ms == 0.0
    path = write(tmp_path, {"clock_skew_ms": 3}, attempt("q1", 1))
    assert read_plan(path)[0].clock_skew_ms == 3.0


def test_it_names_a_bad_clock_statement():
    for header, field, message in (
        (
            {"clock_skew_ms": "12"},
            "clock_skew_ms",
            'must be a number of milliseconds (negative when the other clock is behind), not "12"',
        ),
        (
            {"clock_skew_ms": 90_000_000},
            "clock_skew_ms",
            "must be within a day (86400000 ms) either way, not 90000000",
        ),
        ({"clock_precision_ms": 0}, "clock_precision_ms", "must be a number of milliseconds above 0, not 0"),
        (
            {"clock_precision_ms": True},
            "clock_precision_ms",
            "must be a number of milliseconds above 0, not true",
        ),
    ):
        plan, errors = plan_from_header(header)
        assert [(e.line, e.field, e.message) for e in errors] == [(1, field, message)]
        assert (plan.clock_skew_ms, plan.clock_precision_ms) == (None, None)


def test_it_rejects_a_file_whose_header_declares_a_bad_plan(tmp_path):
    path = write(tmp_path, three_times(repetitions="3"), attempt("q1", 1), attempt("q1", 2))
    expected = [
        (1, "repetitions", 'must be a whole number from 1 to 100, not "3"'),
        (
            3,
            "attempt",
            'must be 1: the header declares no repetitions (add "repetitions" to it to log more attempts), '
            "not 2",
        ),
    ]
    assert [(e.line, e.field, e.message) for e in errors_of(path)] == expected
    assert errors_when_scored(path) == expected


def test_it_keeps_refusing_a_question_answered_twice_in_a_run_made_once(tmp_path):
    path = write(tmp_path, attempt("q1", None), attempt("q2", 1), attempt("q1", 1))
    expected = [(3, "question_id", "'q1' already answered on line 1")]
    assert [(e.line, e.field, e.message) for e in errors_of(path)] == expected
    assert errors_when_scored(path) == expected


def test_it_reads_three_attempts_of_each_question(tmp_path):
    lines = [attempt(q, n) for n in (1, 2, 3) for q in ("q1", "q2")]
    path = write(tmp_path, three_times(timeout_s=300, repeats="run-7"), *lines)
    assert read_plan(path) == (RunPlan(repetitions=3, timeout_s=300, repeats="run-7"), [])
    read = [
        (a.line, a.record["question_id"], a.record["attempt"], a.record["status"]) for a in read_answers(path)
    ]
    assert read == [
        (2, "q1", 1, "ok"),
        (3, "q2", 1, "ok"),
        (4, "q1", 2, "ok"),
        (5, "q2", 2, "ok"),
        (6, "q1", 3, "ok"),
        (7, "q2", 3, "ok"),
    ]
    assert score_file(path, QUESTIONS, chunk_bytes=200).answers == 6


def test_it_takes_fewer_attempts_than_planned_and_attempts_in_any_order(tmp_path):
    path = write(tmp_path, three_times(), attempt("q1", 2), attempt("q2", 1), attempt("q1", 1))
    assert [(a.record["question_id"], a.record["attempt"]) for a in read_answers(path)] == [
        ("q1", 2),
        ("q2", 1),
        ("q1", 1),
    ]
    assert score_file(path, QUESTIONS).answers == 3


def test_it_takes_an_attempt_that_timed_out_without_an_answer(tmp_path):
    empty = timeout_line("q2", 1) | {"status": "error", "answer": "", "retrieved_ids": [], "declined": None}
    path = write(tmp_path, three_times(), attempt("q1", 1), timeout_line("q1", 2), empty)
    records = [a.record for a in read_answers(path)]
    assert [(r["question_id"], r["attempt"], r["status"]) for r in records] == [
        ("q1", 1, "ok"),
        ("q1", 2, "timeout"),
        ("q2", 1, "error"),
    ]
    assert "answer" not in records[1]
    assert score_file(path, QUESTIONS).answers == 3


def test_it_still_wants_an_answer_from_a_line_that_says_ok(tmp_path):
    line = {name: value for name, value in attempt("q1", 1, status="ok").items() if name != "answer"}
    path = write(tmp_path, three_times(), line, timeout_line("q2", 1) | {"answer": 5, "cited_ids": ["x", 1]})
    assert [str(e) for e in errors_of(path)] == [
        "line 2, field answer: missing",
        "line 3, field answer: answer must be a string, not 5",
    ]


def test_it_names_the_attempt_a_run_made_once_cannot_have(tmp_path):
    _, errors = check_answer_line(4, json.dumps(attempt("q1", 2)).encode())
    assert [str(e) for e in errors] == [
        'line 4, field attempt: must be 1: the header declares no repetitions (add "repetitions" to it '
        "to log more attempts), not 2"
    ]
    record, errors = check_answer_line(4, json.dumps(attempt("q1", 2)).encode(), repetitions=2)
    assert (record["attempt"], record["status"], errors) == (2, "ok", [])


def test_it_keeps_the_attempt_a_rerun_line_repeats(tmp_path):
    # A re-run has its own run ID (the header's "repeats" names the run); each
    # line may name the attempt of that run it repeats, kept as logged.
    path = write(tmp_path, three_times(repeats="run-7"), attempt("q1", 1, repeats_attempt=2))
    assert [a.record["repeats_attempt"] for a in read_answers(path)] == [2]


@pytest.mark.parametrize("value", [0, -1, 1.5, "2", True, [2]])
def test_it_names_a_repeats_attempt_that_is_not_an_attempt_number(value):
    _, errors = check_answer_line(
        4, json.dumps(attempt("q1", 1, repeats_attempt=value)).encode(), repetitions=3
    )
    assert [str(e) for e in errors] == [
        "line 4, field repeats_attempt: must be a whole number from 1, the attempt of the repeated run "
        f"this line repeats, not {json.dumps(value)}"
    ]


def test_it_names_a_repeats_attempt_in_a_run_that_repeats_no_run(tmp_path):
    path = write(tmp_path, three_times(), attempt("q1", 1, repeats_attempt=2))
    expected = [
        (
            2,
            "repeats_attempt",
            'names an attempt of the run this one repeats, but the header names none: add "repeats" to it',
        )
    ]
    assert [(e.line, e.field, e.message) for e in errors_of(path)] == expected
    assert errors_when_scored(path) == expected


def test_it_names_a_question_a_rerun_answers_twice(tmp_path):
    header = {"assistant_version": "a-1", "repeats": "run-7"}
    path = write(
        tmp_path, header, attempt("q1", None, repeats_attempt=1), attempt("q1", None, repeats_attempt=1)
    )
    expected = [(3, "question_id", "'q1' already answered on line 2")]
    assert [(e.line, e.field, e.message) for e in errors_of(path)] == expected
    assert errors_when_scored(path) == expected
