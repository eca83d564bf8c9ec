import json

from scoring.measures import (
    Options,
    check_answer,
    merge_slice_counts,
    not_applicable,
    plain_counts,
    score_run,
    slice_counts,
)
from tests.conftest import SHARED_DATA

EXPECTED_SLICES = {
    "all": {
        "numeric_accuracy": {"k": 5, "n": 6},
        "citation_validity": {"k": 7, "n": 8},
        "refusal_accuracy": {"k": 1, "n": 2},
        "answer_rate": {"k": 6, "n": 6},
        "unsupported_numbers": {"k": 2, "n": 8},
        "unsupported_answers": {"k": 2, "n": 7},
    },
    "language=en": {
        "numeric_accuracy": {"k": 3, "n": 4},
        "citation_validity": {"k": 5, "n": 6},
        "refusal_accuracy": {"k": 1, "n": 2},
        "answer_rate": {"k": 4, "n": 4},
        "unsupported_numbers": {"k": 2, "n": 6},
        "unsupported_answers": {"k": 2, "n": 5},
    },
    "language=fr": {
        "numeric_accuracy": {"k": 2, "n": 2},
        "citation_validity": {"k": 2, "n": 2},
        "answer_rate": {"k": 2, "n": 2},
        "unsupported_numbers": {"k": 0, "n": 2},
        "unsupported_answers": {"k": 0, "n": 2},
    },
}


def running_example():
    rows = [json.loads(line) for line in (SHARED_DATA / "running_example.jsonl").read_text().splitlines()]
    return rows, {row["question_id"]: row for row in rows}


def question(behaviour="answer", values=(41.0,)):
    return {"expected_behaviour": behaviour, "expected_values": list(values)}


def answer(text, *, declined=False, retrieved=(41.0,), cited=(), retrieved_ids=("A_SERIES",)):
    return {
        "question_id": "q1",
        "language": "en",
        "answer": text,
        "declined": declined,
        "retrieved_values": list(retrieved),
        "retrieved_ids": list(retrieved_ids),
        "cited_ids": list(cited),
    }


def test_it_gives_the_running_example_exactly():
    rows, questions = running_example()
    scores = score_run(rows, questions)
    assert scores.answers == 8
    assert plain_counts(scores.slices) == EXPECTED_SLICES
    assert [(f.question_id, f.kind) for f in scores.findings] == [
        ("a03", "numeric"),
        ("a03", "unsupported"),
        ("a06", "refusal"),
        ("a06", "unsupported"),
        ("a07", "citation"),
    ]
    assert scores.findings[0].detail == "expected 41; the answer gave 35, 2020"
    assert scores.findings[4].detail == "cited EDU_STATS_2024, which was not retrieved"


def test_it_counts_a_hit_only_when_an_answer_states_the_expected_value():
    hit = check_answer(answer("It was 41 in 2020."), question())
    miss = check_answer(answer("It was 40 in 2020."), question())
    assert (hit.count("numeric_accuracy_k"), hit.count("numeric_accuracy_n")) == (1, 1)
    assert (miss.count("numeric_accuracy_k"), miss.count("numeric_accuracy_n")) == (0, 1)


def test_it_fails_numeric_accuracy_and_answer_rate_for_a_wrong_refusal():
    check = check_answer(answer("I cannot say; 41 maybe.", declined=True), question())
    assert check.count("numeric_accuracy_k") == 0
    assert (check.count("answer_rate_k"), check.count("answer_rate_n")) == (0, 1)
    assert [f.kind for f in check.findings] == ["numeric", "declined"]


def test_it_scores_refusals_only_on_questions_expected_to_be_declined():
    right = check_answer(answer("No.", declined=True), question("decline", ()))
    wrong = check_answer(answer("About 12."), question("decline", ()))
    assert (right.count("refusal_accuracy_k"), right.count("refusal_accuracy_n")) == (1, 1)
    assert (wrong.count("refusal_accuracy_k"), wrong.count("refusal_accuracy_n")) == (0, 1)
    assert right.count("numeric_accuracy_n") == right.count("answer_rate_n") == 0


def test_it_counts_every_citation_as_the_reference_script_does():
    check = check_answer(answer("41", cited=("A_SERIES", "A_SERIES", "OTHER_ONE", "OTHER_ONE")), question())
    assert (check.count("citation_validity_k"), check.count("citation_validity_n")) == (2, 4)
    assert [f.detail for f in check.findings] == ["cited OTHER_ONE, which was not retrieved"] * 2


def test_it_counts_each_cited_id_once_when_asked_for_distinct_counts():
    check = check_answer(
        answer("41", cited=("A_SERIES", "A_SERIES", "OTHER_ONE", "OTHER_ONE")),
        question(),
        options=Options(distinct=True),
    )
    assert (check.count("citation_validity_k"), check.count("citation_validity_n")) == (1, 2)
    assert [f.detail for f in check.findings] == ["cited OTHER_ONE, which was not retrieved"]


