"""The question set in columns (scoring.question_table) gives back each
question as scoring reads it."""

import json

from scoring import synthetic
from scoring.logfile import LogFileError
from scoring.measures import named_clusters
from scoring.question_table import PART_BYTES, QuestionTable, scoring_questions


def test_each_question_comes_back_as_it_was_added():
    questions = synthetic.generate_question_set(questions=300, seed=5)
    questions[3] = {**questions[3], "cluster": "doc-1", "expected_values": []}
    questions[7] = {**questions[7], "cluster": "doc-1", "stratum": None}
    questions[9] = {**questions[9], "cluster": "doc-2", "expected_values": [1.5, -2.0, 3.0]}
    table = QuestionTable(("language", "stratum", "split"))
    for question in questions:
        table.add(question)
    assert len(table) == 300 and list(table) == [q["question_id"] for q in questions]
    for question in questions:
        kept = table[question["question_id"]]
        assert kept["expected_behaviour"] == question["expected_behaviour"]
        assert kept.get("expected_values") == tuple(question["expected_values"])
        assert kept.get("cluster") == question.get("cluster")
        for name in ("language", "stratum", "split"):
            assert kept.get(name) == question.get(name)
        assert kept.get("not a slice field", "none") == "none"
    assert "q-missing" not in table and questions[0]["question_id"] in table
    assert named_clusters(table) == {
        questions[3]["question_id"]: "doc-1",
        questions[7]["question_id"]: "doc-1",
        questions[9]["question_id"]: "doc-2",
    }


def test_a_set_file_is_read_into_columns(tmp_path):
    questions = synthetic.generate_question_set(questions=50, seed=6)
    path = tmp_path / "questions_set-s.jsonl"
    synthetic.write_jsonl(path, questions, header={"set_version": "s"})
    table = scoring_questions(path, ("language",))
    assert [table[q["question_id"]]["expected_values"] for q in questions] == [
        tuple(q["expected_values"]) for q in questions
    ]


def read_both_ways(path, slice_fields=("language", "stratum")):
    """The set read whole by one process and in parts by two, a line or a
    few lines a part: (table, None) or (None, the error) each."""
    results = []
    for workers, part_bytes in ((1, PART_BYTES), (2, 300), (2, 2000)):
        try:
            results.append(
                (scoring_questions(path, slice_fields, workers=workers, part_bytes=part_bytes), None)
            )
        except LogFileError as error:
            results.append((None, (error.total, [str(e) for e in error.errors])))
    return results


def as_rows(table):
    return (
        None
        if table is None
        else [(question_id, *table.row(n).items()) for n, question_id in enumerate(table)]
    )


def test_a_set_read_in_parts_is_the_set_read_whole(tmp_path):
    questions = synthetic.generate_question_set(questions=400, seed=7)
    for index in range(0, 400, 9):
        questions[index] = {**questions[index], "cluster": f"doc-{index % 4}"}
    path = tmp_path / "questions_set-p.jsonl"
    synthetic.write_jsonl(path, questions, header={"set_version": "p"})
    (whole, whole_error), (parts, parts_error), (few, few_error) = read_both_ways(path)
    assert whole_error is parts_error is few_error is None
    assert as_rows(parts) == as_rows(few) == as_rows(whole) and len(whole) == 400
    assert [parts[q["question_id"]].get("cluster") for q in questions] == [
        q.get("cluster") for q in questions
    ]


def test_a_bad_set_read_in_parts_gives_the_errors_read_whole(tmp_path):
    questions = synthetic.generate_question_set(questions=300, seed=8)
    lines = [json.dumps({"set_version": "b", "follow_up": "not an object"})]
    lines += [json.dumps(q, ensure_ascii=False) for q in questions]
    lines[5] = lines[5].replace('"expected_behaviour": "answer"', '"expected_behaviour": "maybe"')
    lines[40] = "{not json"
    lines[41] = ""  # blank lines are skipped
    lines[120] = "\ufeff" + lines[120]  # a byte-order mark past the first line is no BOM
    lines[200] = json.dumps(questions[10])  # repeated across parts
    lines[250] = json.dumps(questions[248])  # repeated on the next line, within a part of a few
    path = tmp_path / "questions_set-b.jsonl"
    path.write_text("\ufeff" + "\n".join(lines) + "\n")
    (_, whole_error), (_, parts_error), (_, few_error) = read_both_ways(path)
    assert parts_error == few_error == whole_error
    total, errors = whole_error
    assert total == 6 and errors[0].startswith("line 1, field follow_up")
    assert [e for e in errors if "already on line" in e] == [
        f"line 201, field question_id: {questions[10]['question_id']!r} already on line 12",
        f"line 251, field question_id: {questions[248]['question_id']!r} already on line 250",
    ]


def test_more_errors_than_kept_read_in_parts_keep_the_same_first_ones(tmp_path):
    questions = synthetic.generate_question_set(questions=500, seed=9)
    lines = [json.dumps({**q, "expected_values": "x"} if i % 2 else q) for i, q in enumerate(questions)]
    lines += [json.dumps(questions[2])]  # repeated, past the 200 errors kept
    path = tmp_path / "questions_set-m.jsonl"
    path.write_text("\n".join(lines) + "\n")
    (_, whole_error), (_, parts_error), (_, few_error) = read_both_ways(path)
    assert parts_error == few_error == whole_error and whole_error[0] == 251 and len(whole_error[1]) == 200
