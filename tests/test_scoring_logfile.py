import json

import pytest

from scoring.logfile import LineError, LogFileError, read_answers, read_header, read_questions

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
