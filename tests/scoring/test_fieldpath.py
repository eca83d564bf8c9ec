"""Paths into nested records (scoring.fieldpath): the one lookup the QA
datasets and the imports share."""

import pytest

from scoring.fieldpath import EACH, MISSING, find, lookup, parse_path, root

# An ARC / OpenBookQA line as AI2 writes it.
ARC = {
    "id": "Mercury_7175875",
    "question": {
        "stem": "An astronomer observes that a planet rotates faster after a meteorite impact. Why?",
        "choices": [
            {"text": "Planetary density will decrease.", "label": "A"},
            {"text": "Planetary years will become longer.", "label": "B"},
        ],
    },
    "answerKey": "B",
}
# An lm-evaluation-harness --log_samples line, cut down.
LM_EVAL = {"doc_id": 0, "doc": {"question": "2+2?", "choices": ["3", "4"]}, "resps": [["4"], ["5"]]}


def test_it_parses_keys_indexes_and_every_item():
    assert parse_path("question.choices[].text") == ("question", "choices", EACH, "text")
    assert parse_path("resps[0][-1]") == ("resps", 0, -1)
    assert parse_path("doc.choices.2") == ("doc", "choices", "2")
    with pytest.raises(ValueError, match="it has an empty part"):
        parse_path("question..stem")
    with pytest.raises(ValueError, match="'choices\\[x\\]' is not a key with \\[index\\]"):
        parse_path("question.choices[x]")


def test_it_reaches_nested_keys_list_items_and_each_items_key():
    assert lookup(ARC, "question.stem") == ARC["question"]["stem"]
    assert lookup(ARC, "question.choices[].text") == [
        "Planetary density will decrease.",
        "Planetary years will become longer.",
    ]
    # A key naming a list of objects reaches into each.
    assert lookup(ARC, "question.choices.label") == ["A", "B"]
    assert lookup(ARC, "question.choices[1].label") == "B"
    assert lookup(LM_EVAL, "resps[0][0]") == "4"
    assert lookup(LM_EVAL, "doc.choices.1") == "4"
    assert lookup(LM_EVAL, "resps[-1][0]") == "5"


def test_it_prefers_a_key_spelt_as_the_path_and_reads_lists_held_as_text():
    assert lookup({"doc.id": "whole key", "doc": {"id": "nested"}}, "doc.id") == "whole key"
    # pandas writes a dict column to CSV as a Python literal.
    cell = {"choices": "{'text': ['red', 'blue'], 'label': ['A', 'B']}"}
    assert lookup(cell, "choices.text") == ["red", "blue"]
    assert lookup({"resps": '[["4"]]'}, "resps[0][0]") == "4"


def test_it_says_which_part_of_the_path_is_missing():
    assert find(ARC, "question.stemm") == (MISSING, "'question' has no 'stemm' (it has 'stem', 'choices')")
    assert find(ARC, "question.choices[5].text") == (MISSING, "'question.choices' has 2 items, no item [5]")
    assert find(ARC, "question.choices[].txt") == (
        MISSING,
        "'question.choices[0]' has no 'txt' (it has 'text', 'label')",
    )
    assert find(ARC, "answerKey.letter") == (MISSING, "'answerKey' is a text, not an object with 'letter'")
    assert find(ARC, "queston.stem") == (
        MISSING,
        "the record has no 'queston' (it has 'id', 'question', 'answerKey')",
    )
    assert lookup(ARC, "question.stemm", default=None) is None


def test_it_names_the_column_a_path_starts_at():
    assert root("question.choices[].text") == "question"
    assert root("resps[0][0]") == "resps"
    assert root("Answer") == "Answer"


def test_it_lists_the_paths_a_form_can_offer():
    from scoring.fieldpath import paths_in

    assert paths_in(LM_EVAL) == ["doc_id", "doc.question", "doc.choices", "resps", "resps[0]", "resps[0][0]"]
    assert all(lookup(LM_EVAL, path) is not MISSING for path in paths_in(LM_EVAL))
    assert paths_in(LM_EVAL, limit=2) == ["doc_id", "doc.question"]