def test_it_supports_numbers_by_retrieved_or_expected_values_but_not_years():
    check = check_answer(
        answer("It was 41, then 44, then 50 and 50 again in 2021.", retrieved=(44.0,)), question()
    )
    # Every occurrence counts: 41, 44, 50, 50 (the year is read but not counted).
    assert (check.count("unsupported_numbers_k"), check.count("unsupported_numbers_n")) == (2, 4)
    assert [(n.number.text, n.counted, n.supported, n.matched) for n in check.numbers] == [
        ("41", True, True, 41.0),
        ("44", True, True, 44.0),
        ("50", True, False, None),
        ("50", True, False, None),
        ("2021", False, None, None),
    ]
    assert [f.detail for f in check.findings if f.kind == "unsupported"] == [
        "50 is neither a retrieved nor an expected value"
    ] * 2


def test_it_counts_a_repeated_figure_once_when_asked_for_distinct_counts():
    check = check_answer(
        answer("It was 41, then 44, then 50 and 50 again in 2021.", retrieved=(44.0,)),
        question(),
        options=Options(distinct=True),
    )
    assert (check.count("unsupported_numbers_k"), check.count("unsupported_numbers_n")) == (1, 3)
    assert [n.counted for n in check.numbers] == [True, True, True, False, False]


def test_it_supports_an_unsigned_figure_by_a_value_of_the_other_sign():
    check = check_answer(answer("Output fell by 2.5 points.", retrieved=(-2.5,)), question(values=()))
    assert (check.count("unsupported_numbers_k"), check.count("unsupported_numbers_n")) == (0, 1)
    [number] = check.numbers
    assert (number.supported, number.matched, number.sign_differs) == (True, -2.5, True)
    assert number.as_dict()["sign_differs"] is True
    same_sign = check_answer(answer("Output grew by 2.5 points.", retrieved=(2.5,)), question(values=()))
    assert same_sign.numbers[0].sign_differs is False


def test_it_scores_a_declined_answer_that_states_a_figure_at_both_levels():
    check = check_answer(answer("I cannot answer, but it may be 99.", declined=True), question("decline", ()))
    assert (check.count("unsupported_numbers_k"), check.count("unsupported_numbers_n")) == (1, 1)
    assert (check.count("unsupported_answers_k"), check.count("unsupported_answers_n")) == (1, 1)
    silent = check_answer(answer("I cannot answer.", declined=True), question("decline", ()))
    assert silent.count("unsupported_answers_n") == 0


def test_it_counts_questions_not_run_as_failures_in_n():
    rows, questions = running_example()
    questions = {
        **questions,
        "z01": {
            "question_id": "z01",
            "language": "en",
            "expected_behaviour": "answer",
            "expected_values": [1.0],
        },
        "z02": {
            "question_id": "z02",
            "language": "fr",
            "expected_behaviour": "decline",
            "expected_values": [],
        },
    }
    scores = score_run(rows, questions)
    assert (scores.answers, scores.not_run) == (8, 2)
    assert plain_counts(scores.slices)["all"]["numeric_accuracy"] == {"k": 5, "n": 7}
    assert plain_counts(scores.slices)["all"]["answer_rate"] == {"k": 6, "n": 7}
    assert plain_counts(scores.slices)["all"]["refusal_accuracy"] == {"k": 1, "n": 3}
    assert plain_counts(scores.slices)["language=fr"]["refusal_accuracy"] == {"k": 0, "n": 1}
    # Nothing is said about numbers or citations of an answer that does not exist.
    assert (
        plain_counts(scores.slices)["all"]["unsupported_numbers"]
        == EXPECTED_SLICES["all"]["unsupported_numbers"]
    )
    assert [(f.question_id, f.kind) for f in scores.findings[-2:]] == [("z01", "not_run"), ("z02", "not_run")]


def test_it_matches_values_with_math_isclose_defaults():
    close = check_answer(answer("41.00000000001"), question())
    far = check_answer(answer("41.0001"), question(values=(41.0,)))
    assert close.count("numeric_accuracy_k") == 1
    assert far.count("numeric_accuracy_k") == 0


def test_it_adds_up_chunks_to_the_whole():
    rows, questions = running_example()
    checks = [check_answer(row, questions[row["question_id"]]) for row in rows]
    assert merge_slice_counts(slice_counts(checks[:3]), slice_counts(checks[3:])) == slice_counts(checks)


