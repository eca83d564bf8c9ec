import io
import json

import pytest

from scoring.logfile import (
    LineError,
    LogFileError,
    check_answer_line,
    encoding_problem,
    iter_raw_lines,
    label_problem,
    language_problem,
    question_id_problem,
    read_answers,
    read_header,
    read_questions,
    set_name_problem,
)

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
    assert check_answer_line(1, good) == (GOOD, [])
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
