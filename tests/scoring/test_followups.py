import json

import pytest

from scoring.__main__ import main
from scoring.logfile import (
    LineError,
    LogFileError,
    follow_up_counts,
    follow_up_summary,
    label_follow_ups,
    read_answers,
    read_questions,
)
from scoring.runner import score_file

ANSWER = {
    "question_id": "a01",
    "language": "en",
    "retrieved_ids": [],
    "retrieved_values": [],
    "answer": "Which year do you mean?",
    "cited_ids": [],
    "declined": False,
}
QUESTION = {"question_id": "a01", "language": "en", "expected_behaviour": "answer", "expected_values": [1.0]}
DECLARED = {"text": "The latest year available.", "max_turns": 2}


def write(tmp_path, *records, name="file.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def errors_of(reader, path):
    with pytest.raises(LogFileError) as caught:
        list(reader(path))
    return caught.value.errors


def test_it_reads_a_declared_follow_up_on_a_question(tmp_path):
    [question] = read_questions(write(tmp_path, {**QUESTION, "follow_up": DECLARED}))
    assert question["follow_up"] == DECLARED


def test_a_question_without_a_follow_up_declares_none(tmp_path):
    [question] = read_questions(write(tmp_path, QUESTION))
    assert question["follow_up"] is None


@pytest.mark.parametrize(
    ("follow_up", "field", "message"),
    [
        ("ask again", "follow_up", 'follow_up must be an object, not "ask again"'),
        ({"max_turns": 2}, "follow_up.text", "missing"),
        ({"text": " ", "max_turns": 2}, "follow_up.text", "empty"),
        ({"text": "More?"}, "follow_up.max_turns", "missing"),
        (
            {"text": "More?", "max_turns": 1},
            "follow_up.max_turns",
            "must be a whole number from 2 to 20, the turns an attempt may take with its follow-ups, not 1",
        ),
        (
            {"text": "More?", "max_turns": 2, "turns": 3},
            "follow_up.turns",
            'is not a follow-up field: only "text" and "max_turns" are',
        ),
    ],
)
def test_it_names_the_line_and_field_of_a_bad_follow_up(tmp_path, follow_up, field, message):
    path = write(tmp_path, QUESTION | {"question_id": "a00"}, {**QUESTION, "follow_up": follow_up})
    assert errors_of(read_questions, path) == [LineError(2, field, message)]


def test_it_reads_turns_and_follow_ups_as_logged(tmp_path):
    follow_ups = [{"text": "The latest year available.", "kind": "protocol"}]
    [logged] = read_answers(write(tmp_path, {**ANSWER, "turns": 2, "follow_ups": follow_ups}))
    assert (logged.record["turns"], logged.record["follow_ups"]) == (2, follow_ups)


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"turns": 0}, "turns", "must be a whole number from 1 to 20, not 0"),
        ({"turns": "2"}, "turns", 'must be a whole number from 1 to 20, not "2"'),
        ({"follow_ups": "again"}, "follow_ups", 'must be a list of follow-ups, not "again"'),
        ({"follow_ups": ["again"]}, "follow_ups[0]", 'must be an object {"text": ..., "kind": ...}'),
        ({"follow_ups": [{"kind": "resume"}]}, "follow_ups[0].text", "missing"),
        (
            {"follow_ups": [{"text": "go on", "kind": "nudge"}]},
            "follow_ups[0].kind",
            'must be "protocol", "ad_hoc" or "resume", not "nudge"',
        ),
        (
            {"follow_ups": [{"text": "go on"}]},
            "follow_ups[0].kind",
            'missing: say "protocol", "ad_hoc" or "resume"',
        ),
        (
            {"turns": 2, "follow_ups": [{"text": "a", "kind": "ad_hoc"}, {"text": "b", "kind": "resume"}]},
            "turns",
            "is 2, but the line gives 2 follow-ups: an attempt with them takes at least 3 turns",
        ),
    ],
)
def test_it_refuses_bad_turns_and_follow_ups(tmp_path, fields, field, message):
    assert errors_of(read_answers, write(tmp_path, {**ANSWER, **fields})) == [LineError(1, field, message)]


def test_a_protocol_follow_up_with_the_declared_text_stays_protocol():
    record = {"follow_ups": [{"text": DECLARED["text"], "kind": "protocol"}]}
    assert label_follow_ups(record, DECLARED) == (2, [{"text": DECLARED["text"], "kind": "protocol"}], [])


def test_a_protocol_follow_up_with_other_text_is_counted_ad_hoc_with_a_warning():
    record = {"turns": 2, "follow_ups": [{"text": "Say 2023.", "kind": "protocol"}]}
    assert label_follow_ups(record, DECLARED) == (
        2,
        [{"text": "Say 2023.", "kind": "ad_hoc", "logged_kind": "protocol"}],
        [
            "follow_ups[0] is logged as protocol, but its text is not the one the set declares: counted as ad hoc"
        ],
    )


def test_a_protocol_follow_up_where_none_is_declared_is_counted_ad_hoc():
    record = {"follow_ups": [{"text": "Say 2023.", "kind": "protocol"}]}
    turns, follow_ups, warnings = label_follow_ups(record, None)
    assert turns == 2
    assert [item["kind"] for item in follow_ups] == ["ad_hoc"]
    assert warnings == [
        "follow_ups[0] is logged as protocol, but the set declares no follow-up for this question: "
        "counted as ad hoc"
    ]


def test_turns_over_the_declared_max_are_flagged():
    record = {"turns": 4, "follow_ups": [{"text": "Go on.", "kind": "resume"}]}
    assert label_follow_ups(record, DECLARED) == (
        4,
        [{"text": "Go on.", "kind": "resume"}],
        ["took 4 turns, more than the 2 the set declares"],
    )


