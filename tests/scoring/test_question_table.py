"""The question set in columns (scoring.question_table) gives back each
question as scoring reads it."""

from scoring import synthetic
from scoring.measures import named_clusters
from scoring.question_table import QuestionTable, scoring_questions


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