def test_it_leaves_out_measures_with_no_denominator():
    rows, questions = running_example()
    fr_only = [row for row in rows if row["language"] == "fr"]
    assert (
        "refusal_accuracy"
        not in slice_counts([check_answer(row, questions[row["question_id"]]) for row in fr_only])["all"]
    )


def test_questions_naming_one_cluster_count_as_one_draw():
    rows, questions = running_example()
    # a01 and a02 share a passage; both expect an answer and both are right.
    for question_id in ("a01", "a02"):
        questions[question_id] = {**questions[question_id], "cluster": "passage-7"}
    numeric = score_run(rows, questions).slices["all"]["numeric_accuracy"]
    # By hand, clusters of numeric accuracy's six questions: the passage (2 of
    # 2), a03 (0 of 1), a04, a05, a07 (1 of 1 each): Σk² = 4 + 3, Σkn = 4 + 3, Σn² = 4 + 4.
    assert numeric == {"k": 5, "n": 6, "clusters": {"clusters": 5, "k2": 7, "kn": 7, "n2": 8}}
    # Without the cluster, each answer is its own: six clusters of one.
    plain = score_run(*running_example()).slices["all"]["numeric_accuracy"]
    assert plain["clusters"] == {"clusters": 6, "k2": 5, "kn": 5, "n2": 6}


def test_numeric_accuracy_does_not_apply_to_a_question_with_no_expected_number():
    # A popularity-like task: the reference is a word, the question set has no value.
    check = check_answer(answer("Yes, I would say that.", retrieved=()), question(values=()))
    assert (check.count("numeric_accuracy_k"), check.count("numeric_accuracy_n")) == (0, 0)
    assert (check.count("answer_rate_k"), check.count("answer_rate_n")) == (1, 1)
    assert [f.kind for f in check.findings] == []
    declined = check_answer(answer("I cannot say.", declined=True, retrieved=()), question(values=()))
    assert declined.count("numeric_accuracy_n") == 0
    assert [f.kind for f in declined.findings] == ["declined"]


def test_a_question_with_no_expected_number_that_was_not_run_fails_only_the_answer_rate():
    questions = {
        "p1": {"question_id": "p1", "language": "en", "expected_behaviour": "answer", "expected_values": []},
        "p2": {
            "question_id": "p2",
            "language": "en",
            "expected_behaviour": "answer",
            "expected_values": [41.0],
        },
    }
    failed = {**answer("", retrieved=()), "question_id": "p1", "status": "timeout", "status_reason": "30 s"}
    scores = score_run([failed], questions)
    assert plain_counts(scores.slices)["all"]["answer_rate"] == {"k": 0, "n": 2}
    assert plain_counts(scores.slices)["all"]["numeric_accuracy"] == {"k": 0, "n": 1}


def test_it_names_each_measure_that_does_not_apply_to_a_run_and_why():
    rows = [
        {**answer("Yes.", retrieved=()), "question_id": f"p{i}", "expected_behaviour": "answer"}
        for i in range(3)
    ]
    questions = {row["question_id"]: {**row, "expected_values": []} for row in rows}
    scores = score_run(rows, questions)
    assert "numeric_accuracy" not in scores.slices["all"]
    assert not_applicable(scores.slices["all"]) == {
        "numeric_accuracy": "no question has an expected number",
        "citation_validity": "no answer cited anything",
        "refusal_accuracy": "no question expected a refusal",
        "unsupported_numbers": "no figures in the answers",
    }
    assert not_applicable(score_run(*running_example()).slices["all"]) == {}


def test_it_reads_ordinals_but_does_not_count_them_as_figures():
    # The review of issue 26, item 14: "21st century" and "2nd time" are prose.
    check = check_answer(
        answer("In the 21st century, for the 2nd time, it reached 37.", retrieved=()),
        question(values=(37.0,)),
    )
    assert check.findings == []
    assert (check.count("unsupported_numbers_k"), check.count("unsupported_numbers_n")) == (0, 1)
    assert [(n.number.text, n.counted, n.supported) for n in check.numbers] == [
        ("21", False, None),
        ("2", False, None),
        ("37", True, True),
    ]
    assert check.numbers[0].as_dict()["ordinal"] is True


def test_an_ordinal_still_states_its_expected_value():
    check = check_answer(answer("It ranked 37th.", retrieved=()), question(values=(37.0,)))
    assert check.findings == []
    assert (check.count("numeric_accuracy_k"), check.count("numeric_accuracy_n")) == (1, 1)
    assert check.count("unsupported_numbers_n") == 0


def test_a_date_written_with_an_ordinal_day_states_no_number():
    check = check_answer(answer("On March 3rd, it was 37.", retrieved=()), question(values=(3.0,)))
    assert [n.number.text for n in check.numbers] == ["37"]
    assert [f.kind for f in check.findings] == ["numeric", "unsupported"]
