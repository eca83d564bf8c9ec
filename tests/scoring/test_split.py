import json

import pytest

from scoring.split import SplitStated, main, seal_a_third, seal_a_third_of_file


def questions(count, **fields):
    return [
        {
            "question_id": f"q{i:03}",
            "language": "en",
            "expected_behaviour": "answer",
            "expected_values": [],
            **fields,
        }
        for i in range(count)
    ]


def test_it_draws_the_same_third_from_the_same_seed():
    set_questions = questions(30)
    first = seal_a_third(set_questions, seed=7)
    assert len(first.sealed) == 10
    assert seal_a_third(list(reversed(set_questions)), seed=7).sealed == first.sealed
    assert seal_a_third(set_questions, seed=8).sealed != first.sealed


def test_it_seals_about_a_third_of_each_language_and_stratum():
    set_questions = (
        questions(12, stratum="level")
        + [{**q, "question_id": "t" + q["question_id"]} for q in questions(9, stratum="trend")]
        + [{**q, "question_id": "f" + q["question_id"], "language": "fr"} for q in questions(6)]
        + [
            {**q, "question_id": "d" + q["question_id"], "expected_behaviour": "decline"}
            for q in questions(3)
        ]
    )
    draw = seal_a_third(set_questions, seed=3)
    sealed_by_cell = {}
    for question in set_questions:
        cell = (question["language"], question.get("stratum"), question["expected_behaviour"])
        sealed_by_cell[cell] = sealed_by_cell.get(cell, 0) + (question["question_id"] in draw.sealed)
    assert sealed_by_cell == {
        ("en", "level", "answer"): 4,
        ("en", "trend", "answer"): 3,
        ("fr", None, "answer"): 2,
        ("en", None, "decline"): 1,
    }
    assert draw.cells[("en", "level", "answer")] == (4, 12)


def test_each_small_stratum_gets_a_floor_or_a_ceiling_of_its_third_and_the_whole_a_third():
    set_questions = [
        {"question_id": f"q{i}", "language": "en", "expected_behaviour": "answer", "stratum": f"s{i % 7}"}
        for i in range(20)
    ]
    draw = seal_a_third(set_questions, seed=1)
    assert len(draw.sealed) == 7  # 20 / 3, rounded
    for sealed, total in draw.cells.values():
        assert sealed in (total // 3, -(-total // 3))


def test_it_refuses_a_set_that_states_its_splits_already():
    set_questions = questions(3)
    set_questions[1]["split"] = "tuning"
    with pytest.raises(SplitStated, match="q001 states its split already"):
        seal_a_third(set_questions, seed=1)


def test_the_cli_writes_the_set_with_every_question_split(tmp_path, capsys):
    source = tmp_path / "questions_set-2.0.jsonl"
    lines = [{"set_version": "2.0"}, *questions(6)]
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "sealed.jsonl"
    assert main([str(source), "--seed", "5", "--out", str(out)]) == 0
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert written[0] == {"set_version": "2.0"}
    assert [q["split"] for q in written[1:]].count("sealed") == 2
    assert {q["question_id"] for q in written[1:] if q["split"] == "sealed"} == seal_a_third_of_file(
        source, seed=5
    ).sealed
    assert "sealed 2 of 6 questions (seed 5)" in capsys.readouterr().err


def test_the_cli_refuses_a_file_with_splits(tmp_path, capsys):
    source = tmp_path / "set.jsonl"
    source.write_text(json.dumps({**questions(1)[0], "split": "sealed"}) + "\n")
    assert main([str(source), "--seed", "5"]) == 2
    assert "line 1, field split: question q000 states its split already" in capsys.readouterr().err
