"""Strict verdicts (spec 003): one JSON object, exact types, nothing guessed from prose."""

import pytest

from scoring.judge.verdict import Boolean, Choice, ListOf, Rating, Text, VerdictError, parse_verdict

CLAIMS = {"claims": ListOf({"claim": Text(), "supported": Boolean()})}
RATING = {"score": Rating(1, 5)}


def refused(text, schema=RATING):
    with pytest.raises(VerdictError) as caught:
        parse_verdict(text, schema)
    assert caught.value.raw == text
    return caught.value.reason


def test_it_reads_one_object_alone_or_in_one_fenced_block():
    assert parse_verdict('{"score": 4, "reason": "ok"}', RATING) == {"score": 4, "reason": "ok"}
    assert parse_verdict('```json\n{"score": 2}\n```', RATING) == {"score": 2}
    assert parse_verdict('  ```\n{"score": 5}```  ', RATING) == {"score": 5}


def test_it_guesses_nothing_from_prose():
    assert (
        refused('The score is {"score": 4}')
        == "the verdict is not a JSON object (nothing is read from prose)"
    )
    assert refused("I'd rate it 4 of 5.") == "the verdict is not a JSON object (nothing is read from prose)"
    assert refused('```json\n{"score": 4}\n```\nHope this helps') == (
        "the verdict is not a JSON object (nothing is read from prose)"
    )
    assert refused('{"score": 4} {"score": 5}') == "the verdict is not one valid JSON object: Extra data"


def test_it_refuses_inexact_types():
    assert refused('{"score": 4.0}') == 'the verdict "score" must be an integer from 1 to 5, not 4.0'
    assert refused('{"score": "4"}') == 'the verdict "score" must be an integer from 1 to 5, not "4"'
    assert refused('{"score": true}') == 'the verdict "score" must be an integer from 1 to 5, not true'
    assert refused('{"score": 0}') == 'the verdict "score" must be from 1 to 5, not 0'
    assert refused('{"claims": [{"claim": "a", "supported": 1}]}', CLAIMS) == (
        'the verdict "claims"[0] "supported" must be true or false, not 1'
    )
    assert (
        refused('{"claims": {"claim": "a"}}', CLAIMS)
        == 'the verdict "claims" must be a list, not {"claim": "a"}'
    )
    assert refused('{"winner": "A"}', {"winner": Choice(("answer_a", "answer_b", "tie"))}) == (
        'the verdict "winner" must be one of "answer_a", "answer_b", "tie", not "A"'
    )


def test_it_refuses_duplicate_keys_nan_and_missing_fields():
    assert (
        refused('{"score": 4, "score": 5}')
        == 'the verdict is not one valid JSON object: the key "score" appears twice'
    )
    assert refused('{"score": NaN}') == (
        "the verdict is not one valid JSON object: NaN is not a number a verdict may hold"
    )
    assert refused('{"score": Infinity}') == (
        "the verdict is not one valid JSON object: Infinity is not a number a verdict may hold"
    )
    assert refused('{"reason": "good"}') == 'the verdict misses the field "score"'
    assert refused("[4]") == "the verdict is not a JSON object (nothing is read from prose)"


def test_it_returns_the_error_when_asked_to_record():
    error = parse_verdict("four", RATING, on_error="record")
    assert isinstance(error, VerdictError)
    assert (error.reason, error.raw) == (
        "the verdict is not a JSON object (nothing is read from prose)",
        "four",
    )
    with pytest.raises(ValueError, match='on_error is "raise" or "record"'):
        parse_verdict("{}", RATING, on_error="ignore")