def test_an_attempt_without_follow_ups_took_one_turn():
    assert label_follow_ups({}, DECLARED) == (1, [], [])


def test_it_counts_attempts_by_the_kinds_of_follow_up_they_took():
    protocol, ad_hoc, resume = ({"text": "t", "kind": kind} for kind in ("protocol", "ad_hoc", "resume"))
    counts = follow_up_counts([[], [protocol], [protocol, protocol], [ad_hoc, resume], [resume]])
    assert counts == {"attempts": 4, "protocol": 2, "ad_hoc": 1, "resume": 2}
    assert follow_up_summary(counts) == "4 attempts took follow-ups: 2 by protocol, 1 ad hoc, 2 resumed"
    assert follow_up_summary(follow_up_counts([[resume]])) == (
        "1 attempt took follow-ups: 0 by protocol, 0 ad hoc, 1 resumed"
    )


def cli_files(tmp_path):
    questions = write(
        tmp_path,
        {**QUESTION, "follow_up": DECLARED},
        {**QUESTION, "question_id": "a02"},
        {**QUESTION, "question_id": "a03"},
        name="questions.jsonl",
    )
    run = write(
        tmp_path,
        {**ANSWER, "follow_ups": [{"text": DECLARED["text"], "kind": "protocol"}]},
        {**ANSWER, "question_id": "a02", "follow_ups": [{"text": DECLARED["text"], "kind": "protocol"}]},
        {**ANSWER, "question_id": "a03", "turns": 3, "follow_ups": [{"text": "Go on.", "kind": "resume"}]},
        name="run.jsonl",
    )
    return run, questions


def test_the_cli_prints_the_follow_up_counts(tmp_path, capsys):
    run, questions = cli_files(tmp_path)
    assert main([str(run), "--questions", str(questions)]) == 0
    lines = capsys.readouterr().out.splitlines()
    # a02 declares no follow-up: its "protocol" one is counted ad hoc.
    assert "3 attempts took follow-ups: 1 by protocol, 1 ad hoc, 1 resumed" in lines


def test_the_cli_gives_the_follow_up_counts_in_json(tmp_path, capsys):
    run, questions = cli_files(tmp_path)
    assert main([str(run), "--questions", str(questions), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["follow_ups"] == {
        "attempts": 3,
        "protocol": 1,
        "ad_hoc": 1,
        "resume": 1,
        "summary": "3 attempts took follow-ups: 1 by protocol, 1 ad hoc, 1 resumed",
    }


def test_the_cli_prints_no_follow_up_line_for_a_run_without_any(tmp_path, capsys):
    _, questions = cli_files(tmp_path)
    run = write(tmp_path, ANSWER, name="plain.jsonl")
    assert main([str(run), "--questions", str(questions)]) == 0
    assert "took follow-ups" not in capsys.readouterr().out


SET_WIDE = {"text": "Use the latest figures.", "max_turns": 3}


def test_a_follow_up_in_the_header_is_the_sets_for_each_question_without_its_own(tmp_path):
    path = write(
        tmp_path,
        {"set_version": "fu-2", "follow_up": SET_WIDE},
        {**QUESTION, "follow_up": DECLARED},
        {**QUESTION, "question_id": "a02"},
    )
    assert [question["follow_up"] for question in read_questions(path)] == [DECLARED, SET_WIDE]


def test_a_bad_follow_up_in_the_header_names_the_header_line_and_field(tmp_path):
    path = write(tmp_path, {"set_version": "fu-2", "follow_up": {"text": "", "max_turns": 3}}, QUESTION)
    assert errors_of(read_questions, path) == [LineError(1, "follow_up.text", "empty")]


def test_the_cli_labels_follow_ups_against_the_sets_own_protocol(tmp_path, capsys):
    questions = write(
        tmp_path,
        {"set_version": "fu-2", "follow_up": SET_WIDE},
        QUESTION,
        {**QUESTION, "question_id": "a02", "follow_up": DECLARED},
        name="questions.jsonl",
    )
    run = write(
        tmp_path,
        {**ANSWER, "follow_ups": [{"text": SET_WIDE["text"], "kind": "protocol"}]},
        {**ANSWER, "question_id": "a02", "follow_ups": [{"text": SET_WIDE["text"], "kind": "protocol"}]},
        name="run.jsonl",
    )
    assert main([str(run), "--questions", str(questions)]) == 0
    assert (
        "2 attempts took follow-ups: 1 by protocol, 1 ad hoc, 0 resumed"
        in capsys.readouterr().out.splitlines()
    )


def test_the_combined_form_labels_follow_ups_against_its_own_lines_and_header_on_every_core(tmp_path):
    """Counted as the chunks are scored: the same on one core and two, with
    chunks small enough that each line is a chunk of its own."""
    combined = {"expected_behaviour": "answer", "expected_values": [1.0]}
    run = write(
        tmp_path,
        {"assistant_version": "a-1", "set_version": "fu-2", "follow_up": SET_WIDE},
        {
            **ANSWER,
            **combined,
            "follow_up": DECLARED,
            "follow_ups": [{"text": DECLARED["text"], "kind": "protocol"}],
        },
        {
            **ANSWER,
            **combined,
            "question_id": "a02",
            "follow_ups": [{"text": SET_WIDE["text"], "kind": "protocol"}],
        },
        {
            **ANSWER,
            **combined,
            "question_id": "a03",
            "follow_ups": [{"text": "Say 2023.", "kind": "protocol"}],
        },
        name="combined.jsonl",
    )
    for workers in (1, 2):
        scores = score_file(run, None, workers=workers, chunk_bytes=64)
        assert (
            scores.follow_ups["summary"] == "3 attempts took follow-ups: 2 by protocol, 1 ad hoc, 0 resumed"
        )
