"""The fast scorer against the slow reference in tests/scoring/reference_scorer.py."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import synthetic
from scoring.measures import Options, plain_counts, score_run
from scoring.numbers import extract_numbers
from scoring.runner import score_file
from tests.scoring.reference_scorer import numbers_of, reference_score


def generated(seed: int, size: int = 1500):
    questions = synthetic.generate_question_set(questions=size, seed=seed)
    answers = synthetic.generate_run(question_set=questions, answers=size, seed=seed + 100)
    return answers, {q["question_id"]: q for q in questions}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_it_counts_generated_runs_as_the_reference_does(seed):
    answers, questions = generated(seed)
    assert plain_counts(score_run(answers, questions).slices) == reference_score(answers, questions)


def test_it_agrees_with_the_reference_with_options_and_other_slices():
    answers, questions = generated(4)
    fields = ("stratum", "split", "language")
    fast = score_run(
        answers,
        questions,
        slice_fields=fields,
        options=Options(rounding=True, scale_words=True, distinct=True),
    )
    slow = reference_score(
        answers, questions, slice_fields=fields, rounding=True, scale_words=True, distinct=True
    )
    assert plain_counts(fast.slices) == slow


def test_it_scores_a_file_alike_on_one_core_and_several(tmp_path):
    answers, questions = generated(5, size=3000)
    path = tmp_path / "run.jsonl"
    synthetic.write_jsonl(path, answers, header={"assistant_version": "a-1", "set_version": "s"})
    one = score_file(path, questions, chunk_bytes=300_000)
    two = score_file(path, questions, workers=2, chunk_bytes=300_000)
    assert one.slices == two.slices
    assert plain_counts(one.slices) == reference_score(answers, questions)
    assert [f.as_dict() for f in one.findings] == [f.as_dict() for f in two.findings]


FRAGMENTS = st.sampled_from(
    [
        "rate",
        "was",
        "in",
        "per 1,000",
        "per 100",
        "COVID-19",
        "Covid-19",
        "HLTH_U5_MORT",
        "(EDU_STATS_2024)",
        "2024-03-31",
        "about",
        "-",
        "–",
        " ",
        ".",
        ",",
        "%",
        "million",
        "milliers",
        "mil millones",
        "x",
        "fell by",
        "12ABCD",
        "v2",
        "1.2.3",
    ]
)


@st.composite
def number_text(draw):
    whole = draw(st.integers(min_value=0, max_value=9_999_999))
    grouper = draw(st.sampled_from(["", ",", ".", " ", "\u00a0", "\u202f", "\u2009", "'"]))
    digits = f"{whole:,}".replace(",", "\x00") if grouper else str(whole)
    digits = digits.replace("\x00", grouper)
    if draw(st.booleans()):
        digits += draw(st.sampled_from([".", ","])) + str(draw(st.integers(min_value=0, max_value=999)))
    return draw(st.sampled_from(["", "-", "\u2212"])) + digits


@settings(max_examples=int(__import__("os").environ.get("HYPOTHESIS_EXAMPLES", "400")), deadline=None)
@given(
    parts=st.lists(st.one_of(FRAGMENTS, number_text()), min_size=1, max_size=12),
    joiner=st.sampled_from([" ", "", " - "]),
    language=st.sampled_from(["en", "fr", "es", "de"]),
    scale=st.booleans(),
)
def test_it_reads_numbers_as_the_reference_does(parts, joiner, language, scale):
    text = joiner.join(parts)
    fast = [
        (n.text, list(n.readings), n.decimals, n.signed, n.is_year)
        for n in extract_numbers(text, language=language, scale_words=scale)
    ]
    slow = [
        (n["text"], n["values"], n["decimals"], n["signed"], n["year"])
        for n in numbers_of(text, language, scale)
    ]
    assert fast == slow
